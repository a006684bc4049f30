"""A bootstrap over items for Cohen's kappa (weighted or not).

The asymptotic variance of Fleiss, Cohen & Everitt (1969) gives quadratic-weighted kappa a Wald
interval that covered 0.77–0.89 at 30–100 items, and it treats every rated unit as independent
although a judge's two responses of an item (or its two presentation orders) share the item.
Here each item's contingency table is a row, a replicate draws items with replacement (a
weighted sum of their tables) and the interval is the expanded BCa of ``_bootstrap``, the
jackknife leaving one item out; bench/coverage_by_item.py has its coverage.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from jurybox.stats._bootstrap import (
    BOOTSTRAP_MAX_CLUSTERS,
    expanded_bca,
    jackknife_normal,
    unit_weights,
)
from jurybox.stats.clustered import cluster_codes

__all__ = [
    "disagreement_weights",
    "kappa_bootstrap",
    "kappa_interval",
    "kappa_of_tables",
    "tables_by_cluster",
]

FloatArray = NDArray[np.float64]
Weights = Literal["linear", "quadratic"] | None
# Share of replicates that must have a defined kappa for the interval to stand (as alpha's).
_MIN_VALID = 0.9
_TABLES_AT_ONCE = 4096  # contingency tables multiplied by the disagreement weights at once


def disagreement_weights(k: int, weights: Weights) -> FloatArray:
    """k × k disagreement of each pair of categories by position: 0 on the diagonal, 1 at the
    ends of the scale (unweighted: 1 everywhere off the diagonal)."""
    position = np.arange(k, dtype=np.float64)
    diff = position[:, None] - position
    if weights is None:
        off: FloatArray = (diff != 0).astype(np.float64)
        return off
    span = position[-1] - position[0]
    scaled: FloatArray = np.abs(diff) / span if weights == "linear" else diff**2 / span**2
    return scaled


def kappa_of_tables(tables: FloatArray, disagreement: FloatArray) -> FloatArray:
    """Kappa of each k × k table of a stack (…, k, k): 1 − observed / expected disagreement;
    NaN where the expected disagreement is 0 (one category: kappa undefined)."""
    total = tables.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        row = tables.sum(axis=-1) / total[..., None]
        col = tables.sum(axis=-2) / total[..., None]
        observed = _disagreement_sums(tables, disagreement) / total
        expected = np.einsum("...i,ij,...j->...", row, disagreement, col)
        kappa: FloatArray = np.where(expected > 1e-12, 1 - observed / expected, np.nan)
    return kappa


def _disagreement_sums(tables: FloatArray, disagreement: FloatArray) -> FloatArray:
    """``np.sum(tables * disagreement, axis=(-2, -1))``, ``_TABLES_AT_ONCE`` tables at a time:
    each table's sum the same, without a product as large as the stack (a million records'
    jackknife over items holds three stacks of 121 MB already)."""
    k = disagreement.shape
    flat = tables.reshape(-1, *k)
    sums = np.empty(len(flat))
    for start in range(0, len(flat), _TABLES_AT_ONCE):
        part = flat[start : start + _TABLES_AT_ONCE]
        sums[start : start + len(part)] = np.sum(part * disagreement, axis=(-2, -1))
    found: FloatArray = sums.reshape(tables.shape[:-2])
    return found


def tables_by_cluster(
    a_codes: NDArray[np.intp], b_codes: NDArray[np.intp], k: int, clusters: ArrayLike | None
) -> FloatArray:
    """G × k × k: the contingency table of each cluster's units (rows: rater a)."""
    groups = cluster_codes(clusters, a_codes.size)
    size = int(groups.max()) + 1
    cells = (groups * k + a_codes) * k + b_codes
    # counted as floats at once (exact), not as integers then copied
    counts = np.bincount(cells, weights=np.ones(cells.size), minlength=size * k * k)
    return np.asarray(counts, dtype=np.float64).reshape(size, k, k)  # float64 already: no copy


def kappa_bootstrap(
    tables: FloatArray,
    disagreement: FloatArray,
    *,
    confidence: float,
    n_bootstrap: int,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """The expanded BCa interval of kappa over clusters, from each cluster's table.

    Args:
        tables: G × k × k, one contingency table per cluster (item).
        disagreement: ``disagreement_weights`` of the k categories.
        confidence: Two-sided confidence level.
        n_bootstrap: Replicates.
        rng: The generator the resampling weights come from.

    Returns:
        (low, high).

    Raises:
        ValueError: Fewer than 2 clusters; every unit agreeing exactly (kappa 1 with nothing to
            resample: no interval); too few replicates with a defined kappa; every replicate
            equal (no spread: never an interval like [0, 0]).
    """
    units, k = tables.shape[0], tables.shape[1]
    if units < 2:
        raise ValueError(f"a bootstrap interval over items needs at least 2 items, got {units}")
    flat = tables.reshape(units, k * k)
    point = float(kappa_of_tables(flat.sum(axis=0).reshape(k, k), disagreement))
    if float(np.sum(flat.sum(axis=0) * disagreement.ravel())) == 0:
        raise ValueError(
            f"every one of the {units} items agrees exactly (kappa = 1): with no disagreement "
            "to resample, kappa's interval is undefined"
        )
    weights = unit_weights(units, n_bootstrap, rng)
    boot = np.concatenate(
        [
            kappa_of_tables((block @ flat).reshape(-1, k, k), disagreement)
            for block in np.array_split(weights, max(1, n_bootstrap // 500))
        ]
    )
    finite = boot[np.isfinite(boot)]
    if finite.size < _MIN_VALID * n_bootstrap:
        raise ValueError(
            f"only {finite.size} of {n_bootstrap} bootstrap replicates drew two categories: "
            "too few items vary for an interval"
        )
    if np.ptp(finite) < 1e-12:
        raise ValueError(
            f"every resample of the {units} items gives kappa {point:.3f}: the ratings balance "
            "within each item (e.g. a verdict that follows the position shown), so kappa's "
            "interval has no spread and is undefined"
        )
    jack = kappa_of_tables((flat.sum(axis=0) - flat).reshape(units, k, k), disagreement)
    low, high = expanded_bca(point, finite, jack, confidence)
    return max(-1.0, low), min(1.0, high)


def kappa_interval(
    tables: FloatArray,
    disagreement: FloatArray,
    *,
    confidence: float,
    n_bootstrap: int,
    rng: np.random.Generator,
) -> tuple[float, float, str]:
    """``kappa_bootstrap`` up to ``BOOTSTRAP_MAX_CLUSTERS`` items, past that the normal interval
    with the jackknife standard error over items (the bootstrap's cost grows with replicates x
    items); and how it was made, for the result's ``method``."""
    units, k = tables.shape[0], tables.shape[1]
    if units <= BOOTSTRAP_MAX_CLUSTERS:
        low, high = kappa_bootstrap(
            tables, disagreement, confidence=confidence, n_bootstrap=n_bootstrap, rng=rng
        )
        return low, high, f"expanded BCa bootstrap over items ({n_bootstrap} replicates)"
    flat = tables.reshape(units, k * k)
    whole = flat.sum(axis=0)
    point = float(kappa_of_tables(whole.reshape(k, k), disagreement))
    jack = kappa_of_tables((whole - flat).reshape(units, k, k), disagreement)
    low, high, how = jackknife_normal(point, jack, confidence, "kappa")
    return max(-1.0, low), min(1.0, high), how
