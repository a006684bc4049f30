"""Tests and effect sizes against published values and library output."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.stats import (
    binomial_test,
    cohens_d_paired,
    holm,
    kruskal_wallis,
    mcnemar,
    rank_biserial,
    tost_paired,
    wilcoxon_signed_rank,
)

# Darwin's corn: height differences (cross- minus self-fertilised), as in the SciPy docs.
DARWIN = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]


def test_wilcoxon_darwin_exact() -> None:
    res = wilcoxon_signed_rank(DARWIN)
    assert res.statistic == 24.0
    assert res.p_value == pytest.approx(0.041259765625, abs=1e-15)
    assert res.method.startswith("exact") and "auto" in res.method
    assert res.zero_method == "wilcox" and res.z is None and res.n == 15


def test_wilcoxon_darwin_greater() -> None:
    res = wilcoxon_signed_rank(DARWIN, alternative="greater")
    assert res.statistic == 96.0
    assert res.p_value == pytest.approx(0.0206298828125, abs=1e-15)


def test_wilcoxon_darwin_normal_approximation() -> None:
    res = wilcoxon_signed_rank(DARWIN, method="asymptotic")
    assert res.p_value == pytest.approx(0.04088813291185591, rel=1e-12)
    assert res.z is not None and res.z < 0
    assert "normal approximation" in res.method and not res.correction


def test_wilcoxon_paired_form_equals_differences() -> None:
    y = np.arange(15.0) * 3
    x = y + np.array(DARWIN)
    assert wilcoxon_signed_rank(x, y).p_value == wilcoxon_signed_rank(DARWIN).p_value


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
def test_wilcoxon_zero_and_tie_handling_is_recorded(zero_method: str) -> None:
    d = [0, 0, 1, 2, 2, 3, -1, 4, 5, 6]
    res = wilcoxon_signed_rank(d, zero_method=zero_method)  # type: ignore[arg-type]
    expected = sps.wilcoxon(d, zero_method=zero_method, method=sps.PermutationMethod())
    assert res.p_value == pytest.approx(expected.pvalue)
    assert res.zero_method == zero_method and res.n_zero == 2
    assert "permutation" in res.method and "ties/zeros" in res.method


def test_wilcoxon_large_sample_with_ties_is_asymptotic() -> None:
    d = np.tile([1, 2, 2, -1, 3], 12)
    res = wilcoxon_signed_rank(d, correction=True)
    assert "normal approximation" in res.method and "continuity" in res.method
    assert res.p_value == pytest.approx(sps.wilcoxon(d, correction=True).pvalue)


def test_rank_biserial_darwin() -> None:
    """Kerby (2014): r = (T+ - T-) / (T+ + T-); Darwin's corn T+ = 96, T- = 24 -> 0.6."""
    res = rank_biserial(DARWIN)
    assert (res.t_plus, res.t_minus) == (96.0, 24.0)
    assert res.estimate == pytest.approx(0.6)
    # equivalently 2 * T+ / S - 1 with scipy's one-sided statistic T+
    s = 15 * 16 / 2
    assert res.estimate == pytest.approx(2 * sps.wilcoxon(DARWIN, alternative="greater")[0] / s - 1)


def test_rank_biserial_zero_methods() -> None:
    d = [0, 1, -2, 3, 4]
    wil, pratt = rank_biserial(d), rank_biserial(d, zero_method="pratt")
    assert wil.estimate == pytest.approx((1 + 3 + 4 - 2) / 10)
    assert pratt.t_plus == 2 + 4 + 5 and pratt.t_minus == 3  # zero holds rank 1
    assert wil.n_zero == pratt.n_zero == 1


def test_cohens_d_paired_matches_t_statistic() -> None:
    """Lakens (2013), eq. 7: d_z = t / sqrt(n), with t from scipy.stats.ttest_rel."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=25)
    y = x - rng.normal(0.4, 1.0, 25)
    res = cohens_d_paired(x, y)
    assert res.estimate == pytest.approx(sps.ttest_rel(x, y).statistic / np.sqrt(25))
    # the interval inverts the noncentral t: t_obs sits at the 97.5% / 2.5% quantiles
    t_obs = res.estimate * 5
    assert sps.nct.cdf(t_obs, 24, res.ci_low * 5) == pytest.approx(0.975, abs=1e-8)
    assert sps.nct.cdf(t_obs, 24, res.ci_high * 5) == pytest.approx(0.025, abs=1e-8)
    assert res.ci_low < res.estimate < res.ci_high


def test_cohens_d_interval_far_from_zero() -> None:
    x = np.array([10.0, 11.2, 12.1, 9.8, 10.5, 11.9, 10.7, 12.3])
    res = cohens_d_paired(x, x - np.array([3.1, 2.9, 3.3, 2.8, 3.0, 3.4, 2.7, 3.2]))
    assert res.estimate > 10 and np.isfinite([res.ci_low, res.ci_high]).all()


def test_tost_paired_against_manual_t_tests() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(5, 1, 40)
    y = x + rng.normal(0.05, 0.5, 40)
    res = tost_paired(x, y, 0.3)
    d = x - y
    se = d.std(ddof=1) / np.sqrt(40)
    assert res.t_lower == pytest.approx((d.mean() + 0.3) / se)
    assert res.p_lower == pytest.approx(sps.t.sf((d.mean() + 0.3) / se, 39))
    assert res.p_upper == pytest.approx(sps.t.cdf((d.mean() - 0.3) / se, 39))
    assert res.p_value == max(res.p_lower, res.p_upper)
    # equivalence at alpha <=> the 90% interval lies inside the margin
    inside = res.ci_low > -0.3 and res.ci_high < 0.3
    assert res.equivalent == inside
    assert (res.margin_low, res.margin_high) == (-0.3, 0.3)


def test_tost_asymmetric_margin() -> None:
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    y = [1.1, 1.8, 3.2, 4.1, 4.7]
    res = tost_paired(x, y, (-0.5, 1.0))
    assert (res.margin_low, res.margin_high) == (-0.5, 1.0)


@pytest.mark.parametrize(
    ("method", "p"),
    [("exact", 0.070), ("mid-p", 0.039), ("asymptotic", 0.034)],
)
def test_mcnemar_fagerland_example(method: str, p: float) -> None:
    """Fagerland, Lydersen & Laake (2013), BMC MRM 13:91, Table 2 (b = 1, c = 7):
    exact conditional p = 0.070, mid-p = 0.039, asymptotic (uncorrected) = 0.034."""
    res = mcnemar([[10, 1], [7, 3]], method)  # type: ignore[arg-type]
    assert round(res.p_value, 3) == p
    assert (res.b, res.c, res.n_discordant) == (1, 7, 8)


def test_mcnemar_exact_values() -> None:
    assert mcnemar([[5, 1], [7, 5]]).p_value == pytest.approx(18 / 256)
    assert mcnemar([[5, 1], [7, 5]], "mid-p").p_value == pytest.approx(10 / 256)
    corrected = mcnemar([[5, 1], [7, 5]], "asymptotic", correction=True)
    assert corrected.statistic == pytest.approx((abs(1 - 7) - 1) ** 2 / 8)


def test_kruskal_scipy_docs() -> None:
    """scipy.stats.kruskal docs: H = 0.2727..., p = 0.6015...; and 7.0, p = 0.0302 with ties."""
    res = kruskal_wallis([1, 3, 5, 7, 9], [2, 4, 6, 8, 10])
    assert res.statistic == pytest.approx(0.2727272727272734)
    assert res.p_value == pytest.approx(0.6015081344405895)
    assert res.epsilon_squared == pytest.approx(res.statistic / 9)
    tied = kruskal_wallis([1, 1, 1], [2, 2, 2], [2, 2])
    assert tied.statistic == pytest.approx(7.0) and tied.p_value == pytest.approx(0.0301973834)


def test_binomial_test_first_position() -> None:
    res = binomial_test(60, 100)
    assert res.p_value == pytest.approx(sps.binomtest(60, 100).pvalue)
    assert res.proportion == 0.6 and res.ci_low < 0.6 < res.ci_high
    one_sided = binomial_test(60, 100, alternative="greater")
    assert one_sided.p_value == pytest.approx(sps.binom.sf(59, 100, 0.5))
    assert one_sided.ci_high == 1.0


def test_holm_hand_computed() -> None:
    """Holm (1979): sorted p * (m - rank), made monotone: 0.01*4, 0.03*3, 0.04*2, 0.2*1."""
    res = holm([0.01, 0.04, 0.03, 0.2])
    assert res.adjusted == pytest.approx((0.04, 0.09, 0.09, 0.2))
    assert res.reject == (True, False, False, False)


@pytest.mark.parametrize("seed", range(20))
def test_holm_matches_statsmodels(seed: int) -> None:
    """Random families, including ties, a single value, zeros, ones and values at alpha / k."""
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(seed)
    size = 1 if seed == 0 else int(rng.integers(2, 60))
    p = rng.beta(0.4, 1.5, size=size)
    if size > 3:
        p[rng.integers(0, size, size=size // 3)] = p[0]  # ties
        p[1], p[2] = 0.0, 1.0
        p[3] = 0.05 / size  # exactly at the first threshold
    for alpha in (0.05, 0.2):
        res = holm(p, alpha=alpha)
        reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
        np.testing.assert_allclose(res.adjusted, adjusted, rtol=0, atol=1e-12)
        assert res.reject == tuple(bool(r) for r in reject)


@pytest.mark.parametrize(("b", "c"), [(3, 3), (0, 1), (4, 5), (10, 2)])
def test_mcnemar_mid_p_is_twice_the_smaller_tail_less_the_point(b: int, c: int) -> None:
    """mid-p = 2·P(X < k) + P(X = k), k = min(b, c), X ~ Bin(b + c, ½) (Fagerland et al. 2013);
    with b = c it is 1 (the exact p, clipped at 1, less the point probability was not)."""
    k, m = min(b, c), b + c
    want = min(1.0, 2 * sps.binom.cdf(k - 1, m, 0.5) + sps.binom.pmf(k, m, 0.5))
    assert mcnemar([[5, b], [c, 5]], "mid-p").p_value == pytest.approx(want)
    if b == c:
        assert mcnemar([[5, b], [c, 5]], "mid-p").p_value == pytest.approx(1.0)


def test_scipy_floor_admits_only_versions_whose_wilcoxon_paths_work() -> None:
    """scipy 1.12 knows neither method="asymptotic" nor a PermutationMethod for wilcoxon, 1.13
    and 1.14 not the former (their name was "approx"); 1.15.0 passes tests/stats (run by hand
    in fresh virtualenvs with scipy 1.12.0, 1.13.1, 1.14.1 and 1.15.0). The declared floor
    must not admit the broken ones."""
    import re
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    (spec,) = [d for d in project["project"]["dependencies"] if d.startswith("scipy")]
    floor = re.fullmatch(r"scipy>=(\d+)\.(\d+)(?:\.\d+)?", spec)
    assert floor is not None, spec
    assert (int(floor[1]), int(floor[2])) >= (1, 15), spec
    result = sps.wilcoxon([1.0, -2.0, 3.0, 4.5, 5.0, 6.0], method="asymptotic")
    assert 0 < result.pvalue < 1
