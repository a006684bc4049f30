"""Gwet's AC1 (nominal) and AC2 (weighted) agreement coefficients for two or more raters.

Cohen's and Fleiss' kappa collapse toward 0 when nearly every item falls in one category even
though raters agree (the kappa paradox); AC1's chance agreement stays small there, so it is
reported beside kappa rather than instead of it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from jurybox.stats._bootstrap import agreement_interval, cluster_totals
from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import LabelMatrix, category_order, confidence_level, count, numeric_2d
from jurybox.stats.clustered import cluster_codes

__all__ = ["GwetResult", "gwet_ac", "gwet_ac_counts"]

GwetWeights = Literal["linear", "quadratic"] | None


@dataclass(frozen=True, slots=True)
class GwetResult:
    """Gwet's AC1 (unweighted) or AC2 (weighted): (pa − pe) / (1 − pe), with an expanded BCa
    bootstrap interval over items (None, the reason in ``method``, where it is undefined)."""

    headline: ClassVar[str] = "coefficient"

    coefficient: float
    p_agreement: float
    p_chance: float
    n_units: int
    n_categories: int
    weights: str | None
    method: str
    ci_low: float | None = None
    ci_high: float | None = None
    n_clusters: int | None = None
    confidence: float | None = None


def gwet_ac(
    data: LabelMatrix,
    weights: GwetWeights = None,
    *,
    categories: Sequence[Hashable] | None = None,
    clusters: ArrayLike | None = None,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> GwetResult:
    """Gwet's AC1/AC2 from a raters × units matrix of labels (None or NaN = missing).

    Args:
        data: raters (rows) × units (columns) labels; units rated by nobody are dropped.
        weights: ``None`` (AC1), ``"linear"`` or ``"quadratic"`` (AC2, by category position).
        categories: The ordered category set (the declared scale); defaults to the sorted
            observed labels. Weighted AC2 uses every declared category, used or not.
        clusters: The item of each unit (column), e.g. when an item's two presentation orders
            are two units; the bootstrap resamples items. None: every unit its own item.
        confidence: Two-sided confidence level of the interval.
        n_bootstrap: Bootstrap replicates (≥ 200).
        rng: Generator, seed or None (the bootstrap's resampling).

    Returns:
        ``GwetResult`` with the coefficient, observed agreement ``pa`` (over units with ≥ 2
        ratings) and chance agreement ``pe`` (over units with ≥ 1 rating), as
        ``irrCAC::gwet.ac1.raw``, and its interval (see ``gwet_ac_counts``).

    References:
        Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence
        of high agreement. BJMSP 61, 29–48. Gwet, K. L. (2014). Handbook of Inter-Rater
        Reliability, 4th ed., ch. 2–3 (AC2 with weights).
    """
    raw = np.asarray(data, dtype=object)
    if raw.ndim != 2 or raw.size == 0:
        raise ValueError(f"data must be a non-empty raters × units matrix, got shape {raw.shape}")
    flat = np.asarray(data).ravel() if isinstance(data, np.ndarray) else raw.ravel()
    present, codes, labels = _label_codes(flat)
    seen = set(labels)
    if not seen:
        raise ValueError("data holds no labels (every value is missing)")
    cats = category_order(seen, categories)
    index = {c: i for i, c in enumerate(cats)}
    position = np.array([index[label] for label in labels], dtype=np.intp)
    units = np.flatnonzero(present) % raw.shape[1]  # the flat index runs rater-major
    q = len(cats)
    tally = np.bincount(units * q + position[codes], minlength=raw.shape[1] * q)
    counts = tally.reshape(raw.shape[1], q).astype(np.float64)
    return gwet_ac_counts(
        counts,
        weights,
        clusters=clusters,
        confidence=confidence,
        n_bootstrap=n_bootstrap,
        rng=rng,
    )


def gwet_ac_counts(
    counts: ArrayLike,
    weights: GwetWeights = None,
    *,
    clusters: ArrayLike | None = None,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> GwetResult:
    """Gwet's AC1/AC2 from a units × categories matrix of rating counts.

    Args:
        counts: ``counts[i, k]`` = raters who put unit i in category k (rows may differ in
            total, i.e. missing ratings); columns in scale order for weighted AC2.
        weights: ``None`` (AC1), ``"linear"`` or ``"quadratic"``.
        clusters, confidence, n_bootstrap, rng: As ``gwet_ac``.

    Returns:
        ``GwetResult``; see ``gwet_ac`` (equals ``irrCAC::gwet.ac1.dist`` for AC1). The
        interval: both ``pa`` and ``pe`` are means of per-unit terms, so a resample of items is
        a weighted sum of each item's terms; expanded BCa (``_bootstrap``), the jackknife
        leaving one item out. Undefined (None, the reason in ``method``) with fewer than 2
        items, or resamples that never vary.

    References:
        Gwet (2008); Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed. (whose
        variance treats units as independent: a resample of items keeps an item's units
        together).
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    conf = confidence_level(confidence)
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    table = numeric_2d(counts, "counts")
    if (table < 0).any() or not np.equal(np.mod(table, 1), 0).all():
        raise ValueError("counts must be non-negative whole numbers (raters per category)")
    rated = table.sum(axis=1) > 0
    codes = cluster_codes(clusters, table.shape[0])[rated]
    table = table[rated]
    q = table.shape[1] if table.size else 0
    if q < 2:
        raise ValueError(f"Gwet's AC needs at least 2 categories, got {q}")
    per_unit = table.sum(axis=1)
    pairable = per_unit >= 2
    if not pairable.any():
        raise ValueError("no unit has two or more ratings, so agreement cannot be observed")
    w = _weights(q, weights)
    weighted = table @ w.T  # r*_ik = Σ_l w_kl r_il
    r = per_unit[pairable]
    p_a = float(np.mean(np.sum(table[pairable] * (weighted[pairable] - 1), axis=1) / (r * (r - 1))))
    pi = np.mean(table / per_unit[:, None], axis=0)
    p_e = float(w.sum() * np.sum(pi * (1 - pi)) / (q * (q - 1)))
    if math.isclose(p_e, 1.0):
        raise ValueError("Gwet's AC is undefined: chance agreement is 1")
    kind = "AC1 (unweighted)" if weights is None else f"AC2 ({weights} weights)"
    method = f"Gwet's {kind}; pa over units with ≥ 2 ratings, pe over all rated units"
    _, codes = np.unique(codes, return_inverse=True)
    terms = _unit_terms(table, weighted, pairable)
    low, high, how = agreement_interval(
        cluster_totals(terms, codes.ravel()),
        lambda sums: _coefficient(sums, float(w.sum()), q),
        confidence=conf,
        n_bootstrap=reps,
        rng=as_generator(rng),
        what=f"Gwet's {kind}",
    )
    return GwetResult(
        coefficient=(p_a - p_e) / (1 - p_e),
        p_agreement=p_a,
        p_chance=p_e,
        n_units=int(table.shape[0]),
        n_categories=q,
        weights=weights,
        method=method + how,
        ci_low=low,
        ci_high=high,
        n_clusters=int(codes.max()) + 1,
        confidence=conf,
    )


def _unit_terms(
    table: NDArray[np.float64], weighted: NDArray[np.float64], pairable: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Per unit: [pairable, its pa term (0 if not pairable), 1, its category shares…]."""
    per_unit = table.sum(axis=1)
    pairs = np.where(pairable, per_unit * (per_unit - 1), 1.0)
    agree = np.where(pairable, np.sum(table * (weighted - 1), axis=1) / pairs, 0.0)
    shares = table / per_unit[:, None]
    ones = np.ones(per_unit.size)
    return np.column_stack([pairable.astype(np.float64), agree, ones, shares])


def _coefficient(sums: NDArray[np.float64], weight_sum: float, q: int) -> NDArray[np.float64]:
    """The coefficient of each row of summed ``_unit_terms`` (NaN where undefined)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p_a = sums[:, 1] / sums[:, 0]
        pi = sums[:, 3:] / sums[:, 2:3]
        p_e = weight_sum * np.sum(pi * (1 - pi), axis=1) / (q * (q - 1))
        found: NDArray[np.float64] = np.where(p_e < 1 - 1e-12, (p_a - p_e) / (1 - p_e), np.nan)
    return found


def _label_codes(
    flat: NDArray[Any],
) -> tuple[NDArray[np.bool_], NDArray[np.intp], list[Hashable]]:
    """Which values are present, each present value's code, and the distinct labels the codes
    index. Missing means None or a float NaN. Numeric arrays are coded by numpy; object arrays
    by one pass of dictionary look-ups (equal labels, e.g. 1 and 1.0, share a code, the first
    one seen naming it, as a set keeps it)."""
    if flat.dtype.kind in "biuf":
        present = ~np.isnan(flat) if flat.dtype.kind == "f" else np.ones(flat.shape, dtype=bool)
        values = flat[present]
        uniques, inverse = np.unique(values, return_inverse=True)
        labels: list[Hashable] = uniques.astype(object).tolist()
        return present, inverse.ravel().astype(np.intp), labels
    items = flat.tolist()
    # a generator, not a function call per value: this runs once per rating (millions)
    missing = (v is None or (isinstance(v, float) and math.isnan(v)) for v in items)
    present = ~np.fromiter(missing, dtype=bool, count=len(items))
    index: dict[Hashable, int] = {}
    pairs = zip(items, present.tolist(), strict=True)
    codes = np.fromiter(
        (index.setdefault(v, len(index)) for v, ok in pairs if ok),
        dtype=np.intp,
        count=int(present.sum()),
    )
    return present, codes, list(index)


def _weights(q: int, weights: GwetWeights) -> NDArray[np.float64]:
    """Agreement weights w_kl by category position (Gwet 2014, ch. 3)."""
    pos = np.arange(q, dtype=np.float64)
    gap = np.abs(pos[:, None] - pos[None, :]) / (q - 1)
    if weights == "linear":
        return 1.0 - gap
    if weights == "quadratic":
        squared: NDArray[np.float64] = 1.0 - gap**2
        return squared
    return np.eye(q)
