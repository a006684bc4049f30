"""Aggregating many judges: Dawid–Skene EM and Borda count."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linear_sum_assignment

from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import LabelMatrix
from jurybox.stats.results import BordaResult, DawidSkeneResult

FloatArray = NDArray[np.float64]


def dawid_skene(
    labels_matrix: LabelMatrix,
    *,
    classes: Sequence[Hashable] | None = None,
    max_iter: int = 1000,
    tol: float = 1e-8,
    tol_posterior: float = 1e-6,
    smoothing: float = 0.01,
    n_starts: int = 4,
    rng: RNGLike = None,
) -> DawidSkeneResult:
    """Dawid–Skene EM over a judges × items label matrix, without gold labels.

    Each judge j has a confusion matrix π_j[t, l] = P(j says l | true class t); items' true
    classes are latent with prior ρ. EM alternates the M-step (ρ, π from the posteriors, each
    count plus ``smoothing``) and the E-step (posteriors from ρ, π) until the log-likelihood
    gains less than ``tol`` relative to its size *and* no item's posterior moves by more than
    ``tol_posterior``: EM creeps, and on its own the relative gain stopped runs whose
    posteriors were still moving by 10⁻³ while reporting them converged. The first start is the
    (soft) majority vote (ties broken by a tiny seeded jitter); the others are random item
    posteriors. The start with
    the highest final log-likelihood wins (ties keep the majority-vote start); every run's
    classes are first matched to the majority vote's (Hungarian assignment), because a run
    that lands on the same solution with the class names permuted has the same likelihood.

    Args:
        labels_matrix: judges (rows) × items (columns); None or NaN = the judge did not label
            the item. Labels may be any hashable values.
        classes: The class set (default: sorted observed labels); at least two.
        max_iter: EM iterations at most, per start.
        tol: Stop when the log-likelihood improves by less than ``tol × max(1, |log-lik|)``
            (an absolute 1e-8 with 200 iterations left 6 of 20 simulated panels unconverged)
            and the posteriors have settled (``tol_posterior``).
        tol_posterior: The largest change of an item's class posterior between iterations
            that counts as settled (``math.inf``: the log-likelihood alone decides).
        smoothing: Pseudo-count added to every confusion cell and class count (keeps
            log-probabilities finite with few labels).
        n_starts: EM runs (≥ 1): the majority-vote start plus ``n_starts − 1`` random ones.
        rng: Generator, seed or None (the start's jitter and the random starts).

    Returns:
        ``DawidSkeneResult`` with priors, per-judge confusion matrices and accuracies, item
        posteriors and MAP labels, the best start's log-likelihood and convergence information,
        and every start's final log-likelihood.

    References:
        Dawid, A. P. & Skene, A. M. (1979). Maximum likelihood estimation of observer
        error-rates using the EM algorithm. Applied Statistics 28, 20–28.
    """
    if max_iter < 1 or tol <= 0 or tol_posterior <= 0 or smoothing < 0 or n_starts < 1:
        raise ValueError(
            "need max_iter >= 1, tol > 0, tol_posterior > 0, smoothing >= 0 and n_starts >= 1, "
            f"got {max_iter}, {tol}, {tol_posterior}, {smoothing}, {n_starts}"
        )
    onehot, cats = _one_hot(labels_matrix, classes)
    n_judges, n_items, n_classes = onehot.shape
    # items × (judge, label) indicators: the M-step is one matrix product
    wide = onehot.transpose(1, 0, 2).reshape(n_items, n_judges * n_classes)
    # judges × items label index (n_classes: no label): the E-step gathers by it
    said = np.where(onehot.any(axis=2), onehot.argmax(axis=2), n_classes)
    data = _Labels(wide, said)
    generator = as_generator(rng)
    votes = onehot.sum(axis=0)  # items × classes
    jitter = generator.uniform(0.0, 1e-6, votes.shape)
    starts = [_normalise(votes + jitter + (votes.sum(axis=1, keepdims=True) == 0))]
    starts += [generator.dirichlet(np.ones(n_classes), n_items) for _ in range(n_starts - 1)]
    stop = _Stop(max_iter, tol, tol_posterior)
    runs = [_em(data, post, smoothing, stop) for post in starts]
    runs = [(_align(run[0], starts[0]), *run[1:]) for run in runs]
    best = runs[0]
    for run in runs[1:]:
        if run[1] > best[1] + tol * max(1.0, abs(best[1])):
            best = run
    post, log_lik, iteration, converged = best
    priors, confusion = _m_step(wide, post, smoothing)
    accuracy = np.einsum("t,jtt->j", priors, confusion)
    return DawidSkeneResult(
        classes=cats,
        priors=priors,
        confusion=confusion,
        accuracy=accuracy,
        posteriors=post,
        labels=tuple(cats[i] for i in np.argmax(post, axis=1)),
        log_likelihood=float(log_lik),
        n_iter=iteration,
        converged=converged,
        method=f"Dawid-Skene EM (1979), best of {n_starts} starts (majority vote + random), "
        f"relative tol={tol:g}, posterior tol={tol_posterior:g}, max_iter={max_iter}, "
        f"smoothing={smoothing:g}",
        n_starts=n_starts,
        start_log_likelihoods=tuple(float(run[1]) for run in runs),
    )


def _align(post: FloatArray, reference: FloatArray) -> FloatArray:
    """Relabel a run's classes to match the majority vote (EM is blind to class names)."""
    _, columns = linear_sum_assignment(-(reference.T @ post))
    return np.asarray(post[:, columns], dtype=np.float64)


class _Labels(NamedTuple):
    wide: FloatArray  # items × (judge, label) indicators
    said: NDArray[np.intp]  # judges × items: the label's index, n_classes where none


class _Stop(NamedTuple):
    max_iter: int
    tol: float  # relative log-likelihood gain
    tol_posterior: float  # largest posterior change


def _em(
    data: _Labels, post: FloatArray, smoothing: float, stop: _Stop
) -> tuple[FloatArray, float, int, bool]:
    """One EM run from item posteriors ``post``: (posteriors, log-lik, iterations, converged)."""
    log_lik, iteration = -math.inf, 0
    for iteration in range(1, stop.max_iter + 1):
        priors, confusion = _m_step(data.wide, post, smoothing)
        new_post, new_log_lik = _e_step(data.said, priors, confusion)
        gain_small = new_log_lik - log_lik < stop.tol * max(1.0, abs(new_log_lik))
        moved = float(np.max(np.abs(new_post - post))) if post.size else 0.0
        post = new_post
        if gain_small and moved <= stop.tol_posterior:
            return post, new_log_lik, iteration, True
        log_lik = new_log_lik
    return post, log_lik, iteration, False


def borda_count(rankings: Sequence[Sequence[Hashable]]) -> BordaResult:
    """Borda count over complete rankings given best first.

    With c candidates, first place earns c − 1 points and last place 0; the result ranks by
    total points, ties kept in the order of the first ranking.

    Args:
        rankings: One ranking per judge (or per item), each an ordering of the same set of
            at least two candidates, best first.

    Returns:
        ``BordaResult`` with the aggregate ranking (best first) and each candidate's points.

    References:
        de Borda, J.-C. (1781). Mémoire sur les élections au scrutin. Emerson, P. (2013). The
        original Borda count and partial voting. Social Choice and Welfare 40, 353–358.
    """
    orders = [tuple(r) for r in rankings]
    if not orders:
        raise ValueError("rankings is empty")
    first = orders[0]
    if len(first) < 2:
        raise ValueError(f"Borda count needs at least 2 candidates, got {len(first)}")
    if len(set(first)) != len(first):
        raise ValueError(f"ranking 0 lists a candidate twice: {first!r}")
    candidates = set(first)
    scores: dict[Hashable, float] = dict.fromkeys(first, 0.0)
    for i, order in enumerate(orders):
        if len(order) != len(first) or set(order) != candidates:
            raise ValueError(
                f"ranking {i} must order the same {len(first)} candidates as ranking 0, "
                f"got {order!r}"
            )
        for position, cand in enumerate(order):
            scores[cand] += len(order) - 1 - position
    ranking = tuple(sorted(first, key=lambda c: -scores[c]))  # stable: ties keep ranking-0 order
    return BordaResult(
        ranking=ranking,
        scores=scores,
        n_rankings=len(orders),
        method="Borda count (c-1 points for first ... 0 for last); ties in ranking-0 order",
    )


# --- helpers -------------------------------------------------------------------------------


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _one_hot(
    labels_matrix: LabelMatrix, classes: Sequence[Hashable] | None
) -> tuple[FloatArray, tuple[Hashable, ...]]:
    raw = np.asarray(labels_matrix, dtype=object)
    if raw.ndim != 2 or raw.size == 0:
        raise ValueError(
            f"labels_matrix must be a non-empty judges × items matrix, got shape {raw.shape}"
        )
    n_judges, n_items = raw.shape
    if n_judges < 2:
        raise ValueError(f"Dawid-Skene needs at least 2 judges (rows), got {n_judges}")
    codes, distinct = _distinct(raw.ravel())
    present = codes >= 0
    if not present.any():
        raise ValueError("labels_matrix has no labels (everything is missing)")
    plain = [_plain(v) for v in distinct]
    seen = set(plain)
    cats = _sorted(seen) if classes is None else tuple(classes)
    if len(cats) < 2 or len(set(cats)) != len(cats):
        raise ValueError(f"need at least two distinct classes, got {cats!r}")
    index = {c: k for k, c in enumerate(cats)}
    unknown = seen - set(cats)
    if unknown:
        raise ValueError(f"labels not in classes: {sorted(map(repr, unknown))}")
    class_of = np.array([index[v] for v in plain], dtype=np.intp)
    cells = np.flatnonzero(present)
    onehot = np.zeros((n_judges, n_items, len(cats)))
    onehot[cells // n_items, cells % n_items, class_of[codes[cells]]] = 1.0
    return onehot, cats


def _distinct(values: NDArray[np.object_]) -> tuple[NDArray[np.intp], list[Any]]:
    """Each cell's code (-1: missing) and the distinct labels, grouped as a set groups them
    (1 and 1.0 alike): ``_plain`` and the class lookup then run once per distinct label, not
    once per cell (a panel of a million judgments has a handful of labels)."""
    first: dict[Any, int] = {}
    distinct: list[Any] = []
    codes = np.empty(values.size, dtype=np.intp)
    for cell, value in enumerate(values.tolist()):
        if _is_missing(value):
            codes[cell] = -1
            continue
        code = first.get(value)
        if code is None:
            code = first[value] = len(distinct)
            distinct.append(value)
        codes[cell] = code
    return codes, distinct


def _sorted(values: set[Hashable]) -> tuple[Hashable, ...]:
    try:
        return tuple(sorted(values))  # type: ignore[type-var]
    except TypeError:  # mixed types: any fixed order will do for nominal classes
        return tuple(sorted(values, key=repr))


def _plain(value: Any) -> Hashable:
    """numpy scalars to Python ones, and integral floats to ints, so 1.0 and 1 match."""
    item = value.item() if isinstance(value, np.generic) else value
    if isinstance(item, float) and item.is_integer():
        return int(item)
    return item  # type: ignore[no-any-return]


def _normalise(weights: FloatArray) -> FloatArray:
    return np.asarray(weights / weights.sum(axis=1, keepdims=True), dtype=np.float64)


def _m_step(wide: FloatArray, post: FloatArray, smoothing: float) -> tuple[FloatArray, FloatArray]:
    n_classes = post.shape[1]
    n_judges = wide.shape[1] // n_classes
    priors = (post.sum(axis=0) + smoothing) / (post.shape[0] + n_classes * smoothing)
    # counts[j, t, l] = sum_i post[i, t] * [judge j said l on item i]
    counts = (post.T @ wide).reshape(n_classes, n_judges, n_classes).transpose(1, 0, 2)
    counts = counts + smoothing
    totals = counts.sum(axis=2, keepdims=True)
    confusion = np.divide(counts, totals, out=np.full_like(counts, 1 / n_classes), where=totals > 0)
    return priors, confusion


def _e_step(
    said: NDArray[np.intp], priors: FloatArray, confusion: FloatArray
) -> tuple[FloatArray, float]:
    n_judges, n_classes, _ = confusion.shape
    tiny = np.finfo(np.float64).tiny  # smoothing=0 can leave exact zeros
    log_conf = np.log(np.maximum(confusion, tiny))  # [j, t, l]
    # by_label[j, l, t] = log P(judge j says l | t); row n_classes (no label) adds nothing.
    # A gather, not a product with the indicators: BLAS is slow on a 3-column product.
    by_label = np.zeros((n_judges, n_classes + 1, n_classes))
    by_label[:, :n_classes, :] = log_conf.transpose(0, 2, 1)
    gathered = by_label[np.arange(n_judges)[:, None], said].sum(axis=0)  # items × classes
    log_joint = np.log(np.maximum(priors, tiny))[None, :] + gathered
    norm = _logsumexp(log_joint)
    return np.exp(log_joint - norm), float(norm.sum())


def _logsumexp(values: FloatArray) -> FloatArray:
    """log(sum(exp(values))) over each row, shifted by the row's maximum (the rows are
    finite: log-probabilities floored at log(tiny)); scipy's general one cost most of EM."""
    top = values.max(axis=1, keepdims=True)
    shifted: FloatArray = np.log(np.exp(values - top).sum(axis=1, keepdims=True)) + top
    return shifted
