"""ADR-016's success measures as the ADR states them: does a dimensioned rubric make a panel of
judges agree more than one holistic score?

- ``variance_difference``: the inter-reviewer variance of a dimension's scores against that of
  the holistic score, paired by item, with a bootstrap interval over items and a decision;
- ``concordance``: Kendall's W of the panel's rankings with its null expectation (1/m for m
  judges) and a permutation p-value, with a decision.

The conciseness-vs-length check is ``hypothesis.wilcoxon_signed_rank`` (one-sided) on per-item
differences, formed by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import confidence_level, count, numeric_2d

__all__ = ["Concordance", "VarianceDifference", "concordance", "variance_difference"]

VarianceDecision = Literal["lower", "higher", "undecided"]
ConcordanceDecision = Literal["above chance", "no evidence"]


@dataclass(frozen=True, slots=True)
class VarianceDifference:
    """Mean inter-reviewer variance of a dimension minus that of the holistic score, per item.

    ``decision``: ``lower`` when the interval lies below 0 (the dimension's scores vary less
    between reviewers), ``higher`` when above, ``undecided`` when it holds 0.
    """

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    variance: float  # mean inter-reviewer variance of the dimension, over items
    holistic_variance: float
    ratio: float | None  # variance / holistic_variance (None when the holistic one is 0)
    decision: VarianceDecision
    n_items: int
    n_reviewers: int
    n_bootstrap: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class Concordance:
    """Kendall's W of m judges ranking n units, against its null expectation 1/m.

    ``decision``: ``above chance`` when the permutation p-value is below 1 − confidence.
    """

    headline: ClassVar[str] = "kendall_w"

    kendall_w: float
    null_expectation: float
    p_value: float
    friedman_p_value: float
    mean_spearman: float  # (mW − 1) / (m − 1), the mean pairwise Spearman rho
    decision: ConcordanceDecision
    n_judges: int
    n_units: int
    n_permutations: int
    confidence: float
    method: str


def _unit_variances(scores: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(np.var(scores, axis=0, ddof=1), dtype=np.float64)


def _per_item(values: NDArray[np.float64], groups: NDArray[Any]) -> NDArray[np.float64]:
    """The mean of ``values`` over the units of each item (items in first-seen order)."""
    _, first, codes = np.unique(groups, return_index=True, return_inverse=True)
    sums = np.bincount(codes, weights=values)
    means = sums / np.bincount(codes)
    return np.asarray(means[np.argsort(np.argsort(first))], dtype=np.float64)


def _check_pair(
    dimension: ArrayLike, holistic: ArrayLike, groups: ArrayLike | None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    dim = numeric_2d(dimension, "dimension")
    hol = numeric_2d(holistic, "holistic")
    if dim.shape[1] != hol.shape[1]:
        raise ValueError(
            f"dimension and holistic must score the same units (columns): got shapes "
            f"{dim.shape} and {hol.shape}"
        )
    if min(dim.shape[0], hol.shape[0]) < 2:
        raise ValueError(
            f"inter-reviewer variance needs at least 2 reviewers (rows), got shapes "
            f"{dim.shape} and {hol.shape}"
        )
    items = np.arange(dim.shape[1]) if groups is None else np.asarray(groups)
    if items.shape != (dim.shape[1],):
        raise ValueError(f"groups must name the item of each of {dim.shape[1]} units")
    if np.unique(items).size < 2:
        raise ValueError("the bootstrap over items needs at least 2 items")
    return dim, hol, items


def variance_difference(
    dimension: ArrayLike,
    holistic: ArrayLike,
    groups: ArrayLike | None = None,
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> VarianceDifference:
    """Does a rubric dimension vary less between reviewers than the holistic score?

    Per unit (a response), the variance of the reviewers' scores (ddof = 1); per item, the mean
    over its units; the estimate is the mean over items of dimension − holistic variance. The
    interval is scipy's BCa bootstrap resampling items (both variances of an item together).

    Args:
        dimension: reviewers × units, complete: each reviewer's score of the dimension.
        holistic: reviewers × the same units (same column order): the holistic scores.
        groups: The item of each unit (units of an item are resampled together); default:
            every unit its own item.
        confidence: Two-sided confidence level of the interval (the decision's level).
        n_bootstrap: Bootstrap resamples (≥ 200).
        rng: Generator, seed or None.

    Returns:
        ``VarianceDifference`` with the estimate, the interval, both mean variances, their
        ratio and the decision (``lower`` / ``higher`` / ``undecided``).

    References:
        Efron, B. & Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 14 (BCa).
        Computed with ``scipy.stats.bootstrap(paired=True, method="BCa")``.
    """
    dim, hol, items = _check_pair(dimension, holistic, groups)
    conf = confidence_level(confidence)
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    per_dim = _per_item(_unit_variances(dim), items)
    per_hol = _per_item(_unit_variances(hol), items)
    estimate = float(np.mean(per_dim - per_hol))
    low, high = _bca(per_dim - per_hol, conf, reps, rng)
    mean_hol = float(np.mean(per_hol))
    return VarianceDifference(
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        variance=float(np.mean(per_dim)),
        holistic_variance=mean_hol,
        ratio=float(np.mean(per_dim)) / mean_hol if mean_hol > 0 else None,
        decision="lower" if high < 0 else "higher" if low > 0 else "undecided",
        n_items=int(per_dim.size),
        n_reviewers=int(dim.shape[0]),
        n_bootstrap=reps,
        confidence=conf,
        method="mean over items of the inter-reviewer variance (ddof 1) of the dimension minus "
        "the holistic score's; BCa bootstrap over items (scipy.stats.bootstrap); decision "
        "'lower' / 'higher' when the interval excludes 0",
    )


def _bca(diffs: NDArray[np.float64], conf: float, reps: int, rng: RNGLike) -> tuple[float, float]:
    if np.all(diffs == diffs[0]):  # BCa is undefined on a constant sample: the interval is it
        return float(diffs[0]), float(diffs[0])
    res = sps.bootstrap(
        (diffs,),
        np.mean,
        confidence_level=conf,
        n_resamples=reps,
        method="BCa",
        random_state=as_generator(rng),  # ``rng=`` only from scipy 1.15
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _tie_term(x: NDArray[np.float64]) -> float:
    """Σ over judges and tie groups of t³ − t: fixed under permutations of a judge's scores."""
    total = 0.0
    for row in x:
        _, sizes = np.unique(row, return_counts=True)
        total += float(np.sum(sizes.astype(float) ** 3 - sizes))
    return total


def _w_statistic(ties: float) -> Callable[..., NDArray[np.float64]]:
    """Kendall's W (tie-corrected), vectorised over resamples, for the permutation test."""

    def statistic(*samples: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
        stacked = np.stack([np.moveaxis(s, axis, -1) for s in samples])  # m × ... × n
        m, n = stacked.shape[0], stacked.shape[-1]
        totals = sps.rankdata(stacked, axis=-1).sum(axis=0)
        spread = ((totals - totals.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
        return np.asarray(12 * spread / (m**2 * (n**3 - n) - m * ties), dtype=np.float64)

    return statistic


def concordance(
    scores: ArrayLike,
    *,
    confidence: float = 0.95,
    n_permutations: int = 9999,
    rng: RNGLike = None,
) -> Concordance:
    """Do m judges rank n units alike beyond chance? Kendall's W against its null.

    Under the null (each judge's ranking an independent random permutation) E[W] = 1/m, since
    the mean pairwise Spearman rho, (mW − 1)/(m − 1), has expectation 0; with 3 judges a W of
    1/3 is chance, not weak agreement. The p-value permutes each judge's scores over the units
    independently (``scipy.stats.permutation_test``, ``permutation_type="pairings"``, one-sided),
    exact at small m and n where the chi-square approximation of Friedman's test is not; that
    approximation's p-value is reported beside it.

    Args:
        scores: judges (m ≥ 2) × units (n ≥ 3), complete.
        confidence: The decision's level: ``above chance`` when p < 1 − confidence.
        n_permutations: Random permutations (exact when there are fewer distinct ones).
        rng: Generator, seed or None.

    Returns:
        ``Concordance`` with W, its null expectation 1/m, both p-values, the mean Spearman rho
        and the decision.

    References:
        Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings. Annals of
        Mathematical Statistics 10, 275–287. Legendre, P. (2005). Species associations: the
        Kendall coefficient of concordance revisited. JABES 10, 226–245 (E[W] = 1/m; the
        permutation test).
    """
    x = numeric_2d(scores, "scores")
    m, n = x.shape
    if m < 2 or n < 3:  # Friedman's test (scipy) needs 3 treatments: here the units
        raise ValueError(f"Kendall's W needs at least 2 judges × 3 units, got shape {x.shape}")
    if np.all(x == x[:, :1]):
        raise ValueError("every judge gives every unit the same score: no ranking to compare")
    conf = confidence_level(confidence)
    reps = count(n_permutations, "n_permutations", minimum=99)
    res = sps.permutation_test(
        tuple(x),
        _w_statistic(_tie_term(x)),
        permutation_type="pairings",
        alternative="greater",
        n_resamples=reps,
        vectorized=True,
        random_state=as_generator(rng),  # ``rng=`` only from scipy 1.15
    )
    w = float(res.statistic)
    return Concordance(
        kendall_w=w,
        null_expectation=1 / m,
        p_value=float(res.pvalue),
        friedman_p_value=float(sps.friedmanchisquare(*x.T).pvalue),
        mean_spearman=(m * w - 1) / (m - 1),
        decision="above chance" if res.pvalue < 1 - conf else "no evidence",
        n_judges=m,
        n_units=n,
        n_permutations=reps,
        confidence=conf,
        method="Kendall's W (tie-corrected); null expectation 1/m; p-value: permutation test "
        "of each judge's scores over the units (scipy.stats.permutation_test, pairings, "
        "one-sided); decision 'above chance' when p < 1 − confidence",
    )
