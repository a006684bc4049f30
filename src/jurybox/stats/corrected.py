"""Bias-corrected pairwise win rate from a judge's confusion matrix on labelled pairs.

A judge that misreads some A-wins as ties or B-wins shifts its raw win rate. With a labelled set
(human outcome and judge verdict per pair) the judge's confusion matrix M[t, l] = P(judge says l
| truth t) is estimable; the judge's verdict shares on the unlabelled pairs are q = Mᵀ π, so the
true outcome shares are π = (Mᵀ)⁻¹ q — the A/B/tie generalisation of Rogan–Gladen. Human gold
labels often have no ties while a judge's verdicts do (a verdict that flips with the order is a
tie): then M is 2 × 3 (true A/B by verdict A/B/tie) and π is the least-squares solution of
Mᵀ π = q with π_A + π_B = 1, which is exact whenever q = Mᵀ π holds.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import confidence_level, count, labels_1d

__all__ = ["CorrectedWinRate", "corrected_win_rate", "corrected_win_rate_bounds"]

_MIN_VALID = 0.9  # share of draws whose confusion matrix must be invertible
_SOLVERS = {
    False: "misclassification-matrix inversion (A/B/tie Rogan-Gladen)",
    True: "least squares on the 2 x 3 confusion matrix (no labelled tie; the judge's ties kept)",
}


@dataclass(frozen=True, slots=True, eq=False)
class CorrectedWinRate:
    """Win rate of the first class (ties half) corrected for the judge's misclassification.

    ``shares`` are the corrected outcome shares π in ``classes`` order (the true outcomes: the
    tie class only when a labelled pair is a tie; they may leave [0, 1] when the judge is weak
    or the sets small, as Rogan–Gladen can); ``estimate`` = π_A + ½π_tie clipped to [0, 1];
    ``raw_rate`` is the judge's uncorrected rate on the unlabelled pairs; ``confusion`` is
    P(verdict | truth), true outcomes by every verdict class.
    """

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    raw_rate: float
    shares: tuple[float, ...]
    classes: tuple[Hashable, ...]
    confusion: NDArray[np.float64] = field(repr=False)
    n_labelled: int
    n_unlabelled: int
    confidence: float
    n_bootstrap: int
    method: str


def corrected_win_rate(
    test_labels: ArrayLike,
    test_preds: ArrayLike,
    unlabeled_preds: ArrayLike,
    *,
    classes: Sequence[Hashable] = ("A", "B", "tie"),
    confidence: float = 0.95,
    n_bootstrap: int = 4000,
    rng: RNGLike = None,
) -> CorrectedWinRate:
    """Bias-corrected win rate of A over B whose interval carries both sets' uncertainty.

    Args:
        test_labels: Human outcome of each labelled pair (values in ``classes``).
        test_preds: The judge's verdict on the same pairs.
        unlabeled_preds: The judge's verdicts on the unlabelled pairs.
        classes: Outcome names: the win class first, the loss class second and optionally a
            tie class third (counted as half a win). With a tie class but no labelled tie,
            the truth has two classes and the judge's ties enter through the 2 × 3 matrix.
        confidence: Two-sided confidence level.
        n_bootstrap: Posterior draws (≥ 1000).
        rng: Generator, seed or None.

    Returns:
        ``CorrectedWinRate``. The interval draws each row of M and the verdict shares q from
        their Jeffreys posteriors Dirichlet(counts + ½) — a smoothed Bayesian bootstrap of the
        labelled pairs per true outcome and of the unlabelled verdicts, as
        ``corrected_pass_rate`` does — inverts each draw and takes equal-tailed percentiles.
        Draws with a singular M are dropped. Coverage: tests/stats/test_stats_corrected.py and
        bench/corrected_estimates.py.

    References:
        Rogan, W. J. & Gladen, B. (1978). AJE 107, 71–76 (the binary case). Buonaccorsi, J. P.
        (2010). Measurement Error: Models, Methods and Applications, §3.3 (misclassification
        matrix inversion). Rubin, D. B. (1981). The Bayesian bootstrap. Ann. Statist. 9.
    """
    conf = confidence_level(confidence)
    draws = count(n_bootstrap, "n_bootstrap", minimum=1000)
    cats = _classes(classes)
    table, verdicts = _counts(test_labels, test_preds, unlabeled_preds, cats)
    confusion = table / table.sum(axis=1, keepdims=True)
    q = verdicts / verdicts.sum()
    shares = _invert(confusion[None], q[None])[0]
    truths = cats[: table.shape[0]]
    if not np.all(np.isfinite(shares)):
        raise ValueError("the judge's confusion matrix is singular: its verdicts carry no signal")
    low, high = corrected_win_rate_bounds(
        table[None], verdicts[None], confidence=conf, n_bootstrap=draws, rng=as_generator(rng)
    )
    return CorrectedWinRate(
        estimate=float(np.clip(_rate(shares[None])[0], 0.0, 1.0)),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        raw_rate=float(_rate(q[None])[0]),
        shares=tuple(float(v) for v in shares),
        classes=truths,
        confusion=confusion,
        n_labelled=int(table.sum()),
        n_unlabelled=int(verdicts.sum()),
        confidence=conf,
        n_bootstrap=draws,
        method=f"{_SOLVERS[table.shape == (2, 3)]}, ties count half; "
        f"Jeffreys-Dirichlet posterior bootstrap of both sets ({draws} draws), percentile",
    )


def corrected_win_rate_bounds(
    tables: NDArray[np.float64],
    verdicts: NDArray[np.float64],
    *,
    confidence: float,
    n_bootstrap: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Interval bounds for many data sets at once (the vectorised core; coverage tests use it).

    Args:
        tables: s × t × k labelled counts (rows true outcome, columns judge verdict; t = k, or
            t = 2 and k = 3 when no labelled pair is a tie).
        verdicts: s × k counts of the judge's verdicts on the unlabelled pairs.
        confidence: Two-sided confidence level.
        n_bootstrap: Draws per data set.
        rng: Generator.

    Returns:
        Lower and upper bounds (length s), clipped to [0, 1]; NaN where fewer than 90% of the
        draws had an invertible confusion matrix.
    """
    s, t, k = tables.shape
    # Dirichlet draws as normalised gammas: rows of M and q, (s, B, t, k) and (s, B, k)
    m = rng.standard_gamma(tables[:, None] + 0.5, size=(s, n_bootstrap, t, k))
    m /= m.sum(axis=3, keepdims=True)
    q = rng.standard_gamma(verdicts[:, None] + 0.5, size=(s, n_bootstrap, k))
    q /= q.sum(axis=2, keepdims=True)
    rates = _rate(_invert(m.reshape(-1, t, k), q.reshape(-1, k))).reshape(s, n_bootstrap)
    valid = np.isfinite(rates)
    tail = (1 - confidence) / 2
    low, high = np.full(s, np.nan), np.full(s, np.nan)
    for i in range(s):
        if valid[i].mean() >= _MIN_VALID:
            low[i], high[i] = np.quantile(rates[i, valid[i]], [tail, 1 - tail])
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def _invert(confusion: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """π solving Mᵀ π = q for a stack of t × k matrices; NaN rows where M is (near) singular.

    Square M: the exact solution. t < k: least squares with Σπ = 1 through its KKT system
    [[2MMᵀ, 1], [1ᵀ, 0]] [π; μ] = [2Mq; 1]; for square invertible M both agree (Mᵀπ = q
    already sums to 1)."""
    n, t, k = confusion.shape
    if t == k:
        ok = np.abs(np.linalg.det(confusion)) > 1e-9
        shares = np.full((n, t), np.nan)
        if ok.any():
            transposed = np.swapaxes(confusion[ok], 1, 2)
            shares[ok] = np.linalg.solve(transposed, q[ok][..., None])[..., 0]
        return shares
    gram = confusion @ np.swapaxes(confusion, 1, 2)  # M Mᵀ, t × t
    ok = np.abs(np.linalg.det(gram)) > 1e-12
    kkt = np.zeros((n, t + 1, t + 1))
    kkt[:, :t, :t] = 2 * gram
    kkt[:, :t, t] = kkt[:, t, :t] = 1.0
    rhs = np.concatenate([2 * (confusion @ q[..., None])[..., 0], np.ones((n, 1))], axis=1)
    shares = np.full((n, t), np.nan)
    if ok.any():
        shares[ok] = np.linalg.solve(kkt[ok], rhs[ok][..., None])[:, :t, 0]
    return shares


def _rate(shares: NDArray[np.float64]) -> NDArray[np.float64]:
    """Win rate with ties as half: π_win + ½ π_tie (the tie column is the third, if any)."""
    rate: NDArray[np.float64] = shares[:, 0] + (0.5 * shares[:, 2] if shares.shape[1] > 2 else 0)
    return rate


def _classes(classes: Sequence[Hashable]) -> tuple[Hashable, ...]:
    cats = tuple(classes)
    if len(cats) not in (2, 3) or len(set(cats)) != len(cats):
        raise ValueError(f"classes must be 2 or 3 distinct outcomes (win, loss[, tie]), got {cats}")
    return cats


def _counts(
    labels: ArrayLike, preds: ArrayLike, unlabeled: ArrayLike, cats: tuple[Hashable, ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    y, p = labels_1d(labels, "test_labels"), labels_1d(preds, "test_preds")
    u = labels_1d(unlabeled, "unlabeled_preds")
    if y.shape != p.shape:
        raise ValueError(f"test_labels and test_preds must be paired, got {y.size} and {p.size}")
    index = {c: i for i, c in enumerate(cats)}
    codes = [_codes(v, index, name) for v, name in ((y, "test_labels"), (p, "test_preds"))]
    table = np.zeros((len(cats), len(cats)))
    np.add.at(table, (codes[0], codes[1]), 1.0)
    if len(cats) == 3 and table[2].sum() == 0:
        table = table[:2]  # no labelled tie: true A/B against the judge's A/B/tie verdicts
    missing = [cats[i] for i in range(table.shape[0]) if table[i].sum() == 0]
    if missing:
        raise ValueError(f"the labelled set has no pair whose true outcome is {missing!r}")
    verdicts = np.bincount(_codes(u, index, "unlabeled_preds"), minlength=len(cats))
    return table, verdicts.astype(np.float64)


def _codes(values: NDArray[Any], index: dict[Hashable, int], name: str) -> NDArray[np.intp]:
    unknown = {v for v in values.tolist() if v not in index}
    if unknown:
        raise ValueError(f"{name} has values outside classes: {sorted(map(repr, unknown))}")
    return np.array([index[v] for v in values.tolist()], dtype=np.intp)
