"""Paired comparisons: Hodges–Lehmann against R and scipy, the Bonett–Price paired interval,
the paired t, ranking stability; coverage of the two closed-form intervals."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.stats import paired
from jurybox.stats.paired import (
    hodges_lehmann,
    kendall_tau_difference,
    kendall_tau_panel,
    mean_difference,
    paired_proportion_difference,
    paired_share_difference,
)

# R: example(wilcox.test), Hollander & Wolfe (1973) p. 29, depression scale before/after:
# wilcox.test(x, y, paired = TRUE) -> V = 40, p = 0.03906, (pseudo)median 0.46.
HW_X = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30]
HW_Y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29]


def test_hodges_lehmann_estimate_matches_r() -> None:
    res = hodges_lehmann(HW_X, HW_Y)
    assert res.estimate == pytest.approx(0.46, abs=5e-4)
    assert "exact" in res.method
    assert sps.wilcoxon(HW_X, HW_Y, method="exact").pvalue == pytest.approx(0.03906, abs=5e-6)


def test_hodges_lehmann_interval_inverts_scipys_exact_wilcoxon_test() -> None:
    """The interval holds exactly the shifts the exact two-sided test does not reject at 5%:
    just inside either limit scipy's p > 0.05, just outside p < 0.05."""
    d = np.subtract(HW_X, HW_Y)
    res = hodges_lehmann(d)
    eps = 1e-6

    def p_at(shift: float) -> float:
        return float(sps.wilcoxon(d - shift, method="exact").pvalue)

    assert p_at(res.ci_low + eps) > 0.05 > p_at(res.ci_low - eps)
    assert p_at(res.ci_high - eps) > 0.05 > p_at(res.ci_high + eps)


def test_hodges_lehmann_uses_the_normal_rank_with_ties() -> None:
    res = hodges_lehmann([1, 2, 2, 3, 3, 3, 4, 0, 1, 2], [0] * 10)
    assert "normal approximation" in res.method
    assert res.ci_low <= res.estimate <= res.ci_high


def test_hodges_lehmann_coverage() -> None:
    """Exact interval on 12 continuous differences (shift 0.5): coverage ≥ 0.95 (the exact
    interval's achieved level is 0.958 at n = 12), within Monte-Carlo noise."""
    rng = np.random.default_rng(11)
    results = [hodges_lehmann(rng.standard_t(4, 12) + 0.5) for _ in range(1500)]
    hits = [r.ci_low <= 0.5 <= r.ci_high for r in results]
    assert 0.94 <= np.mean(hits) <= 0.975


def test_mean_difference_is_scipy_paired_t() -> None:
    res = mean_difference(HW_X, HW_Y)
    ref = sps.ttest_rel(HW_X, HW_Y)
    low, high = ref.confidence_interval(0.95)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert (res.ci_low, res.ci_high) == pytest.approx((low, high), rel=1e-12)
    with pytest.raises(ValueError, match="same"):
        mean_difference([1, 2, 3], [0, 1, 2])


def test_paired_difference_counts_and_estimate() -> None:
    x = [1, 1, 1, 0, 0, 1, 0, 1]
    y = [1, 0, 1, 1, 1, 1, 0, 1]
    res = paired_proportion_difference(x, y)
    assert (res.n_x_only, res.n_y_only, res.n) == (1, 2, 8)
    assert res.estimate == pytest.approx(1 / 8)
    assert (res.p_x, res.p_y) == (5 / 8, 6 / 8)
    assert res.ci_low < res.estimate < res.ci_high
    assert "Bonett-Price" in res.method


def test_paired_difference_with_no_change_keeps_a_real_width() -> None:
    """No unit changed in 40: the interval still spans about ±0.066 (not a point at 0)."""
    res = paired_proportion_difference([1] * 16 + [0] * 24, [1] * 16 + [0] * 24)
    assert res.estimate == 0.0
    assert res.ci_low == pytest.approx(-res.ci_high)
    assert 0.05 < res.ci_high < 0.08


# (cells both, x only, y only, neither), n: typical and rare discordance, one-directional change
COVERAGE_GRID = [
    ((0.30, 0.10, 0.15, 0.45), 80),
    ((0.40, 0.01, 0.03, 0.56), 200),
    ((0.35, 0.02, 0.04, 0.59), 40),
    ((0.50, 0.00, 0.03, 0.47), 30),
]


@pytest.mark.parametrize(("cells", "n"), COVERAGE_GRID)
def test_paired_difference_coverage(cells: tuple[float, ...], n: int) -> None:
    """Multinomial paired tables: coverage ≥ 0.93 everywhere, in [0.93, 0.97] at the typical
    design (80 units, 25% discordant); conservative (up to 1.0) when discordance is rare."""
    rng = np.random.default_rng(5)
    truth = cells[2] - cells[1]
    hits = 0
    sims = 2000
    for both, x_only, y_only, neither in rng.multinomial(n, cells, size=sims):
        x = np.repeat([True, True, False, False], [both, x_only, y_only, neither])
        y = np.repeat([True, False, True, False], [both, x_only, y_only, neither])
        res = paired_proportion_difference(x, y)
        hits += res.ci_low <= truth <= res.ci_high
    coverage = hits / sims
    assert coverage >= 0.93
    if n == 80:
        assert coverage <= 0.97


def test_share_difference_is_bonett_price_with_one_judgment_per_item() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.random(40) < 0.6, rng.random(40) < 0.7
    items = paired_share_difference(x.astype(float), y.astype(float))
    units = paired_proportion_difference(x, y)
    assert (items.estimate, items.ci_low, items.ci_high) == pytest.approx(
        (units.estimate, units.ci_low, units.ci_high)
    )
    assert (items.n_x_higher, items.n_y_higher) == (units.n_x_only, units.n_y_only)


def _orders(rng: np.random.Generator, items: int, p: float, rho: float) -> np.ndarray:
    """items × 2 orders, each right with probability p, sharing one draw with probability rho."""
    shared = rng.random(items) < p
    own = rng.random((items, 2)) < p
    return np.where(rng.random((items, 2)) < rho, shared[:, None], own)


Design = tuple[int, float, float, float, float]


def share_coverage(design: Design, sims: int) -> tuple[float, float]:
    """(adjusted Wald over items, paired t over items) coverage; both orders of every item,
    correlated rho; run B keeps run A's judgment with probability s, else judges afresh at p_b.
    An undefined t interval (every item's difference equal) counts as a miss."""
    items, p_a, p_b, s, rho = design
    rng = np.random.default_rng(11)
    truth = (1 - s) * (p_b - p_a)
    hits = np.zeros(2)
    for _ in range(sims):
        a = _orders(rng, items, p_a, rho)
        b = np.where(rng.random((items, 2)) < s, a, _orders(rng, items, p_b, rho))
        x, y = a.mean(axis=1), b.mean(axis=1)
        res = paired_share_difference(x, y)
        hits[0] += res.ci_low <= truth <= res.ci_high
        if np.ptp(y - x) > 0:
            t = sps.ttest_1samp(y - x, 0.0).confidence_interval(0.95)
            hits[1] += t.low <= truth <= t.high
    return hits[0] / sims, hits[1] / sims


# items, accuracy A, accuracy of B's fresh judgments, share B keeps A's judgment, within-item rho
SHARE_GRID = [
    (20, 0.6, 0.8, 0.5, 0.5),
    (20, 0.8, 0.8, 0.95, 0.5),  # few judgments change: the usual case between two runs
    (30, 0.7, 1.0, 0.9, 0.5),
    (50, 0.7, 0.8, 0.6, 0.5),
    (100, 0.7, 0.75, 0.5, 0.3),
    (40, 0.6, 0.8, 0.7, 1.0),
]


@pytest.mark.parametrize("design", SHARE_GRID)
def test_share_difference_coverage_over_items(design: Design) -> None:
    """Correlated orders: ≥ 0.95 everywhere; the paired t over items misses where few change."""
    adjusted, t = share_coverage(design, 1000)
    assert adjusted >= 0.95
    if design[3] >= 0.9:
        assert t < 0.85


def test_share_difference_needs_shares() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        paired_share_difference([0.5, 1.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="paired"):
        paired_share_difference([0.5], [0.5, 0.5])


def test_kendall_tau_panel_is_the_mean_pairwise_tau() -> None:
    rng = np.random.default_rng(2)
    truth = rng.normal(size=30)
    scores = np.round(truth + rng.normal(scale=0.7, size=(3, 30)), 1)
    res = kendall_tau_panel(scores, n_bootstrap=300, rng=4)
    expected = np.mean(
        [
            sps.kendalltau(scores[a], scores[b]).statistic
            for a, b in itertools.combinations(range(3), 2)
        ]
    )
    assert res.estimate == pytest.approx(expected)
    assert res.ci_low < res.estimate < res.ci_high
    assert (res.n_judges, res.n_units) == (3, 30)


@pytest.mark.parametrize("limit", [2000, 5])
def test_bootstrap_tau_replicates_equal_scipy_on_the_resample(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quadratic-form replicates (and the large-panel fallback) are scipy's tau-b of the
    resampled units, ties within a copied unit included."""
    monkeypatch.setattr(paired, "_QUADRATIC_MAX", limit)
    rng = np.random.default_rng(6)
    scores = np.round(rng.normal(size=(3, 25)) * 2) / 2  # ties on purpose
    weights = paired._unit_weights(rng, 25, 4)
    fast = paired._tau_replicates(scores, weights)
    for w, value in zip(weights, fast, strict=True):
        sample = scores[:, np.repeat(np.arange(25), w.astype(int))]
        assert value == pytest.approx(paired._mean_tau(sample), rel=1e-10)


def test_kendall_tau_difference_of_a_run_with_itself_is_zero() -> None:
    scores = np.array([[1, 2, 3, 4, 5, 6], [2, 1, 3, 5, 4, 6]], float)
    res = kendall_tau_difference(scores, scores, n_bootstrap=200, rng=0)
    assert res.estimate == 0.0
    assert res.ci_low == res.ci_high == 0.0


def test_kendall_tau_difference_sees_a_noisier_condition() -> None:
    rng = np.random.default_rng(8)
    truth = rng.normal(size=60)
    tight = truth + rng.normal(scale=0.3, size=(3, 60))
    loose = truth + rng.normal(scale=2.0, size=(3, 60))
    res = kendall_tau_difference(loose, tight, n_bootstrap=300, rng=1)
    assert res.ci_low > 0  # the tight condition ranks more alike


def test_ranking_needs_variation() -> None:
    with pytest.raises(ValueError, match="same score"):
        kendall_tau_panel([[1, 1, 1, 1], [1, 2, 3, 4]], n_bootstrap=200)
    with pytest.raises(ValueError, match="2 judges"):
        kendall_tau_panel([[1, 2, 3, 4]], n_bootstrap=200)


@pytest.mark.slow
def test_ranking_stability_interval_coverage() -> None:
    """Three judges = truth + N(0, 1) noise: pairwise correlation 1/2, population tau-b
    (2/π)·asin(1/2) = 1/3. Percentile bootstrap at 30 units covered 0.96 (400 runs) and 0.935 at
    80; the paired difference (noise 1 vs 0.5, 60 units) 0.95. Checked here at 30 units."""
    rng = np.random.default_rng(1)
    sims, hits = 300, 0
    for _ in range(sims):
        truth = rng.normal(size=30)
        res = kendall_tau_panel(truth + rng.normal(size=(3, 30)), n_bootstrap=500, rng=rng)
        hits += res.ci_low <= 1 / 3 <= res.ci_high
    assert 0.93 <= hits / sims <= 0.98
