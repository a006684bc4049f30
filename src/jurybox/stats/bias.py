"""Bias tests that condition on the truth: a preference *beyond* what the gold labels explain.

A judge that is always right picks the longer answer exactly as often as the gold answer is the
longer one; a raw "longer wins" rate calls that a length bias. Conditioning on the gold label
removes it: an unbiased judge's errors are as likely to go toward the longer answer when the gold
is the shorter as toward the shorter when the gold is the longer. The same holds for position
(first-shown vs second-shown) and any other feature one response has and the other lacks.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from statsmodels.discrete.discrete_model import Logit
from statsmodels.stats.proportion import confint_proportions_2indep

from jurybox.stats._validate import binary_1d, confidence_level, numeric_1d
from jurybox.stats.clustered import cluster_codes, effective_counts

__all__ = [
    "ConditionalPreference",
    "LengthLogitResult",
    "conditional_preference",
    "length_logit",
    "length_preference_given_truth",
    "position_preference_given_truth",
]


@dataclass(frozen=True, slots=True)
class ConditionalPreference:
    """A judge's pull toward a feature (longer, shown first) beyond the gold labels.

    ``rate_toward`` = P(judge picks the response with the feature | gold is the other one);
    ``rate_away`` = P(judge picks the other | gold has the feature). Both are error rates; an
    unbiased judge has them equal, so the headline is ``difference`` = toward − away (> 0: the
    judge leans toward the feature) with its interval and the exact test of equality.
    """

    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    rate_toward: float
    rate_away: float
    errors_toward: int
    n_gold_without: int  # verdicts whose gold response lacks the feature
    errors_away: int
    n_gold_with: int  # verdicts whose gold response has the feature
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class LengthLogitResult:
    """Logistic model of the verdict on the gold label and the log length ratio.

    ``coefficient`` is the change in the log-odds of picking a response per unit of
    log(len(that response) / len(the other)), the gold label held fixed; > 0 means longer
    responses are picked more than their correctness explains. ``odds_ratio`` = exp(coefficient).
    """

    coefficient: float
    ci_low: float
    ci_high: float
    p_value: float
    odds_ratio: float
    gold_coefficient: float
    n: int
    confidence: float
    method: str


def conditional_preference(
    picked_feature: ArrayLike,
    gold_feature: ArrayLike,
    *,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
) -> ConditionalPreference:
    """Compare the judge's errors toward a feature with its errors away from it.

    Args:
        picked_feature: Per decided verdict (ties and failures dropped), whether the judge picked
            the response that has the feature (e.g. the longer, or the first-shown one).
        gold_feature: Per verdict, whether the gold (better) response has the feature.
        confidence: Two-sided level of the interval for the difference.
        clusters: The item of each verdict (an item judged in both orders, or again, gives
            several): each group's counts are divided by its design effect (Rao & Scott 1992,
            ``stats.effective_counts``) before the interval and the test. None: independent.

    Returns:
        ``ConditionalPreference``: the two error rates, their difference with a Newcombe hybrid
        score interval, and Fisher's exact two-sided p-value for the 2×2 table (of the effective
        counts rounded to whole numbers where ``clusters`` is given).

    Raises:
        ValueError: on empty, non-binary or unequal-length input, or when the gold response has
            (or lacks) the feature in every verdict, so one of the rates is undefined.

    References:
        Newcombe, R. G. (1998). Interval estimation for the difference between independent
        proportions: comparison of eleven methods. Statistics in Medicine 17, 873–890 (method 10;
        ``statsmodels.stats.proportion.confint_proportions_2indep(method="newcomb")``).
        Fisher, R. A. (1935). The logic of inductive inference. JRSS 98, 39–82
        (``scipy.stats.fisher_exact``). Rao, J. N. K. & Scott, A. J. (1992). A simple method
        for the analysis of clustered binary data. Biometrics 48, 577–585. When an item's two
        orders fall on opposite sides (position), its errors are positively correlated across
        the groups, which the adjustment leaves out: the test is conservative there.
    """
    level = confidence_level(confidence)
    picked = binary_1d(picked_feature, "picked_feature")
    gold = binary_1d(gold_feature, "gold_feature")
    if picked.shape != gold.shape:
        raise ValueError(
            f"picked_feature and gold_feature must have the same length, got {picked.size} "
            f"and {gold.size}"
        )
    n_without, n_with = int((~gold).sum()), int(gold.sum())
    if n_without == 0 or n_with == 0:
        raise ValueError(
            "the gold response must have the feature in some verdicts and lack it in others "
            f"(with: {n_with}, without: {n_without})"
        )
    toward = int((picked & ~gold).sum())
    away = int((~picked & gold).sum())
    counts, note = _group_counts(picked != gold, gold, clusters)
    low, high = confint_proportions_2indep(
        *counts, method="newcomb", compare="diff", alpha=1 - level
    )
    whole = [round(c) for c in counts]
    table = [[whole[0], whole[1] - whole[0]], [whole[2], whole[3] - whole[2]]]
    p_value = float(sps.fisher_exact(table, alternative="two-sided").pvalue)
    return ConditionalPreference(
        difference=toward / n_without - away / n_with,
        ci_low=float(low),
        ci_high=float(high),
        p_value=min(p_value, 1.0),
        rate_toward=toward / n_without,
        rate_away=away / n_with,
        errors_toward=toward,
        n_gold_without=n_without,
        errors_away=away,
        n_gold_with=n_with,
        confidence=level,
        method="error-rate difference, Newcombe hybrid score interval, Fisher exact test" + note,
    )


def _group_counts(
    error: NDArray[np.bool_], gold: NDArray[np.bool_], clusters: ArrayLike | None
) -> tuple[tuple[float, float, float, float], str]:
    """(errors, verdicts) of the gold-without group, then of the gold-with group: raw, or
    divided by each group's design effect over items (and a note for the method)."""
    if clusters is None:
        raw = (error[~gold].sum(), (~gold).sum(), error[gold].sum(), gold.sum())
        return tuple(float(c) for c in raw), ""  # type: ignore[return-value]
    items = np.asarray(clusters)
    if items.shape != error.shape:
        raise ValueError(
            f"clusters must have one entry per verdict ({error.size}), got {items.shape}"
        )
    without = effective_counts(error[~gold], items[~gold])
    with_ = effective_counts(error[gold], items[gold])
    note = (
        "; Rao-Scott: each group's counts divided by its design effect over items "
        f"({without.design_effect:.3g}, {with_.design_effect:.3g})"
    )
    return (without.successes, without.n, with_.successes, with_.n), note


def length_preference_given_truth(
    picked_longer: ArrayLike,
    gold_longer: ArrayLike,
    *,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
) -> ConditionalPreference:
    """P(judge picks the longer | gold is the shorter) vs P(picks the shorter | gold is longer).

    Args:
        picked_longer: Per decided verdict on a pair of unequal lengths, whether the judge picked
            the longer response.
        gold_longer: Per verdict, whether the gold response is the longer one.
        confidence: Two-sided level of the interval.
        clusters: The item of each verdict (see ``conditional_preference``).

    Returns:
        ``ConditionalPreference`` with ``difference`` > 0 when the judge errs toward length.

    References:
        See ``conditional_preference``; the conditioning follows Zheng, L. et al. (2023).
        Judging LLM-as-a-judge with MT-Bench and Chatbot Arena (verbosity bias), and Zeng, Z. et
        al. (2024). Evaluating large language models at evaluating instruction following
        (LLMBar), whose gold answers are often the shorter.
    """
    return conditional_preference(
        picked_longer, gold_longer, confidence=confidence, clusters=clusters
    )


def position_preference_given_truth(
    picked_first: ArrayLike,
    gold_first: ArrayLike,
    *,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
) -> ConditionalPreference:
    """P(judge picks the first-shown | gold is second) vs P(picks second-shown | gold is first).

    Args:
        picked_first: Per decided verdict where the judge saw both responses together, whether it
            picked the one shown first.
        gold_first: Per verdict, whether the gold response was shown first.
        confidence: Two-sided level of the interval.
        clusters: The item of each verdict (see ``conditional_preference``).

    Returns:
        ``ConditionalPreference`` with ``difference`` > 0 when the judge errs toward the first.

    References:
        See ``conditional_preference``; position bias as in Wang, P. et al. (2023). Large
        language models are not fair evaluators. arXiv:2305.17926.
    """
    return conditional_preference(
        picked_first, gold_first, confidence=confidence, clusters=clusters
    )


def length_logit(
    picked: ArrayLike,
    gold: ArrayLike,
    log_length_ratio: ArrayLike,
    *,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
) -> LengthLogitResult:
    """Logit of the verdict on the gold label and the log length ratio (Wald interval and test).

    Each verdict is coded from one response's side (say the first-listed): ``picked`` whether the
    judge picked it, ``gold`` whether it is the gold response, ``log_length_ratio`` =
    log(len(it) / len(the other)). The model is
    logit P(picked) = b0 + b_gold · gold + b_len · log_length_ratio.

    Args:
        picked: 0/1 per decided verdict.
        gold: 0/1 per verdict, same length.
        log_length_ratio: Finite floats, same length, not all equal.
        confidence: Two-sided level of the interval for ``b_len``.
        clusters: The item of each verdict (an item judged in both orders gives two): the
            covariance is cluster-robust over items (statsmodels ``cov_type="cluster"``).

    Returns:
        ``LengthLogitResult`` with ``b_len``, its Wald interval and p-value, and ``b_gold``.

    Raises:
        ValueError: on bad input, or when the fit is not identifiable: the gold label alone
            separates the verdicts (a judge that is always right, or always wrong, leaves no
            errors to explain), or the maximum-likelihood fit does not converge.

    References:
        Cox, D. R. (1958). The regression analysis of binary sequences. JRSS B 20, 215–242.
        Fitted by ``statsmodels.discrete.discrete_model.Logit`` (Newton-Raphson).
    """
    level = confidence_level(confidence)
    y = binary_1d(picked, "picked").astype(np.float64)
    g = binary_1d(gold, "gold").astype(np.float64)
    x = numeric_1d(log_length_ratio, "log_length_ratio")
    if not y.size == g.size == x.size:
        raise ValueError(
            f"picked, gold and log_length_ratio must have the same length, got {y.size}, "
            f"{g.size} and {x.size}"
        )
    _check_identifiable(y, g, x)
    design = np.column_stack([np.ones_like(x), g, x])
    groups = None if clusters is None else cluster_codes(clusters, y.size)
    fit = _fit_logit(y, design, groups)
    low, high = fit.conf_int(alpha=1 - level)[2]
    coefficient = float(fit.params[2])
    return LengthLogitResult(
        coefficient=coefficient,
        ci_low=float(low),
        ci_high=float(high),
        p_value=float(fit.pvalues[2]),
        odds_ratio=float(np.exp(coefficient)),
        gold_coefficient=float(fit.params[1]),
        n=int(y.size),
        confidence=level,
        method="logistic regression on gold label and log length ratio, Wald interval"
        + ("" if groups is None else " with cluster-robust covariance over items"),
    )


def _check_identifiable(
    y: NDArray[np.float64], g: NDArray[np.float64], x: NDArray[np.float64]
) -> None:
    if np.ptp(x) == 0:
        raise ValueError("log_length_ratio is constant: the length effect is not identifiable")
    if np.ptp(g) == 0:
        raise ValueError("gold takes one value only: the model needs both kinds of verdict")
    if np.all(y == g) or np.all(y != g):
        raise ValueError(
            "the gold label alone separates the verdicts (no errors, or only errors): the "
            "length coefficient is not identifiable"
        )


def _fit_logit(
    y: NDArray[np.float64], design: NDArray[np.float64], groups: NDArray[Any] | None
) -> Any:
    robust: dict[str, Any] = (
        {} if groups is None else {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
    )
    with warnings.catch_warnings():
        # Quasi-separation shows up as a warning and a huge coefficient; it is refused below.
        warnings.simplefilter("ignore")
        try:
            fit = Logit(y, design).fit(disp=0, maxiter=100, **robust)
        except np.linalg.LinAlgError as exc:
            raise ValueError(f"the logistic fit failed: {exc}") from None
    converged = bool(fit.mle_retvals.get("converged", False))
    if not converged or not np.all(np.isfinite(fit.bse)) or np.max(np.abs(fit.params)) > 30:
        raise ValueError(
            "the logistic fit did not converge (a predictor separates the verdicts almost "
            "perfectly); the length coefficient is not identifiable"
        )
    return fit
