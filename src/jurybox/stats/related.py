"""Tests for related samples: Friedman + Kendall's W, the paired position test, and FDR control.

Judges who score the *same* items give related samples (one block per item), so their levels are
compared with Friedman's test, not Kruskal–Wallis. A pair judged in both orders is one paired
observation, so position bias is tested on the pairs whose two orders disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats as sps

from jurybox.stats._validate import binary_pair, confidence_level, numeric_1d, numeric_2d
from jurybox.stats.clustered import effective_counts
from jurybox.stats.hypothesis import binomial_test

__all__ = [
    "FDRResult",
    "FriedmanResult",
    "PairedPositionResult",
    "benjamini_hochberg",
    "friedman",
    "paired_position_test",
]


@dataclass(frozen=True, slots=True)
class FriedmanResult:
    """Friedman's rank test over blocks (items) × treatments (judges) with Kendall's W.

    ``kendall_w`` = statistic / (n_blocks · (n_treatments − 1)): 0 = treatments rank items at
    random relative to each other, 1 = every block ranks the treatments identically.
    """

    headline: ClassVar[str] = "statistic"

    statistic: float
    df: int
    p_value: float
    kendall_w: float
    n_blocks: int
    n_treatments: int
    method: str


@dataclass(frozen=True, slots=True)
class PairedPositionResult:
    """Position bias from pairs judged in both orders.

    A pair whose winner flips with the order was decided by position: ``n_first_both`` pairs got
    the first-shown response in both orders, ``n_second_both`` the second-shown in both.
    ``proportion_first`` = n_first_both / n_discordant; 0.5 means no position preference.
    """

    headline: ClassVar[str] = "proportion_first"

    proportion_first: float
    ci_low: float
    ci_high: float
    p_value: float
    n_first_both: int
    n_second_both: int
    n_discordant: int
    n_pairs: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class FDRResult:
    """Benjamini–Hochberg adjusted p-values (q-values) and reject flags, in the input order."""

    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    alpha: float
    method: str


def friedman(scores: ArrayLike) -> FriedmanResult:
    """Friedman's test that k judges (columns) score the same n items (rows) alike.

    Args:
        scores: n blocks (items) × k treatments (judges), complete; n ≥ 2, k ≥ 3 (scipy's
            test needs three treatments; with two use ``wilcoxon_signed_rank``).

    Returns:
        ``FriedmanResult`` with the tie-corrected chi-square, its p-value (k − 1 df) and
        Kendall's W computed from the same tie-corrected statistic.

    References:
        Friedman, M. (1937). The use of ranks to avoid the assumption of normality. JASA 32,
        675–701. Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings. Annals
        of Mathematical Statistics 10, 275–287. Computed with ``scipy.stats.friedmanchisquare``.
    """
    x = numeric_2d(scores, "scores")
    n, k = x.shape
    if n < 2:
        raise ValueError(f"scores needs at least 2 blocks (rows), got shape {x.shape}")
    if k < 3:
        raise ValueError(
            f"Friedman's test needs at least 3 treatments (columns), got shape {x.shape}; "
            "compare two with wilcoxon_signed_rank"
        )
    if np.all(x == x[:, :1]):
        raise ValueError("every block gives all treatments the same score: no ranks to compare")
    res = sps.friedmanchisquare(*x.T)
    stat = float(res.statistic)
    return FriedmanResult(
        statistic=stat,
        df=k - 1,
        p_value=float(res.pvalue),
        kendall_w=stat / (n * (k - 1)),
        n_blocks=n,
        n_treatments=k,
        method="Friedman chi-square (tie-corrected, k − 1 df); Kendall's W = chi2 / (n(k − 1))",
    )


def paired_position_test(
    first_in_order_ab: ArrayLike,
    first_in_order_ba: ArrayLike,
    *,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
) -> PairedPositionResult:
    """Exact sign (McNemar) test of position bias on pairs judged in both orders.

    Args:
        first_in_order_ab: Per pair, 1 if the judge picked the first-shown response when A was
            shown first (ties dropped beforehand).
        first_in_order_ba: Per pair, 1 if it picked the first-shown response when B was first.
        confidence: Two-sided confidence level of the interval.
        clusters: The item of each pair, where an item has several (repeats): the discordant
            counts are divided by their design effect (Rao & Scott 1992; ``binomial_test``).

    Returns:
        ``PairedPositionResult``: among pairs whose winner changed with the order, the share
        that went to the first-shown response both times, its Wilson interval and the exact
        two-sided binomial p-value against 0.5. Consistent pairs carry no position information.

    References:
        McNemar, Q. (1947). Psychometrika 12, 153–157 (exact conditional form on discordant
        pairs). Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena
        (swap-order consistency).
    """
    conf = confidence_level(confidence)
    names = ("first_in_order_ab", "first_in_order_ba")
    ab, ba = binary_pair(first_in_order_ab, first_in_order_ba, names)
    first, second = int(np.sum(ab & ba)), int(np.sum(~ab & ~ba))
    flips = first + second
    if flips == 0:
        raise ValueError("no pair's winner changed with the order: no discordant pairs to test")
    discordant = ab == ba
    deff = 1.0
    if clusters is not None:
        items = np.asarray(clusters)
        if items.shape != ab.shape:
            raise ValueError(
                f"clusters must have one entry per pair ({ab.size}), got {items.shape}"
            )
        deff = effective_counts(ab[discordant], items[discordant]).design_effect
    res = binomial_test(first, flips, 0.5, confidence=conf, design_effect=deff)
    method = "exact sign test (McNemar) on pairs whose two orders disagree; Wilson interval"
    if deff > 1.0:
        method += f"; Rao-Scott: discordant counts divided by the design effect {deff:.3g}"
    return PairedPositionResult(
        proportion_first=first / flips,
        ci_low=res.ci_low,
        ci_high=res.ci_high,
        p_value=res.p_value,
        n_first_both=first,
        n_second_both=second,
        n_discordant=flips,
        n_pairs=int(ab.size),
        confidence=conf,
        method=method,
    )


def benjamini_hochberg(pvalues: ArrayLike, *, alpha: float = 0.05) -> FDRResult:
    """Benjamini–Hochberg step-up adjustment (false discovery rate) of a family of p-values.

    Args:
        pvalues: The family's raw p-values, each in [0, 1].
        alpha: False discovery rate for the ``reject`` flags.

    Returns:
        ``FDRResult`` with BH-adjusted p-values and reject flags in the input order (as
        ``statsmodels`` ``multipletests(method="fdr_bh")``). Use ``holm`` for family-wise error.

    References:
        Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57,
        289–300.
    """
    level = confidence_level(alpha, "alpha")
    p = numeric_1d(pvalues, "pvalues")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues must all lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    # step-up: the adjusted value is the running minimum from the largest p downward
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return FDRResult(
        adjusted=tuple(float(v) for v in adjusted),
        reject=tuple(bool(v) for v in adjusted <= level),
        alpha=level,
        method="Benjamini-Hochberg (1995) step-up, false discovery rate",
    )
