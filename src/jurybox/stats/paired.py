"""Paired comparisons of two conditions on the same items: two judge configurations, two runs.

What scipy and statsmodels do not give: an interval for the difference of two *paired*
proportions (accuracy of run B − accuracy of run A on the same items; over items when an item
has several judgments, ``paired_share_difference``), the Hodges–Lehmann shift
with its distribution-free interval (scipy's Wilcoxon test has no estimate), and the stability of
judges' rankings (mean pairwise Kendall tau with a bootstrap interval over items, and the paired
difference of two such stabilities).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import (
    binary_pair,
    confidence_level,
    count,
    numeric_1d,
    numeric_2d,
    paired,
)

__all__ = [
    "MeanDifference",
    "PairedProportionDifference",
    "RankingStability",
    "SharePairedDifference",
    "ShiftEstimate",
    "hodges_lehmann",
    "kendall_tau_difference",
    "kendall_tau_panel",
    "mean_difference",
    "paired_proportion_difference",
    "paired_share_difference",
]

_QUADRATIC_MAX = 2000  # units up to which bootstrap tau uses the n × n sign matrices
_EXACT_MAX = 50  # exact signed-rank distribution up to this many pairs (no ties, no zeros)


@dataclass(frozen=True, slots=True)
class PairedProportionDifference:
    """p_y − p_x for two binary outcomes on the same n units, with the Bonett–Price interval.

    ``n_x_only`` counts units where only x succeeded, ``n_y_only`` where only y did.
    """

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    p_x: float
    p_y: float
    n_x_only: int
    n_y_only: int
    n: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class SharePairedDifference:
    """Mean over n items of y's share of right judgments − x's, adjusted Wald interval over items.

    ``p_x``, ``p_y``: the mean over items of each condition's share; ``n_x_higher`` counts the
    items where x's share is the higher, ``n_y_higher`` where y's is; ``n`` counts items.
    """

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    p_x: float
    p_y: float
    n_x_higher: int
    n_y_higher: int
    n: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class MeanDifference:
    """Mean of x − y over paired units with the paired t interval and test."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class ShiftEstimate:
    """Hodges–Lehmann estimate of the location of x − y (median of the Walsh averages)."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class RankingStability:
    """Mean Kendall tau-b over the pairs of judges (or a difference of two), bootstrap interval."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    n_judges: int
    n_units: int
    n_bootstrap: int
    confidence: float
    method: str


def paired_proportion_difference(
    x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95
) -> PairedProportionDifference:
    """Difference p_y − p_x of two paired proportions with the Bonett–Price interval.

    Args:
        x: Outcome of each unit under the first condition (bool or 0/1).
        y: Outcome of the same units under the second condition.
        confidence: Two-sided confidence level.

    Returns:
        ``PairedProportionDifference``: the observed difference (y-only − x-only successes) / n
        and the adjusted Wald interval that adds one to each discordant count and two to n,
        clipped to [−1, 1]. It stays honest when few units changed, the usual case between two
        runs of one judge: with 0–2 changes in 30–40 units Newcombe's hybrid score interval
        (method 10) covered 0.67–0.91, this one ≥ 0.99; at 80 units with 25% discordance
        0.956 (simulations in tests/stats/test_stats_paired.py).

    References:
        Bonett, D. G. & Price, R. M. (2012). Adjusted Wald confidence interval for a difference
        of binomial proportions based on paired data. Journal of Educational and Behavioral
        Statistics 37, 479–488.
    """
    conf = confidence_level(confidence)
    xa, ya = binary_pair(x, y)
    n = xa.size
    x_only, y_only = int(np.sum(xa & ~ya)), int(np.sum(~xa & ya))
    p_x_only, p_y_only = (x_only + 1) / (n + 2), (y_only + 1) / (n + 2)
    centre = p_y_only - p_x_only
    z = float(sps.norm.ppf((1 + conf) / 2))
    half = z * math.sqrt((p_x_only + p_y_only - centre**2) / (n + 2))
    return PairedProportionDifference(
        estimate=(y_only - x_only) / n,
        ci_low=max(-1.0, centre - half),
        ci_high=min(1.0, centre + half),
        p_x=float(np.mean(xa)),
        p_y=float(np.mean(ya)),
        n_x_only=x_only,
        n_y_only=y_only,
        n=n,
        confidence=conf,
        method="difference of paired proportions; Bonett-Price (2012) adjusted Wald interval",
    )


def paired_share_difference(
    x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95
) -> SharePairedDifference:
    """Mean over items of the paired difference y − x of per-item shares, interval over items.

    Args:
        x: Per item, the share of its judgments (both orders, retests) right under the first
            condition, in [0, 1].
        y: The same items' shares under the second condition.
        confidence: Two-sided confidence level.

    Returns:
        ``SharePairedDifference``: the mean of the n per-item differences d and Bonett–Price's
        adjusted Wald interval carried over to them: two pseudo-items, d = +1 and d = −1, join
        the n, centre Σd / (n + 2), variance (Σd² + 2) / (n + 2) − centre², half-width z times
        its square root over √(n + 2), clipped to [−1, 1]. With one judgment per item it is
        exactly ``paired_proportion_difference``. The item is the unit: the orders of an item
        usually agree, so they are not independent. The paired t over items covered 0.47
        when few items changed (20 items, 5 % of judgments changed); this one 0.966–1.000
        over the grid (BENCHMARKS.md, "jurybox compare
        intervals"; tests/stats/test_stats_paired.py).

    References:
        Bonett, D. G. & Price, R. M. (2012). Journal of Educational and Behavioral Statistics
        37, 479–488.
    """
    conf = confidence_level(confidence)
    xa, ya = numeric_1d(x, "x"), numeric_1d(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must be paired (same length), got {xa.size} and {ya.size}")
    if ((xa < 0) | (xa > 1) | (ya < 0) | (ya > 1)).any():
        raise ValueError("per-item shares must lie in [0, 1]")
    d = ya - xa
    n = d.size
    centre = float(d.sum()) / (n + 2)
    variance = (float(np.sum(d**2)) + 2) / (n + 2) - centre**2
    half = float(sps.norm.ppf((1 + conf) / 2)) * math.sqrt(variance / (n + 2))
    return SharePairedDifference(
        estimate=float(d.mean()),
        ci_low=max(-1.0, centre - half),
        ci_high=min(1.0, centre + half),
        p_x=float(xa.mean()),
        p_y=float(ya.mean()),
        n_x_higher=int(np.sum(d < 0)),
        n_y_higher=int(np.sum(d > 0)),
        n=n,
        confidence=conf,
        method="mean over items of the paired difference of each item's share of right "
        "judgments; Bonett-Price (2012) adjusted Wald interval over items (a pseudo-item each "
        "way)",
    )


def mean_difference(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> MeanDifference:
    """Mean paired difference x − y with Student's paired t interval and two-sided test.

    Args:
        x: First sample (n ≥ 2).
        y: Second sample, paired with ``x``.
        confidence: Two-sided confidence level.

    Returns:
        ``MeanDifference``; computed with ``scipy.stats.ttest_rel``.

    References:
        Student (1908). The probable error of a mean. Biometrika 6, 1–25.
    """
    conf = confidence_level(confidence)
    d = paired(x, y, min_size=2)
    if np.all(d == d[0]):
        raise ValueError("every paired difference is the same: the t interval is undefined")
    res = sps.ttest_1samp(d, 0.0)
    low, high = res.confidence_interval(conf)
    return MeanDifference(
        estimate=float(np.mean(d)),
        ci_low=float(low),
        ci_high=float(high),
        p_value=float(res.pvalue),
        n=int(d.size),
        confidence=conf,
        method="mean paired difference; Student's paired t interval and test",
    )


def hodges_lehmann(
    x: ArrayLike, y: ArrayLike | None = None, *, confidence: float = 0.95
) -> ShiftEstimate:
    """Hodges–Lehmann (pseudo)median of x − y with the Wilcoxon-inverted interval.

    Args:
        x: First sample, or the differences when ``y`` is None.
        y: Second sample, paired with ``x``.
        confidence: Two-sided confidence level.

    Returns:
        ``ShiftEstimate``: the median of the n(n+1)/2 Walsh averages of the differences, and the
        interval between the k-th smallest and k-th largest Walsh average, k from the exact
        signed-rank distribution (n ≤ 50, no ties, no zero differences; as R's
        ``wilcox.test(conf.int=TRUE)``) or its normal approximation otherwise (ties make that
        interval conservative).

    References:
        Hodges, J. L. & Lehmann, E. L. (1963). Estimates of location based on rank tests. Annals
        of Mathematical Statistics 34, 598–611. Hollander, M. & Wolfe, D. A. (1999).
        Nonparametric Statistical Methods, 2nd ed., §3.2.
    """
    conf = confidence_level(confidence)
    d = paired(x, y, min_size=2)
    n = d.size
    i, j = np.triu_indices(n)
    walsh = np.sort((d[i] + d[j]) / 2)
    magnitudes = np.abs(d)
    exact = n <= _EXACT_MAX and np.all(d != 0) and np.unique(magnitudes).size == n
    k = _exact_rank(n, 1 - conf) if exact else _normal_rank(n, 1 - conf)
    variant = "exact signed-rank distribution" if exact else "normal approximation"
    return ShiftEstimate(
        estimate=float(np.median(walsh)),
        ci_low=float(walsh[k - 1]),
        ci_high=float(walsh[walsh.size - k]),
        n=int(n),
        confidence=conf,
        method=f"Hodges-Lehmann median of Walsh averages; interval from the {variant}",
    )


def _exact_rank(n: int, alpha: float) -> int:
    """R's ``qsignrank(alpha / 2, n)`` (at least 1): the order statistic of the lower limit."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for rank in range(1, n + 1):  # number of subsets of {1..n} with each rank sum
        counts[rank:] = counts[rank:] + counts[:-rank].copy()
    cdf = np.cumsum(counts) / 2.0**n
    return max(1, int(np.searchsorted(cdf, alpha / 2 - 1e-12)))


def _normal_rank(n: int, alpha: float) -> int:
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return max(1, math.floor(mean - float(sps.norm.ppf(1 - alpha / 2)) * sd))


def kendall_tau_panel(
    scores: ArrayLike,
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 1000,
    rng: RNGLike = None,
) -> RankingStability:
    """How alike judges rank the same items: mean pairwise Kendall tau-b, bootstrap interval.

    Args:
        scores: judges × units, complete (each judge's score of each item/response).
        confidence: Two-sided confidence level.
        n_bootstrap: Replicates resampling units with replacement (≥ 200).
        rng: Generator, seed or None.

    Returns:
        ``RankingStability`` with the mean tau-b over the judge pairs and a percentile interval.

    References:
        Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33,
        239–251. Efron, B. & Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 13.
    """
    matrix = _panel(scores, "scores")
    conf = confidence_level(confidence)
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    point = _mean_tau(matrix)
    weights = _unit_weights(as_generator(rng), matrix.shape[1], reps)
    low, high = _percentiles(_tau_replicates(matrix, weights), conf)
    return RankingStability(
        estimate=point,
        ci_low=low,
        ci_high=high,
        n_judges=matrix.shape[0],
        n_units=matrix.shape[1],
        n_bootstrap=reps,
        confidence=conf,
        method=f"mean Kendall tau-b over judge pairs; percentile bootstrap over units ({reps})",
    )


def kendall_tau_difference(
    scores_x: ArrayLike,
    scores_y: ArrayLike,
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 1000,
    rng: RNGLike = None,
) -> RankingStability:
    """Ranking stability of y minus that of x on the same units (paired bootstrap).

    Args:
        scores_x: judges × units under the first condition.
        scores_y: judges × the same units (same column order) under the second.
        confidence: Two-sided confidence level.
        n_bootstrap: Replicates; each resamples the units once for both conditions.
        rng: Generator, seed or None.

    Returns:
        ``RankingStability`` whose estimate is mean tau-b(y) − mean tau-b(x).
    """
    mx, my = _panel(scores_x, "scores_x"), _panel(scores_y, "scores_y")
    if mx.shape[1] != my.shape[1]:
        raise ValueError(f"scores_x and scores_y need the same units, got {mx.shape} {my.shape}")
    conf = confidence_level(confidence)
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    weights = _unit_weights(as_generator(rng), mx.shape[1], reps)
    boot = _tau_replicates(my, weights) - _tau_replicates(mx, weights)
    low, high = _percentiles(boot, conf)
    return RankingStability(
        estimate=_mean_tau(my) - _mean_tau(mx),
        ci_low=low,
        ci_high=high,
        n_judges=min(mx.shape[0], my.shape[0]),
        n_units=mx.shape[1],
        n_bootstrap=reps,
        confidence=conf,
        method="difference of mean Kendall tau-b over judge pairs; paired percentile bootstrap "
        f"over units ({reps})",
    )


def _panel(scores: ArrayLike, name: str) -> NDArray[np.float64]:
    matrix = numeric_2d(scores, name)
    if matrix.shape[0] < 2 or matrix.shape[1] < 3:
        raise ValueError(f"{name} needs at least 2 judges × 3 units, got shape {matrix.shape}")
    if np.any(np.all(matrix == matrix[:, :1], axis=1)):
        raise ValueError(f"{name}: a judge gives every unit the same score, so it ranks nothing")
    return matrix


def _mean_tau(matrix: NDArray[np.float64]) -> float:
    """Mean tau-b over judge pairs (scipy's, the reference for the replicates below)."""
    taus = [
        sps.kendalltau(matrix[a], matrix[b]).statistic
        for a, b in itertools.combinations(range(matrix.shape[0]), 2)
    ]
    return float(np.mean(taus))


def _unit_weights(gen: np.random.Generator, units: int, reps: int) -> NDArray[np.float64]:
    """How often each unit is drawn in each bootstrap replicate (reps × units)."""
    return gen.multinomial(units, np.full(units, 1 / units), size=reps).astype(np.float64)


def _tau_replicates(
    matrix: NDArray[np.float64], weights: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Mean tau-b over judge pairs of each resample, from the weights alone.

    Copies of one unit tie with each other in every judge, so on a resample with counts w,
    tau-b = Σ w_i w_j s_ij t_ij / √(Σ w_i w_j |s_ij| · Σ w_i w_j |t_ij|) over distinct units,
    s and t the signs of the two judges' score differences: one quadratic form per replicate
    instead of a sort (scipy per replicate was 5 ms a call). Large panels fall back to scipy on
    the expanded resample, keeping memory at O(units) per judge.
    """
    if matrix.shape[1] > _QUADRATIC_MAX:
        units = np.arange(matrix.shape[1])
        return np.array(
            [_mean_tau(matrix[:, np.repeat(units, w.astype(np.intp))]) for w in weights]
        )
    signs = [np.sign(row[:, None] - row[None, :]) for row in matrix]

    def form(pattern: NDArray[np.float64]) -> NDArray[np.float64]:
        found: NDArray[np.float64] = np.sum((weights @ pattern) * weights, axis=1)
        return found

    untied = [form(np.abs(sign)) for sign in signs]
    pairs = list(itertools.combinations(range(matrix.shape[0]), 2))
    total = np.zeros(weights.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for a, b in pairs:  # a judge constant in a resample gives NaN, dropped later
            total += form(signs[a] * signs[b]) / np.sqrt(untied[a] * untied[b])
    result: NDArray[np.float64] = total / len(pairs)
    return result


def _percentiles(boot: NDArray[np.float64], conf: float) -> tuple[float, float]:
    finite = boot[np.isfinite(boot)]
    if finite.size < 0.9 * boot.size:
        raise ValueError("too few bootstrap replicates had variation for an interval")
    low, high = np.quantile(finite, [(1 - conf) / 2, (1 + conf) / 2])
    return float(low), float(high)
