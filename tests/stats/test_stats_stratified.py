"""Stratified proportion: values by hand, the census, bad input, and seeded coverage."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats import stratified_proportion

VALUES = np.array([1.0, 1.0, 0.0, 1.0, 0.5, 1.0, 1.0])
STRATA = np.array(["c", "c", "c", "c", "s", "s", "s"], dtype=object)
SIZES = {"c": 10, "s": 30}


def test_estimate_and_interval_by_hand() -> None:
    """Σ W_h ȳ_h with W = (1/4, 3/4); Jeffreys-smoothed variances; Wilson at n_eff·(z/t)²."""
    res = stratified_proportion(VALUES, STRATA, SIZES)
    assert res.estimate == pytest.approx(0.25 * 0.75 + 0.75 * (2.5 / 3))
    variance = smoothed = 0.0
    for part, size in ((VALUES[:4], 10), (VALUES[4:], 30)):
        weight, n = size / 40, len(part)
        centre = (part.sum() + 0.5) / (n + 1)
        spread = (np.sum((part - centre) ** 2) + 0.5 * centre**2 + 0.5 * (1 - centre) ** 2) / n
        variance += weight**2 * (1 - n / size) * spread / n
        smoothed += weight * centre
    assert res.se == pytest.approx(np.sqrt(variance))
    shrink = (sps.norm.ppf(0.975) / sps.t.ppf(0.975, 7 - 2)) ** 2
    n_eff = smoothed * (1 - smoothed) / variance * shrink
    assert res.n_effective == pytest.approx(n_eff)
    low, high = proportion_confint(res.estimate * n_eff, n_eff, method="wilson")
    assert (res.ci_low, res.ci_high) == pytest.approx((low, high))
    assert res.n_by_stratum == {"c": 4, "s": 3} and res.n == 7


def test_a_stratum_whose_labels_all_agree_keeps_its_uncertainty() -> None:
    """Ten correct labels of a settled stratum do not make the interval a point."""
    res = stratified_proportion(np.ones(10), np.array(["s"] * 10, dtype=object), {"s": 500})
    assert res.estimate == 1.0
    assert 0.6 < res.ci_low < 0.9 and res.ci_high == 1.0


def test_the_census_has_no_sampling_error() -> None:
    res = stratified_proportion(VALUES[:4], STRATA[:4], {"c": 4})
    assert res.estimate == res.ci_low == res.ci_high == pytest.approx(0.75)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="no sampled unit"):
        stratified_proportion([1.0], ["c"], {"c": 5, "s": 5})
    with pytest.raises(ValueError, match="no size"):
        stratified_proportion([1.0], ["x"], {"c": 5})
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        stratified_proportion([1.5], ["c"], {"c": 5})
    with pytest.raises(ValueError, match="N = 1"):
        stratified_proportion([1.0, 0.0], ["c", "c"], {"c": 1})
    with pytest.raises(ValueError, match="whole number"):
        stratified_proportion([1.0], ["c"], {"c": 2.5})  # type: ignore[dict-item]


def _draw(rng: np.random.Generator, y: np.ndarray, strata: np.ndarray, n: dict[str, int]) -> Any:
    picks = [rng.choice(np.flatnonzero(strata == s), k, replace=False) for s, k in n.items()]
    return np.concatenate(picks)


def test_coverage_with_oversampled_contested_items() -> None:
    """400 seeded samples, contested items (a fifth) asked 4x as often: ~95 % coverage."""
    rng = np.random.default_rng(20261129)
    contested = rng.choice([1.0, 0.5, 0.0], 400, p=[0.5, 0.3, 0.2])
    y = np.concatenate([contested, (rng.random(1600) < 0.95).astype(float)])
    strata = np.array(["c"] * 400 + ["s"] * 1600, dtype=object)
    truth, hits = y.mean(), 0
    for _ in range(400):
        index = _draw(rng, y, strata, {"c": 60, "s": 60})
        res = stratified_proportion(y[index], strata[index], {"c": 400, "s": 1600})
        hits += res.ci_low <= truth <= res.ci_high
    assert 0.92 <= hits / 400 <= 0.985, f"coverage {hits / 400:.3f}"
