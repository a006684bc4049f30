"""Bootstrap interval for Krippendorff's alpha: point value, fast path, seeded coverage."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox.stats import alpha_difference, krippendorff_alpha, krippendorff_alpha_ci
from jurybox.stats.alpha_ci import _alpha_or_nan, _fast_replicates

NAN = np.nan
# Krippendorff (2011), p. 8: 4 coders x 12 units (alpha nominal 0.743, interval 0.849).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_point_estimate_is_krippendorffs_alpha(level: str) -> None:
    """The interval is centred on the published point value (nominal 0.743, interval 0.849)."""
    res = krippendorff_alpha_ci(KRIPPENDORFF_2011, level, n_bootstrap=300, rng=1)  # type: ignore[arg-type]
    assert res.alpha == krippendorff_alpha(KRIPPENDORFF_2011, level).alpha  # type: ignore[arg-type]
    assert res.ci_low <= res.alpha <= res.ci_high
    assert "expanded BCa bootstrap over units" in res.method


@pytest.mark.parametrize("level", ["nominal", "interval"])
def test_fast_replicates_equal_alpha_of_the_resampled_units(level: str) -> None:
    rng = np.random.default_rng(3)
    values = np.round(rng.normal(size=(3, 40)) + rng.normal(size=40), 1)
    values[0, 5] = np.nan
    weights = rng.multinomial(40, np.full(40, 1 / 40), size=5).astype(float)
    boot = _fast_replicates(values, weights, level)
    jack = _fast_replicates(values, 1.0 - np.eye(40), level)
    slow = [_alpha_or_nan(values, w, level) for w in weights]  # type: ignore[arg-type]
    np.testing.assert_allclose(boot, slow, rtol=1e-10)
    np.testing.assert_allclose(jack[7], krippendorff_alpha(np.delete(values, 7, 1), level).alpha)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_one_pairable_unit_raises_value_error(level: str) -> None:
    """Only one unit has two ratings: no interval exists, and the analysis layer catches
    ValueError (this raised ZeroDivisionError in the small-sample expansion)."""
    with pytest.raises(ValueError, match="at least 2 units"):
        krippendorff_alpha_ci([[1, NAN, 3], [2, 5, NAN]], level, n_bootstrap=200, rng=0)  # type: ignore[arg-type]


def _interval_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, float]:
    """Item truth N(0, 1) plus rater noise N(0, 1): population interval alpha = 1 / 2."""
    return rng.normal(size=n) + rng.normal(size=(3, n)), 0.5


def _nominal_data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, float]:
    """3 balanced classes; a rater keeps the truth w.p. 0.7, else guesses uniformly.

    P(two raters agree) = a² + 2b² with a = 0.8, b = 0.1; chance disagreement 2/3, so the
    population alpha is 1 − (1 − 0.66) / (2/3) = 0.49.
    """
    truth = rng.integers(0, 3, size=n)
    keep = rng.random((3, n)) < 0.7
    return np.where(keep, truth, rng.integers(0, 3, size=(3, n))).astype(float), 0.49


@pytest.mark.parametrize(
    ("level", "simulate"), [("interval", _interval_data), ("nominal", _nominal_data)]
)
def test_alpha_interval_coverage(level: str, simulate: object) -> None:
    """250 seeded data sets of 60 units: binomial SE ≈ 0.014, so accept 0.91–0.985.

    The full grid (30–200 units, several alphas) is bench/alpha_ci_coverage.py.
    """
    rng = np.random.default_rng(20261123)
    hits = 0
    for _ in range(250):
        data, truth = simulate(rng, 60)  # type: ignore[operator]
        res = krippendorff_alpha_ci(data, level, n_bootstrap=500, rng=rng)  # type: ignore[arg-type]
        hits += res.ci_low <= truth <= res.ci_high
    assert 0.91 <= hits / 250 <= 0.985, f"coverage {hits / 250:.3f}"


def test_alpha_difference_is_the_difference_of_the_alphas() -> None:
    rng = np.random.default_rng(4)
    truth = rng.normal(size=40)
    x = truth + rng.normal(size=(3, 40))
    y = truth + rng.normal(scale=0.5, size=(3, 40))
    x[1, 3] = NAN  # missing values keep their unit when two values remain
    res = alpha_difference(x, y, n_bootstrap=500, rng=2)
    assert res.alpha_x == krippendorff_alpha(x, "interval").alpha
    assert res.alpha_y == krippendorff_alpha(y, "interval").alpha
    assert res.estimate == pytest.approx(res.alpha_y - res.alpha_x)
    assert res.ci_low < res.estimate < res.ci_high
    assert res.n_units == 40


def test_alpha_difference_coverage() -> None:
    """Truth N(0, 1); raters' noise SD 1 (alpha 1/2) vs 0.5 (alpha 4/5): difference 0.3. The
    expanded BCa paired interval covered 0.951 / 0.965 / 0.948 at 30 / 60 / 100 units (800 runs
    each; the plain percentile interval 0.926-0.936 at 60-100). Checked here at 30 units."""
    rng = np.random.default_rng(7)
    sims, hits = 400, 0
    for _ in range(sims):
        truth = rng.normal(size=30)
        x = truth + rng.normal(size=(3, 30))
        y = truth + rng.normal(scale=0.5, size=(3, 30))
        res = alpha_difference(x, y, n_bootstrap=1000, rng=rng)
        hits += res.ci_low <= 0.3 <= res.ci_high
    assert 0.93 <= hits / sims <= 0.97


def test_alpha_interval_stands_at_ninety_percent_prevalence() -> None:
    """Issue 33: two coders, 20 units, one class at 90 %, the coders keeping it 95 % of the
    time: requiring 90 % of the replicates to vary refused an interval to 29 of these 60
    samples. Now every sample with a disagreement gets one (from the replicates that vary);
    the others are alpha 1 (or no variation at all), undefined with their reason."""
    rng = np.random.default_rng(90)
    intervals = 0
    for _ in range(60):
        truth = (rng.random(20) < 0.9).astype(int)
        data = np.where(rng.random((2, 20)) < 0.95, truth, rng.integers(0, 2, (2, 20)))
        data = data.astype(float)
        try:
            found = krippendorff_alpha_ci(data, "nominal", n_bootstrap=500, rng=rng)
        except ValueError as exc:
            if np.unique(data).size > 1:
                assert krippendorff_alpha(data, "nominal").alpha == 1.0, exc
                assert "agrees exactly" in str(exc)
            continue
        intervals += 1
        assert found.ci_low <= found.alpha <= found.ci_high < 1.0 + 1e-12
    assert intervals >= 30
