"""Ordinal and ratio alpha replicates from per-unit coincidences equal recomputing
``krippendorff_alpha`` on every resample (the reference path, still used for huge domains)."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox import stats
from jurybox.stats import alpha_ci


def _panel(rng: np.random.Generator) -> np.ndarray:
    raters, units = int(rng.integers(2, 8)), int(rng.integers(3, 30))
    values = rng.integers(1, int(rng.integers(2, 7)), size=(raters, units)).astype(float)
    values[rng.random(values.shape) < 0.3] = np.nan
    return values[:, np.sum(~np.isnan(values), axis=0) >= 2]


@pytest.mark.parametrize("level", ["ordinal", "ratio"])
def test_replicates_equal_alpha_recomputed_per_resample(level: str) -> None:
    rng = np.random.default_rng(5)
    checked = undefined = 0
    for _ in range(40):
        values = _panel(rng)
        units = values.shape[1]
        if units < 2:
            continue
        weights = rng.multinomial(units, np.full(units, 1 / units), size=40).astype(float)
        boot = alpha_ci._coincidence_replicates(values, weights, level)
        jack = alpha_ci._coincidence_replicates(values, 1.0 - np.eye(units), level)
        for fast, rows in ((boot, weights), (jack, 1.0 - np.eye(units))):
            slow = np.array([alpha_ci._alpha_or_nan(values, w, level) for w in rows])  # type: ignore[arg-type]
            assert np.array_equal(np.isnan(fast), np.isnan(slow))
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)
            checked += int(np.isfinite(slow).sum())
            undefined += int(np.isnan(slow).sum())
    assert checked > 1000 and undefined > 0


def test_interval_is_unchanged_when_the_fallback_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    truth = rng.integers(1, 6, size=40)
    values = np.clip(truth + rng.integers(-1, 2, size=(4, 40)), 1, 5).astype(float)
    values[rng.random(values.shape) < 0.1] = np.nan
    fast = stats.krippendorff_alpha_ci(values, "ordinal", n_bootstrap=300, rng=1)
    monkeypatch.setattr(alpha_ci, "_MAX_COINCIDENCE_CELLS", 0)
    slow = stats.krippendorff_alpha_ci(values, "ordinal", n_bootstrap=300, rng=1)
    assert fast.alpha == slow.alpha
    assert fast.ci_low == pytest.approx(slow.ci_low, abs=1e-12)
    assert fast.ci_high == pytest.approx(slow.ci_high, abs=1e-12)
