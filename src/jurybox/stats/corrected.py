"""Bias-corrected pairwise win rate from a judge's confusion matrix on labelled pairs.

A judge that misreads some A-wins as ties or B-wins shifts its raw win rate. With a labelled set
(human outcome and judge verdict per pair) the judge's confusion matrix M[t, l] = P(judge says l
| truth t) is estimable; the judge's verdict shares on the unlabelled pairs are q = Mᵀ π, so the
true outcome shares are π = (Mᵀ)⁻¹ q — the A/B/tie generalisation of Rogan–Gladen.
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


@dataclass(frozen=True, slots=True, eq=False)
class CorrectedWinRate:
    """Win rate of the first class (ties half) corrected for the judge's misclassification.

    ``shares`` are the corrected outcome shares π in ``classes`` order (they may leave [0, 1]
    when the judge is weak or the sets small, as Rogan–Gladen can); ``estimate`` = π_A + ½π_tie
    clipped to [0, 1]; ``raw_rate`` is the judge's uncorrected rate on the unlabelled pairs.
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
            tie class third (counted as half a win).
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
        classes=cats,
        confusion=confusion,
        n_labelled=int(table.sum()),
        n_unlabelled=int(verdicts.sum()),
        confidence=conf,
        n_bootstrap=draws,
        method="misclassification-matrix inversion (A/B/tie Rogan-Gladen), ties count half; "
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
        tables: s × k × k labelled counts (rows true outcome, columns judge verdict).
        verdicts: s × k counts of the judge's verdicts on the unlabelled pairs.
        confidence: Two-sided confidence level.
        n_bootstrap: Draws per data set.
        rng: Generator.

    Returns:
        Lower and upper bounds (length s), clipped to [0, 1]; NaN where fewer than 90% of the
        draws had an invertible confusion matrix.
    """
    s, k, _ = tables.shape
    # Dirichlet draws as normalised gammas: rows of M and q, (s, B, k, k) and (s, B, k)
    m = rng.standard_gamma(tables[:, None] + 0.5, size=(s, n_bootstrap, k, k))
    m /= m.sum(axis=3, keepdims=True)
    q = rng.standard_gamma(verdicts[:, None] + 0.5, size=(s, n_bootstrap, k))
    q /= q.sum(axis=2, keepdims=True)
    rates = _rate(_invert(m.reshape(-1, k, k), q.reshape(-1, k))).reshape(s, n_bootstrap)
    valid = np.isfinite(rates)
    tail = (1 - confidence) / 2
    low, high = np.full(s, np.nan), np.full(s, np.nan)
    for i in range(s):
        if valid[i].mean() >= _MIN_VALID:
            low[i], high[i] = np.quantile(rates[i, valid[i]], [tail, 1 - tail])
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def _invert(confusion: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """π solving Mᵀ π = q for a stack of matrices; NaN rows where M is (near) singular."""
    det = np.linalg.det(confusion)
    ok = np.abs(det) > 1e-9
    shares = np.full(q.shape, np.nan)
    if ok.any():
        transposed = np.swapaxes(confusion[ok], 1, 2)
        shares[ok] = np.linalg.solve(transposed, q[ok][..., None])[..., 0]
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
    missing = [cats[i] for i in range(len(cats)) if table[i].sum() == 0]
    if missing:
        raise ValueError(f"the labelled set has no pair whose true outcome is {missing!r}")
    verdicts = np.bincount(_codes(u, index, "unlabeled_preds"), minlength=len(cats))
    return table, verdicts.astype(np.float64)


def _codes(values: NDArray[Any], index: dict[Hashable, int], name: str) -> NDArray[np.intp]:
    unknown = {v for v in values.tolist() if v not in index}
    if unknown:
        raise ValueError(f"{name} has values outside classes: {sorted(map(repr, unknown))}")
    return np.array([index[v] for v in values.tolist()], dtype=np.intp)
