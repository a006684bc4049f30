"""A proportion from a stratified sample: the design-weighted mean and an interval that covers.

``jurybox label --targeted`` draws more labels from the items where judges disagree or flip
(the ``contested`` stratum) than from the rest (``settled``). Within a stratum the items are
drawn in a random order, so each stratum's labelled items are a simple random sample of it; the
strata's sizes are known from the judgments. The plain mean over all labelled items would then
over-weight the contested items; the stratified mean Σ W_h ȳ_h (W_h = N_h / N) does not, and
equals the inverse-probability (Horvitz–Thompson) estimate with inclusion probability n_h / N_h.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats._validate import confidence_level, numeric_1d

__all__ = ["StratifiedProportion", "stratified_proportion"]

_METHOD = (
    "stratified mean of per-unit shares (weights N_h/N); variance Σ W_h² (1 − n_h/N_h) s_h²/n_h "
    "with each stratum's s_h² smoothed by a Jeffreys pseudo-unit; Wilson interval at the "
    "effective sample size p(1 − p)/variance, scaled by (z/t_df)² with df = n − strata "
    "(Korn & Graubard)"
)


@dataclass(frozen=True, slots=True)
class StratifiedProportion:
    """A design-weighted proportion with its interval, and how many units each stratum gave."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    n: int
    n_effective: float
    n_by_stratum: Mapping[Hashable, int]
    size_by_stratum: Mapping[Hashable, int]
    confidence: float
    method: str


def stratified_proportion(
    values: ArrayLike,
    strata: ArrayLike,
    sizes: Mapping[Hashable, int],
    *,
    confidence: float = 0.95,
) -> StratifiedProportion:
    """The population share from a sample drawn at random within known strata.

    Args:
        values: One value in [0, 1] per sampled unit (1 correct, 0 wrong, 0.5 right in one of
            two presentation orders).
        strata: The stratum of each unit, paired with ``values``.
        sizes: Every stratum's population size N_h (units sampled or not). Each stratum with
            N_h > 0 needs at least one sampled unit, and none more than N_h.
        confidence: Two-sided confidence level.

    Returns:
        ``StratifiedProportion``: estimate Σ W_h ȳ_h; standard error from the stratified
        variance with the finite-population correction; a Wilson interval at the effective
        sample size, shrunk by (z / t_df)² with df = n − number of strata (Korn and
        Graubard's degrees-of-freedom adjustment). A stratum's sample variance is computed with
        one Jeffreys pseudo-unit (half a 0, half a 1) added, so a stratum whose few labels all
        agree still carries its uncertainty (a bare sample variance of 0 would make the
        interval a point).

    References:
        Cochran, W. G. (1977). Sampling Techniques, 3rd ed., ch. 5 (stratified random sampling).
        Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small
        expected number of positive counts estimated from survey data. Survey Methodology 24,
        193–201 (the effective sample size). Brown, Cai & DasGupta (2001), Statistical Science
        16, 101–133 (Wilson and Jeffreys intervals).
    """
    conf = confidence_level(confidence)
    y = numeric_1d(values, "values")
    if ((y < 0) | (y > 1)).any():
        raise ValueError("values must lie in [0, 1]")
    labels = np.asarray(strata, dtype=object)
    if labels.shape != y.shape:
        raise ValueError(f"strata must pair with values: shapes {labels.shape} and {y.shape}")
    population = _sizes(sizes, set(labels.tolist()))
    total = sum(population.values())
    estimate = variance = smoothed = 0.0
    counts: dict[Hashable, int] = {}
    for stratum, size in population.items():
        part = y[labels == stratum]
        counts[stratum] = len(part)
        if size == 0:
            continue
        mean, centre, spread = _stratum(part, stratum, size)
        weight = size / total
        estimate += weight * mean
        smoothed += weight * centre
        variance += weight**2 * (1 - len(part) / size) * spread / len(part)
    estimate = min(max(estimate, 0.0), 1.0)
    if variance <= 0:  # every stratum fully labelled: the census value, no sampling error
        low, high, effective = estimate, estimate, float(len(y))
    else:
        df = max(len(y) - len(counts), 1)
        shrink = (sps.norm.ppf(0.5 + conf / 2) / sps.t.ppf(0.5 + conf / 2, df)) ** 2
        effective = smoothed * (1 - smoothed) / variance * shrink
        low, high = proportion_confint(
            estimate * effective, effective, alpha=1 - conf, method="wilson"
        )
    return StratifiedProportion(
        estimate=float(estimate),
        ci_low=float(min(low, estimate)),
        ci_high=float(max(high, estimate)),
        se=float(np.sqrt(variance)),
        n=len(y),
        n_effective=float(effective),
        n_by_stratum=counts,
        size_by_stratum=population,
        confidence=conf,
        method=_METHOD,
    )


def _stratum(part: NDArray[np.float64], stratum: Hashable, size: int) -> tuple[float, float, float]:
    """(mean, Jeffreys-smoothed mean, smoothed unit variance) of one stratum's sample."""
    if len(part) == 0:
        raise ValueError(f"stratum {stratum!r} (N = {size}) has no sampled unit")
    if len(part) > size:
        raise ValueError(f"stratum {stratum!r} has {len(part)} sampled units but N = {size}")
    centre = (part.sum() + 0.5) / (len(part) + 1)
    squares = ((part - centre) ** 2).sum() + 0.5 * centre**2 + 0.5 * (1 - centre) ** 2
    return float(part.mean()), float(centre), float(squares / len(part))


def _sizes(sizes: Mapping[Hashable, int], seen: set[Hashable]) -> dict[Hashable, int]:
    population = {}
    for stratum, size in sizes.items():
        if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 0:
            raise ValueError(f"stratum {stratum!r}: size must be a whole number ≥ 0, got {size!r}")
        population[stratum] = int(size)
    unknown = seen - set(population)
    if unknown:
        raise ValueError(f"units in strata with no size: {sorted(map(str, unknown))}")
    if sum(population.values()) == 0:
        raise ValueError("every stratum is empty (sizes sum to 0)")
    return population
