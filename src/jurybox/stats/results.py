"""Frozen result types returned by ``jurybox.stats``.

Every estimator returns one of these, never a bare tuple. Each carries a ``method`` string that
records the variant used (exact vs normal approximation, zero/tie handling, interval method), so a
report can say exactly what was computed. Intervals are two-sided at ``confidence`` unless the
type says otherwise. Types holding numpy arrays compare by identity (``eq=False``). A result a
report shows as one number declares that number's field in ``headline`` (the report's ``value``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "AlphaResult",
    "BinomialTestResult",
    "BordaResult",
    "CorrectedRate",
    "CorrelationResult",
    "CronbachAlphaResult",
    "DawidSkeneResult",
    "EffectSizeResult",
    "FleissKappaResult",
    "HolmResult",
    "ICCResult",
    "KappaResult",
    "KruskalResult",
    "LowDiscriminationWarning",
    "McNemarResult",
    "PercentAgreement",
    "ProportionInterval",
    "RankBiserialResult",
    "RoganGladenResult",
    "TOSTResult",
    "TprTnrResult",
    "WilcoxonResult",
    "WinRateResult",
]


class LowDiscriminationWarning(UserWarning):
    """The judge barely separates pass from fail (TPR + TNR − 1 close to 0).

    The Rogan–Gladen correction divides by TPR + TNR − 1, so as it approaches 0 the corrected rate
    and its interval blow up; the number should not be trusted.
    """


# --- agreement -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PercentAgreement:
    """Share of items on which two raters give the same label (Wilson interval)."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    n_agree: int
    n_items: int
    confidence: float
    method: str
    n_clusters: int | None = None  # items, where the interval counts them (None: Wilson)


@dataclass(frozen=True, slots=True)
class KappaResult:
    """Cohen's kappa (optionally weighted) with its interval and asymptotic standard errors.

    ``ase`` is the non-null asymptotic standard error (the Wald interval's), ``ase0`` the one
    under H0: kappa = 0 (used for ``z`` and ``p_value``, two-sided). With a bootstrap interval
    ``n_clusters`` counts the items resampled.
    """

    headline: ClassVar[str] = "kappa"

    kappa: float
    ase: float
    ci_low: float
    ci_high: float
    ase0: float
    z: float
    p_value: float
    n_items: int
    categories: tuple[Hashable, ...]
    weights: str | None
    confidence: float
    method: str
    n_clusters: int | None = None  # items the bootstrap resampled (None: asymptotic interval)
    n_bootstrap: int | None = None


@dataclass(frozen=True, slots=True)
class FleissKappaResult:
    """Fleiss' kappa for many raters; ``se0``/``z``/``p_value`` are under H0: kappa = 0."""

    headline: ClassVar[str] = "kappa"

    kappa: float
    p_observed: float
    p_expected: float
    se0: float
    z: float
    p_value: float
    n_items: int  # units rated (an item in one order, arm or repeat is a unit)
    n_raters: int
    n_categories: int
    method: str
    ci_low: float | None = None  # expanded BCa bootstrap over items (None: see method)
    ci_high: float | None = None
    n_clusters: int | None = None  # the items the bootstrap draws
    confidence: float | None = None


@dataclass(frozen=True, slots=True)
class AlphaResult:
    """Krippendorff's alpha at one level of measurement."""

    headline: ClassVar[str] = "alpha"

    alpha: float
    level: str
    n_units: int
    n_raters: int
    n_pairable_values: int
    method: str


# --- reliability ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ICCResult:
    """Intraclass correlation (Shrout & Fleiss 1979 / McGraw & Wong 1996 forms).

    ``f``, ``df1``, ``df2`` and ``p_value`` test H0: ICC = 0 (one-way F for kinds ``1,*``,
    two-way F otherwise).
    """

    headline: ClassVar[str] = "icc"

    icc: float
    kind: str
    f: float
    df1: float
    df2: float
    p_value: float
    ci_low: float
    ci_high: float
    n_targets: int
    n_raters: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class CronbachAlphaResult:
    """Cronbach's alpha (internal consistency) with Feldt's F-based interval."""

    headline: ClassVar[str] = "alpha"

    alpha: float
    ci_low: float
    ci_high: float
    n_subjects: int
    n_items: int
    confidence: float
    method: str


# --- tests and effect sizes ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test.

    ``statistic`` is scipy's (two-sided: min(T+, T-); one-sided: T+). ``z`` is set only for the
    normal approximation. ``n`` counts the pairs used after ``zero_method``.
    """

    headline: ClassVar[str] = "statistic"

    statistic: float
    p_value: float
    z: float | None
    n: int
    n_zero: int
    alternative: str
    zero_method: str
    correction: bool
    method: str


@dataclass(frozen=True, slots=True)
class EffectSizeResult:
    """A standardised effect size with an interval (e.g. Cohen's d_z)."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class RankBiserialResult:
    """Matched-pairs rank-biserial correlation r = (T+ − T−) / (T+ + T−) (Kerby 2014)."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    t_plus: float
    t_minus: float
    n: int
    n_zero: int
    method: str


@dataclass(frozen=True, slots=True)
class TOSTResult:
    """Two one-sided paired t-tests for equivalence within [margin_low, margin_high].

    ``p_value`` = max of the two one-sided p-values; ``equivalent`` = p_value < alpha.
    ``ci_low``/``ci_high`` is the (1 − 2·alpha) interval of the mean difference.
    """

    headline: ClassVar[str] = "mean_diff"

    p_value: float
    equivalent: bool
    mean_diff: float
    t_lower: float
    p_lower: float
    t_upper: float
    p_upper: float
    df: float
    ci_low: float
    ci_high: float
    margin_low: float
    margin_high: float
    alpha: float
    n: int
    method: str


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """McNemar's test on the discordant cells ``b`` (row 0, col 1) and ``c`` (row 1, col 0)."""

    headline: ClassVar[str] = "statistic"

    statistic: float
    p_value: float
    b: int
    c: int
    n_discordant: int
    method: str


@dataclass(frozen=True, slots=True)
class CorrelationResult:
    """A (partial) rank correlation with its test and interval."""

    headline: ClassVar[str] = "rho"

    rho: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    n_covariates: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class KruskalResult:
    """Kruskal–Wallis H test (tie-corrected) with epsilon-squared effect size."""

    headline: ClassVar[str] = "statistic"

    statistic: float
    df: int
    p_value: float
    epsilon_squared: float
    n: int
    n_groups: int
    method: str


@dataclass(frozen=True, slots=True)
class BinomialTestResult:
    """Exact binomial test (e.g. how often a judge prefers the first position)."""

    headline: ClassVar[str] = "proportion"

    successes: int
    n: int
    proportion: float
    null_proportion: float
    p_value: float
    ci_low: float
    ci_high: float
    alternative: str
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class HolmResult:
    """Holm step-down adjusted p-values, in the input order."""

    adjusted: tuple[float, ...]
    reject: tuple[bool, ...]
    alpha: float
    method: str


# --- proportions and corrected pass rates --------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProportionInterval:
    """A proportion with a confidence interval."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    successes: float
    n: int
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class TprTnrResult:
    """A judge's true-positive and true-negative rates against gold labels."""

    headline: ClassVar[str] = "youden"

    tpr: ProportionInterval
    tnr: ProportionInterval
    n_positive: int
    n_negative: int
    youden: float
    method: str


@dataclass(frozen=True, slots=True)
class RoganGladenResult:
    """Rogan–Gladen corrected prevalence; ``raw`` is before clipping to [0, 1]."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    raw: float
    clipped: bool
    p_obs: float
    tpr: float
    tnr: float
    method: str


@dataclass(frozen=True, slots=True)
class CorrectedRate:
    """Bias-corrected pass rate with an interval carrying both sets' sampling uncertainty."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    tpr: float
    tnr: float
    n_labelled: int
    n_unlabelled: int
    method: str
    p_obs: float
    confidence: float
    n_bootstrap: int


@dataclass(frozen=True, slots=True)
class WinRateResult:
    """Win rate of A over B with ties handled as ``method`` says, and a Wilson interval."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    wins: int
    losses: int
    ties: int
    n: int
    confidence: float
    method: str


# --- aggregation ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BordaResult:
    """Borda count: ``ranking`` is best first; ``scores`` maps candidate to total points."""

    ranking: tuple[Hashable, ...]
    scores: Mapping[Hashable, float]
    n_rankings: int
    method: str


@dataclass(frozen=True, slots=True, eq=False)
class DawidSkeneResult:
    """Dawid–Skene EM estimates from a judges × items label matrix without gold labels.

    ``confusion[j, t, l]`` = P(judge j says class l | true class t); ``accuracy[j]`` =
    sum_t prior[t] · confusion[j, t, t]; ``posteriors[i, t]`` = P(item i is class t | labels);
    ``labels`` are the MAP classes (values from ``classes``). ``log_likelihood``, ``n_iter``
    and ``converged`` describe the best of ``n_starts`` EM runs, whose final log-likelihoods
    are ``start_log_likelihoods`` (the majority-vote start first).
    """

    classes: tuple[Hashable, ...]
    priors: NDArray[np.float64] = field(repr=False)
    confusion: NDArray[np.float64] = field(repr=False)
    accuracy: NDArray[np.float64]
    posteriors: NDArray[np.float64] = field(repr=False)
    labels: tuple[Hashable, ...] = field(repr=False)
    log_likelihood: float
    n_iter: int
    converged: bool
    method: str
    n_starts: int = 1
    start_log_likelihoods: tuple[float, ...] = ()
