"""Proportions over judgments that share an item: the item, not the judgment, is the unit.

A judge asked about one item in both presentation orders (and again in retests, or on several
criteria) usually answers alike each time, so its judgments of an item are not independent
draws: an interval that counts them as such is too narrow (the nominal 95 % Wilson interval over
both orders covered 0.87–0.93 at a within-item correlation of 0.3–0.7). Here the judgments are
grouped by item; the design effect (Kish 1965) compares the between-item variance of the share
with the binomial one and divides the number of judgments by it, and the interval is the
Agresti–Coull interval on that effective number (Korn & Graubard 1998; Dean & Pagano 2015).
Agresti–Coull rather than Wilson: Wilson dips to 0.91–0.92 at a share of 0.99 with 50–400
units, Agresti–Coull stays at or above 0.93 over 20–800 units and shares 0.6–0.995 (exact
binomial coverage; bench/coverage_by_item.py has the clustered grid).

The same effective counts give the Rao–Scott adjustment of a test between groups of clustered
judgments (``effective_counts``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats._validate import confidence_level, numeric_1d
from jurybox.stats.results import ProportionInterval

__all__ = [
    "ClusteredProportion",
    "EffectiveCounts",
    "cluster_codes",
    "clustered_bounds",
    "clustered_proportion",
    "effective_counts",
]

FloatArray = NDArray[np.float64]

METHOD = (
    "share over judgments, items as clusters: Agresti-Coull interval on the effective number of "
    "judgments (n / design effect, the design effect at least 1; Korn & Graubard 1998)"
)


@dataclass(frozen=True, slots=True)
class ClusteredProportion(ProportionInterval):
    """A share over judgments grouped by item, with an interval on the effective sample size.

    ``n`` counts judgments, ``n_clusters`` items; ``design_effect`` is the variance of the share
    over the binomial variance of ``n`` independent judgments (1: independent; the number of
    judgments per item: every item judged alike each time) and ``n_effective`` = n / it.
    """

    n_clusters: int
    n_effective: float
    design_effect: float


@dataclass(frozen=True, slots=True)
class EffectiveCounts:
    """Successes and trials divided by the design effect (Rao & Scott 1992)."""

    successes: float
    n: float
    design_effect: float
    n_clusters: int


def cluster_codes(clusters: ArrayLike | None, size: int, name: str = "clusters") -> NDArray[Any]:
    """Integer codes 0..G-1 of each observation's cluster (each its own one when None)."""
    if clusters is None:
        return np.arange(size)
    raw = np.asarray(clusters)
    if raw.ndim != 1 or raw.size != size:
        raise ValueError(
            f"{name} must be 1-D with one entry per observation ({size}), got {raw.shape}"
        )
    if raw.dtype.kind == "O":
        raw = raw.astype(str)  # mixed or boxed ids: compare them as text
    _, codes = np.unique(raw, return_inverse=True)
    return codes.ravel()


def _sums(values: FloatArray, codes: NDArray[Any]) -> tuple[FloatArray, FloatArray]:
    groups = int(codes.max()) + 1
    sums: FloatArray = np.bincount(codes, weights=values, minlength=groups).astype(np.float64)
    sizes: FloatArray = np.bincount(codes, minlength=groups).astype(np.float64)
    return sums, sizes


def design_effects(sums: FloatArray, sizes: FloatArray) -> FloatArray:
    """Design effects of S data sets at once (rows: data sets, columns: clusters; no checks).

    Σ_g (y_g − p m_g)² / (p (1 − p) N): the ratio of the between-cluster variance of the share
    (without the small-sample factor G / (G − 1), so that identical judgments within every item
    give exactly the binomial over items) to the binomial one. Truncated at 1 from below (Korn &
    Graubard 1998); where the share is 0 or 1 it has no variance to compare, and the mean
    cluster size is used (as if every item were judged alike: the cautious reading); a single
    cluster counts as one judgment.
    """
    total = sizes.sum(axis=-1)
    share = sums.sum(axis=-1) / total
    spread = np.sum((sums - share[..., None] * sizes) ** 2, axis=-1)
    binomial = share * (1 - share) * total
    clusters = np.count_nonzero(sizes, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = spread / binomial
    deff: FloatArray = np.where(binomial > 0, np.maximum(ratio, 1.0), total / clusters)
    # One item alone says nothing about the spread between items: it counts once.
    return np.where(clusters < 2, total, deff)


def clustered_bounds(
    sums: FloatArray, sizes: FloatArray, confidence: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """(share, low, high, effective n, design effect) for S data sets at once (no checks).

    ``sums`` and ``sizes`` are S × G: per data set and cluster, the sum of the outcomes and the
    number of judgments (0 for padding). Used by ``clustered_proportion`` (S = 1) and, for speed,
    by the coverage benchmark.
    """
    total = sizes.sum(axis=-1)
    share = sums.sum(axis=-1) / total
    deff = design_effects(sums, sizes)
    n_eff = total / deff
    low, high = proportion_confint(
        share * n_eff, n_eff, alpha=1 - confidence, method="agresti_coull"
    )
    return share, np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0), n_eff, deff


def _outcomes(outcomes: ArrayLike) -> FloatArray:
    values = numeric_1d(np.asarray(outcomes, dtype=np.float64), "outcomes")
    if ((values < 0) | (values > 1)).any():
        raise ValueError("outcomes must lie in [0, 1] (1 = success, ½ for a half credit)")
    return values


def clustered_proportion(
    outcomes: ArrayLike, clusters: ArrayLike | None = None, *, confidence: float = 0.95
) -> ClusteredProportion:
    """A share of judgments with an interval that counts items, not judgments.

    Args:
        outcomes: One value in [0, 1] per judgment (1 right, 0 wrong or failed, ½ half credit).
        clusters: The item of each judgment (any ids); None: every judgment its own item.
        confidence: Two-sided confidence level.

    Returns:
        ``ClusteredProportion``: the share, the Agresti–Coull interval on the effective number
        of judgments, the design effect and the counts.

    References:
        Kish, L. (1965). Survey Sampling. Wiley (the design effect). Korn, E. L. & Graubard,
        B. I. (1998). Confidence intervals for proportions with small expected number of
        positive counts estimated from survey data. Survey Methodology 24, 193–201. Dean, N. &
        Pagano, M. (2015). Evaluating confidence interval methods for binomial proportions in
        clustered surveys. J. Survey Statistics and Methodology 3, 484–503. Agresti, A. &
        Coull, B. A. (1998). The American Statistician 52, 119–126 (computed by
        ``statsmodels.stats.proportion.proportion_confint``).
    """
    conf = confidence_level(confidence)
    values = _outcomes(outcomes)
    codes = cluster_codes(clusters, values.size)
    sums, sizes = _sums(values, codes)
    share, low, high, n_eff, deff = clustered_bounds(sums[None], sizes[None], conf)
    return ClusteredProportion(
        estimate=float(share[0]),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        successes=float(values.sum()),
        n=int(values.size),
        n_clusters=int(sizes.size),
        n_effective=float(n_eff[0]),
        design_effect=float(deff[0]),
        confidence=conf,
        method=METHOD,
    )


def effective_counts(outcomes: ArrayLike, clusters: ArrayLike | None = None) -> EffectiveCounts:
    """Successes and trials of clustered judgments divided by their design effect.

    What a test built for independent judgments may be given instead of the raw counts (Rao &
    Scott 1992): with every judgment its own item they are the raw counts.

    References:
        Rao, J. N. K. & Scott, A. J. (1992). A simple method for the analysis of clustered
        binary data. Biometrics 48, 577–585.
    """
    values = _outcomes(outcomes)
    sums, sizes = _sums(values, cluster_codes(clusters, values.size))
    deff = float(design_effects(sums[None], sizes[None])[0])
    return EffectiveCounts(
        successes=float(values.sum()) / deff,
        n=values.size / deff,
        design_effect=deff,
        n_clusters=int(sizes.size),
    )
