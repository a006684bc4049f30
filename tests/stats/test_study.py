"""ADR-016's measures (``jurybox.stats.study``): known answers and small simulations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.stats import friedman
from jurybox.stats.study import concordance, variance_difference


def test_variance_difference_known_answer() -> None:
    # Units (columns) 0-1 belong to item "a", 2-3 to item "b"; variances with ddof 1:
    # dimension 2, 0 | 0.5, 0.5 -> items 1.0, 0.5; holistic 8, 0 | 2, 0 -> items 4.0, 1.0.
    dimension = [[1, 2, 1, 4], [3, 2, 2, 5]]
    holistic = [[1, 1, 1, 3], [5, 1, 3, 3]]
    res = variance_difference(dimension, holistic, ["a", "a", "b", "b"], n_bootstrap=200, rng=0)
    assert res.estimate == pytest.approx(((1.0 - 4.0) + (0.5 - 1.0)) / 2)
    assert (res.variance, res.holistic_variance) == (pytest.approx(0.75), pytest.approx(2.5))
    assert res.ratio == pytest.approx(0.3)
    assert (res.n_items, res.n_reviewers) == (2, 2)
    assert "BCa bootstrap over items" in res.method


def test_variance_difference_interval_is_scipys_bca_over_items() -> None:
    rng = np.random.default_rng(2)
    dim, hol = rng.normal(size=(3, 40)), rng.normal(size=(3, 40))
    res = variance_difference(dim, hol, n_bootstrap=500, rng=7)
    diffs = np.var(dim, axis=0, ddof=1) - np.var(hol, axis=0, ddof=1)
    ref = sps.bootstrap(
        (diffs,),
        np.mean,
        n_resamples=500,
        method="BCa",
        random_state=np.random.default_rng(7),
    )
    assert res.ci_low == pytest.approx(ref.confidence_interval.low)
    assert res.ci_high == pytest.approx(ref.confidence_interval.high)


def _panel(rng: np.random.Generator, n_items: int, noise_sd: float, true_sd: float) -> np.ndarray:
    """3 reviewers × (n_items × 2 responses): a shared true score plus reviewer noise."""
    truth = np.repeat(rng.normal(6, true_sd, size=n_items * 2)[None, :], 3, axis=0)
    return truth + rng.normal(0, noise_sd, size=truth.shape)


def _decisions(variance_ratio: float, true_sd: float = 1.5, sims: int = 60) -> list[str]:
    """Decisions at 40 items; the holistic noise variance is 1, its true scores' SD 1.5."""
    rng = np.random.default_rng(11)
    groups = np.repeat(np.arange(40), 2)
    out = []
    for _ in range(sims):
        holistic = _panel(rng, 40, 1.0, 1.5)
        dimension = _panel(rng, 40, variance_ratio**0.5, true_sd)
        res = variance_difference(dimension, holistic, groups, n_bootstrap=300, rng=rng)
        out.append(res.decision)
    return out


@pytest.mark.parametrize("true_sd", [1.5, 3.0])
def test_equal_variances_are_not_called_lower(true_sd: float) -> None:
    # A wider spread of true scores raised alpha, which the former alpha rule read as "lower".
    decisions = _decisions(1.0, true_sd)
    assert decisions.count("lower") <= 5  # about 2.5 % expected (one side of a 95 % interval)


@pytest.mark.parametrize("true_sd", [1.5, 0.6])
def test_half_the_variance_is_called_lower(true_sd: float) -> None:
    # A narrower spread lowered alpha, which the former alpha rule read as "higher".
    decisions = _decisions(0.5, true_sd)
    assert decisions.count("lower") >= 50
    assert "higher" not in decisions


def test_variance_difference_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="same units"):
        variance_difference(np.ones((3, 4)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="at least 2 reviewers"):
        variance_difference(np.ones((1, 4)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="at least 2 items"):
        variance_difference(np.ones((2, 4)), np.ones((2, 4)), [0, 0, 0, 0])


def test_concordance_w_is_the_friedman_w_and_its_null_is_one_over_m() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(1, 6, size=(4, 15)).astype(float)  # ties included
    res = concordance(scores, n_permutations=199, rng=0)
    assert res.kendall_w == pytest.approx(friedman(scores).kendall_w)
    assert res.friedman_p_value == pytest.approx(friedman(scores).p_value)
    assert res.null_expectation == pytest.approx(1 / 4)
    assert res.mean_spearman == pytest.approx((4 * res.kendall_w - 1) / 3)


def test_concordance_under_no_agreement_averages_one_over_m_and_rejects_at_alpha() -> None:
    rng = np.random.default_rng(4)
    results = [
        concordance(rng.normal(size=(3, 12)), n_permutations=199, rng=rng) for _ in range(300)
    ]
    mean_w = np.mean([r.kendall_w for r in results])
    assert mean_w == pytest.approx(1 / 3, abs=0.02)  # not 0: chance agreement of 3 judges
    rejected = np.mean([r.decision == "above chance" for r in results])
    assert rejected <= 0.09


def test_concordance_decides_above_chance_when_judges_agree() -> None:
    rng = np.random.default_rng(5)
    truth = rng.normal(size=20)
    res = concordance(truth + rng.normal(0, 0.5, size=(3, 20)), rng=1)
    assert res.decision == "above chance" and res.p_value < 0.001
    identical = concordance(np.tile(np.arange(5.0), (3, 1)), rng=1)
    assert identical.kendall_w == pytest.approx(1.0)


def test_concordance_refuses_degenerate_input() -> None:
    with pytest.raises(ValueError, match="2 judges × 3 units"):
        concordance(np.ones((1, 5)))
    with pytest.raises(ValueError, match="same score"):
        concordance(np.ones((3, 5)))
