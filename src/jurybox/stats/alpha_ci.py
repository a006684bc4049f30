"""A bootstrap (over units) confidence interval for Krippendorff's alpha.

Alpha is 1 − (n − 1) · Σ_u P_u / (m_u − 1) / T, where P_u sums the squared differences between
the values within unit u and T those between all pairable values. For the nominal and interval
metrics both sums come from per-unit sufficient statistics (value counts; sums and sums of
squares), so every bootstrap replicate is a weighted sum and thousands of replicates cost one
matrix product. Ordinal and ratio metrics recompute alpha per replicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import stats as sps

from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import LabelMatrix, confidence_level, count
from jurybox.stats.agreement import Level, _reliability_matrix, krippendorff_alpha

__all__ = ["AlphaInterval", "krippendorff_alpha_ci"]

_MIN_UNITS = 2  # pairable units (two or more values) the interval needs
_MIN_VALID = 0.9  # share of replicates that must have variation for the interval to stand


@dataclass(frozen=True, slots=True)
class AlphaInterval:
    """Krippendorff's alpha with an (expanded) BCa bootstrap interval over units."""

    headline: ClassVar[str] = "alpha"

    alpha: float
    ci_low: float
    ci_high: float
    level: str
    n_units: int
    n_bootstrap: int
    confidence: float
    method: str


def krippendorff_alpha_ci(
    data: LabelMatrix,
    level: Level = "nominal",
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> AlphaInterval:
    """Krippendorff's alpha with a BCa bootstrap interval, resampling units.

    Args:
        data: raters × units values (NaN or None = missing), as for ``krippendorff_alpha``.
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.
        confidence: Two-sided confidence level.
        n_bootstrap: Bootstrap replicates (≥ 200).
        rng: Generator, seed or None.

    Returns:
        ``AlphaInterval``: the point estimate equals ``krippendorff_alpha``; the interval is
        Efron's BCa interval of alpha over units resampled with replacement (units are the
        independent draws; raters stay fixed; acceleration from the leave-one-unit-out
        jackknife), with Hesterberg's small-sample expansion of the normal quantile.
        Replicates without variation are dropped. Plain percentiles covered 0.90–0.91 and
        unexpanded BCa 0.90 at 30 units (interval alpha 0.5); the expanded BCa covers
        0.936–0.970 over the grid of bench/corrected_estimates.py (30–120 units).

    References:
        Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Hayes, A. F. &
        Krippendorff, K. (2007). Answering the call for a standard reliability measure for
        coding data. Communication Methods and Measures 1, 77–89 (bootstrapping alpha).
        Efron, B. (1987). Better bootstrap confidence intervals. JASA 82, 171–185.
        Hesterberg, T. C. (2015). What teachers should know about the bootstrap. The American
        Statistician 69, 371–386 (the expanded percentile interval).
        Coverage is simulated in tests/stats/test_stats_coverage.py and bench/.
    """
    conf = confidence_level(confidence)
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    point = krippendorff_alpha(data, level)
    matrix = _reliability_matrix(data, level)
    values = matrix[:, np.sum(~np.isnan(matrix), axis=0) >= 2]
    units = values.shape[1]
    if units < _MIN_UNITS:
        # one pairable unit: every replicate is that unit and the jackknife has no spread
        raise ValueError(
            f"a bootstrap interval needs at least {_MIN_UNITS} units with two or more values, "
            f"got {units}"
        )
    gen = as_generator(rng)
    weights = gen.multinomial(units, np.full(units, 1 / units), size=reps).astype(np.float64)
    if level in ("nominal", "interval"):
        boot, jack = _fast_replicates(values, weights, level)
    else:
        boot = np.array([_alpha_or_nan(values, w, level) for w in weights])
        jack = np.array([_alpha_or_nan(values, w, level) for w in 1.0 - np.eye(units)])
    finite = boot[np.isfinite(boot)]
    if finite.size < _MIN_VALID * reps:
        raise ValueError(
            f"only {finite.size} of {reps} bootstrap replicates had variation: too few units "
            "differ for an interval"
        )
    low, high = _bca(point.alpha, finite, jack, conf)
    return AlphaInterval(
        alpha=point.alpha,
        ci_low=float(low),
        ci_high=float(high),
        level=level,
        n_units=point.n_units,
        n_bootstrap=reps,
        confidence=conf,
        method=f"Krippendorff's alpha, {level} metric; expanded BCa bootstrap over units "
        f"({reps} replicates)",
    )


def _unit_statistics(
    values: NDArray[np.float64], level: str
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per-unit value counts m, within-unit disagreement P_u / (m_u − 1) and the statistics
    (columns) whose weighted sums give the total disagreement T."""
    present = ~np.isnan(values)
    m = present.sum(axis=0).astype(np.float64)
    if level == "interval":
        x = np.where(present, values, 0.0)
        s1, s2 = x.sum(axis=0), (x**2).sum(axis=0)
        return m, (2 * m * s2 - 2 * s1**2) / (m - 1), np.column_stack([s1, s2])
    _, codes = np.unique(values[present], return_inverse=True)
    per_unit = np.zeros((values.shape[1], int(codes.max()) + 1))
    np.add.at(per_unit, (np.nonzero(present)[1], codes.ravel()), 1.0)
    return m, (m**2 - np.sum(per_unit**2, axis=1)) / (m - 1), per_unit


def _alpha_from_sums(
    n: NDArray[np.float64], within: NDArray[np.float64], sums: NDArray[np.float64], level: str
) -> NDArray[np.float64]:
    """Alpha from summed unit statistics (one row per replicate)."""
    if level == "interval":
        total = 2 * n * sums[:, 1] - 2 * sums[:, 0] ** 2
    else:
        total = n**2 - np.sum(sums**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha: NDArray[np.float64] = 1 - (n - 1) * within / total
    return np.where(total > 1e-12 * np.abs(n) ** 2, alpha, np.nan)


def _fast_replicates(
    values: NDArray[np.float64], weights: NDArray[np.float64], level: str
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bootstrap replicates (one per row of unit weights) and the leave-one-unit-out values."""
    m, within, stats = _unit_statistics(values, level)
    boot = _alpha_from_sums(weights @ m, weights @ within, weights @ stats, level)
    # leaving unit i out subtracts its own statistics from the totals
    jack = _alpha_from_sums(m.sum() - m, within.sum() - within, stats.sum(axis=0) - stats, level)
    return boot, jack


def _bca(
    point: float, boot: NDArray[np.float64], jack: NDArray[np.float64], conf: float
) -> tuple[float, float]:
    """Efron's bias-corrected and accelerated percentile interval, expanded for small n."""
    z0 = float(sps.norm.ppf(np.clip(np.mean(boot < point), 1e-6, 1 - 1e-6)))
    dev = np.nanmean(jack) - jack[np.isfinite(jack)]
    spread = float(np.sum(dev**2))
    accel = float(np.sum(dev**3)) / (6 * spread**1.5) if spread > 0 else 0.0
    # Hesterberg's expansion: the normal quantile becomes sqrt(n/(n-1)) t_{n-1}, because the
    # bootstrap's variance is too small by about (n-1)/n in small samples (30 units covered 0.90)
    units = jack.size
    z = np.sqrt(units / (units - 1)) * sps.t.ppf([(1 - conf) / 2, (1 + conf) / 2], units - 1)
    levels = sps.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    low, high = np.quantile(boot, levels)
    return float(low), float(high)


def _alpha_or_nan(values: NDArray[np.float64], weights: NDArray[np.float64], level: Level) -> float:
    sample = np.repeat(values, weights.astype(np.intp), axis=1)
    try:
        return krippendorff_alpha(sample, level).alpha
    except ValueError:
        return float("nan")
