"""Input checks shared by the estimators: each raises ``ValueError`` saying what is wrong."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: A raters/judges × items matrix of labels where None (or NaN) marks a missing label.
LabelMatrix = ArrayLike | Sequence[Sequence[Any]]


def confidence_level(confidence: float, name: str = "confidence") -> float:
    """``confidence`` as a float strictly between 0 and 1."""
    value = float(confidence)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {confidence!r}")
    return value


def _has_missing(arr: NDArray[Any]) -> bool:
    if arr.dtype.kind == "f":
        return bool(np.isnan(arr).any())
    if arr.dtype.kind == "O":
        return any(v is None or (isinstance(v, float) and math.isnan(v)) for v in arr.ravel())
    return False


def labels_1d(values: ArrayLike, name: str) -> NDArray[Any]:
    """A non-empty 1-D label array with no missing values."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if _has_missing(arr):
        raise ValueError(f"{name} contains missing values (None/NaN); drop failed judgments first")
    return arr


def numeric_1d(values: ArrayLike, name: str, min_size: int = 1) -> NDArray[np.float64]:
    """A finite float 1-D array with at least ``min_size`` values."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if arr.size < min_size:
        raise ValueError(f"{name} needs at least {min_size} values, got {arr.size}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values; drop failed judgments first")
    return arr


def numeric_2d(values: ArrayLike, name: str, *, allow_nan: bool = False) -> NDArray[np.float64]:
    """A non-empty float 2-D array (finite unless ``allow_nan``)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from exc
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        what = "infinite" if allow_nan else "NaN or infinite"
        raise ValueError(f"{name} contains {what} values")
    return arr


def paired(
    x: ArrayLike, y: ArrayLike | None, names: tuple[str, str] = ("x", "y"), min_size: int = 1
) -> NDArray[np.float64]:
    """Differences x − y of two equal-length numeric samples (or x itself when y is None)."""
    xa = numeric_1d(x, names[0], min_size)
    if y is None:
        return xa
    ya = numeric_1d(y, names[1], min_size)
    if xa.shape != ya.shape:
        raise ValueError(
            f"{names[0]} and {names[1]} must be paired (same length), got {xa.size} and {ya.size}"
        )
    return xa - ya


def binary_pair(
    x: ArrayLike, y: ArrayLike, names: tuple[str, str] = ("x", "y")
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Two pass/fail samples of equal length (``binary_1d`` each)."""
    xa, ya = binary_1d(x, names[0]), binary_1d(y, names[1])
    if xa.shape != ya.shape:
        raise ValueError(
            f"{names[0]} and {names[1]} must be paired (same length), got {xa.size} and {ya.size}"
        )
    return xa, ya


def count(value: float, name: str, *, minimum: int = 0) -> int:
    """A whole number ≥ ``minimum`` (floats like 3.0 are accepted)."""
    if isinstance(value, bool) or not float(value).is_integer():
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    out = int(value)
    if out < minimum:
        raise ValueError(f"{name} must be ≥ {minimum}, got {value!r}")
    return out


def binary_1d(values: ArrayLike, name: str) -> NDArray[np.bool_]:
    """A non-empty 1-D array of pass/fail values given as bool or 0/1."""
    arr = labels_1d(values, name)
    if arr.dtype == np.bool_:
        return arr
    uniq = set(np.unique(arr).tolist())
    if not uniq <= {0, 1}:
        shown = sorted(map(repr, uniq))[:5]
        raise ValueError(f"{name} must hold only 0/1 or booleans, got values {', '.join(shown)}")
    return arr.astype(bool)


def category_order(
    seen: set[Hashable], categories: Sequence[Hashable] | None
) -> tuple[Hashable, ...]:
    """The ordered categories of the labels ``seen``: ``categories`` (no duplicates, holding
    every label), else the labels sorted."""
    if categories is None:
        try:
            return tuple(sorted(seen))  # type: ignore[type-var]
        except TypeError as exc:
            raise ValueError(
                "labels of mixed types cannot be ordered; pass categories explicitly"
            ) from exc
    cats = tuple(categories)
    if len(set(cats)) != len(cats):
        raise ValueError(f"categories contains duplicates: {cats!r}")
    missing = seen - set(cats)
    if missing:
        raise ValueError(f"labels not in categories: {sorted(map(repr, missing))}")
    return cats
