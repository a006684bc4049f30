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

from jurybox.stats._validate import LabelMatrix, numeric_2d

__all__ = ["GwetResult", "gwet_ac", "gwet_ac_counts"]

GwetWeights = Literal["linear", "quadratic"] | None


@dataclass(frozen=True, slots=True)
class GwetResult:
    """Gwet's AC1 (unweighted) or AC2 (weighted): (pa − pe) / (1 − pe)."""

    headline: ClassVar[str] = "coefficient"

    coefficient: float
    p_agreement: float
    p_chance: float
    n_units: int
    n_categories: int
    weights: str | None
    method: str


def gwet_ac(
    data: LabelMatrix,
    weights: GwetWeights = None,
    *,
    categories: Sequence[Hashable] | None = None,
) -> GwetResult:
    """Gwet's AC1/AC2 from a raters × units matrix of labels (None or NaN = missing).

    Args:
        data: raters (rows) × units (columns) labels; units rated by nobody are dropped.
        weights: ``None`` (AC1), ``"linear"`` or ``"quadratic"`` (AC2, by category position).
        categories: The ordered category set (the declared scale); defaults to the sorted
            observed labels. Weighted AC2 uses every declared category, used or not.

    Returns:
        ``GwetResult`` with the coefficient, observed agreement ``pa`` (over units with ≥ 2
        ratings) and chance agreement ``pe`` (over units with ≥ 1 rating), as
        ``irrCAC::gwet.ac1.raw``.

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
    cats = _categories(seen, categories)
    index = {c: i for i, c in enumerate(cats)}
    position = np.array([index[label] for label in labels], dtype=np.intp)
    units = np.flatnonzero(present) % raw.shape[1]  # the flat index runs rater-major
    q = len(cats)
    tally = np.bincount(units * q + position[codes], minlength=raw.shape[1] * q)
    counts = tally.reshape(raw.shape[1], q).astype(np.float64)
    return gwet_ac_counts(counts, weights)


def gwet_ac_counts(counts: ArrayLike, weights: GwetWeights = None) -> GwetResult:
    """Gwet's AC1/AC2 from a units × categories matrix of rating counts.

    Args:
        counts: ``counts[i, k]`` = raters who put unit i in category k (rows may differ in
            total, i.e. missing ratings); columns in scale order for weighted AC2.
        weights: ``None`` (AC1), ``"linear"`` or ``"quadratic"``.

    Returns:
        ``GwetResult``; see ``gwet_ac`` (equals ``irrCAC::gwet.ac1.dist`` for AC1).

    References:
        Gwet (2008); Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    table = numeric_2d(counts, "counts")
    if (table < 0).any() or not np.equal(np.mod(table, 1), 0).all():
        raise ValueError("counts must be non-negative whole numbers (raters per category)")
    table = table[table.sum(axis=1) > 0]
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
    return GwetResult(
        coefficient=(p_a - p_e) / (1 - p_e),
        p_agreement=p_a,
        p_chance=p_e,
        n_units=int(table.shape[0]),
        n_categories=q,
        weights=weights,
        method=f"Gwet's {kind}; pa over units with ≥ 2 ratings, pe over all rated units",
    )


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


def _categories(seen: set[Hashable], categories: Sequence[Hashable] | None) -> list[Hashable]:
    if categories is None:
        try:
            return sorted(seen)  # type: ignore[type-var]
        except TypeError as exc:
            raise ValueError("labels of mixed types cannot be ordered; pass categories") from exc
    cats = list(categories)
    if len(set(cats)) != len(cats):
        raise ValueError(f"categories contains duplicates: {cats!r}")
    unknown = seen - set(cats)
    if unknown:
        raise ValueError(f"labels not in categories: {sorted(map(repr, unknown))}")
    return cats


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
