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
    res = ppi_mean(Y, F_LAB, F_UNL, lam=1.0)
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
    res = ppi_mean(Y, F_LAB, F_UNL, lam=0.0)
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
        res = ppi_mean(y, f, f_unl)
        hits += res.ci_low <= 3.0 <= res.ci_high
        ratio.append((res.ci_high - res.ci_low) / (res.classical_ci_high - res.classical_ci_low))
    assert 0.92 <= hits / 300 <= 0.98, f"coverage {hits / 300:.3f}"
    assert np.mean(ratio) < 0.75  # a good judge narrows the interval
