"""PPI++ mean: hand-computed values, the classical fallback, seeded coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.stats import ppi_mean

Y = np.array([1.0, 2.0, 3.0, 4.0])
F_LAB = np.array([1.5, 2.5, 3.0, 5.0])
F_UNL = np.array([2.0, 3.0, 4.0, 5.0, 6.0, 2.5, 3.5, 4.5])


def test_plain_ppi_by_hand() -> None:
    """λ = 1: θ̂ = mean Y + mean f_unl − mean f_lab = 2.5 + 3.8125 − 3.0 = 3.3125."""
    res = ppi_mean(Y, F_LAB, F_UNL, lam=1.0, interval="clt")
    assert res.estimate == pytest.approx(3.3125)
    se = np.sqrt(np.var(F_UNL, ddof=1) / 8 + np.var(Y - F_LAB, ddof=1) / 4)
    assert res.se == pytest.approx(se)
    t = sps.t.ppf(0.975, 3)
    assert (res.ci_low, res.ci_high) == pytest.approx((3.3125 - t * se, 3.3125 + t * se))
    assert res.judge_mean == pytest.approx(3.8125)


def test_power_tuned_lambda_formula() -> None:
    """λ = Cov(Y, f) / ((1 + n/N) Var(f pooled)), clipped to [0, 1]."""
    res = ppi_mean(Y, F_LAB, F_UNL)
    expected = np.cov(Y, F_LAB)[0, 1] / ((1 + 4 / 8) * np.var(np.r_[F_LAB, F_UNL], ddof=1))
    assert res.lam == pytest.approx(min(1.0, expected))
    assert "power-tuned" in res.method


def test_lambda_zero_is_the_classical_mean() -> None:
    res = ppi_mean(Y, F_LAB, F_UNL, lam=0.0, interval="clt")
    assert res.estimate == pytest.approx(2.5) == pytest.approx(res.classical_estimate)
    assert (res.ci_low, res.ci_high) == pytest.approx((res.classical_ci_low, res.classical_ci_high))


def test_ppi_interval_coverage_and_gain() -> None:
    """300 seeded data sets (n = 40 human, N = 2000 judge, judge biased +0.7, r = 0.8)."""
    rng = np.random.default_rng(20261123)
    hits, ratio = 0, []
    for _ in range(300):
        y, y_unl = rng.normal(3.0, 1.0, 40), rng.normal(3.0, 1.0, 2000)
        f = y + 0.7 + rng.normal(0, 0.75, 40)
        f_unl = y_unl + 0.7 + rng.normal(0, 0.75, 2000)
        res = ppi_mean(y, f, f_unl, rng=rng)
        hits += res.ci_low <= 3.0 <= res.ci_high
        ratio.append((res.ci_high - res.ci_low) / (res.classical_ci_high - res.classical_ci_low))
    assert 0.92 <= hits / 300 <= 0.98, f"coverage {hits / 300:.3f}"
    assert np.mean(ratio) < 0.75  # a good judge narrows the interval


SKEWED = np.array([0.05, 0.1, 0.2, 0.35, 0.3])  # human scores 1..5


def _skewed(rng: np.random.Generator, n: int, right: float) -> np.ndarray:
    """Scores 1-5 drawn from SKEWED and a judge right with probability ``right``, else off by
    one (kept on the scale)."""
    y = rng.choice(np.arange(1, 6), n, p=SKEWED).astype(float)
    off = np.clip(y + rng.choice([-1.0, 1.0], n), 1, 5)
    return np.column_stack([y, np.where(rng.random(n) < right, y, off)])


@pytest.mark.parametrize("n", [10, 20])
def test_small_labelled_sets_on_skewed_scores_keep_their_coverage(n: int) -> None:
    """Issue 33: with 10-30 labelled items on skewed 1-5 scores the CLT interval covered
    0.906-0.928; the bootstrap of both sets stays at 0.93 or more (400 data sets, SE 0.011)."""
    rng = np.random.default_rng([33, n])
    truth = float(SKEWED @ np.arange(1, 6))
    boot = clt = done = 0
    for _ in range(400):
        lab, unl = _skewed(rng, n, 0.6), _skewed(rng, 300, 0.6)
        if np.ptp(lab[:, 0]) == 0:
            continue  # every human score equal: no interval (ValueError), not a miss
        done += 1
        res = ppi_mean(lab[:, 0], lab[:, 1], unl[:, 1], rng=rng)
        old = ppi_mean(lab[:, 0], lab[:, 1], unl[:, 1], interval="clt")
        boot += res.ci_low <= truth <= res.ci_high
        clt += old.ci_low <= truth <= old.ci_high
    assert boot / done >= 0.93, (boot / done, clt / done)
    assert clt / done < boot / done


def test_bootstrap_resamples_the_unlabelled_scores_by_their_counts() -> None:
    """Few distinct judge scores: the unlabelled set is resampled exactly (multinomial counts
    over the distinct values); a seed gives the same interval, another seed nearly the same."""
    rng = np.random.default_rng(8)
    lab, unl = _skewed(rng, 25, 0.7), _skewed(rng, 500, 0.7)
    one = ppi_mean(lab[:, 0], lab[:, 1], unl[:, 1], rng=1)
    again = ppi_mean(lab[:, 0], lab[:, 1], unl[:, 1], rng=1)
    other = ppi_mean(lab[:, 0], lab[:, 1], unl[:, 1], rng=2)
    assert (one.ci_low, one.ci_high) == (again.ci_low, again.ci_high)
    assert (one.ci_low, one.ci_high) == pytest.approx((other.ci_low, other.ci_high), abs=0.03)
    assert one.ci_low < one.estimate < one.ci_high and "bootstrap" in one.method
