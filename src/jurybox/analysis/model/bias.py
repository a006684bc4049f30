"""The ``bias`` family: position, verbosity, self-enhancement (``self_enhancement``), leniency."""

from __future__ import annotations

from typing import ClassVar

from jurybox.analysis.model._base import Metric, Model, Number, Section, Skipped
from jurybox.analysis.model.metrics import (
    BinomialTestMetric,
    CorrelationMetric,
    FriedmanMetric,
    KruskalMetric,
    PairedPositionMetric,
    WilcoxonMetric,
)
from jurybox.analysis.model.self_enhancement import SelfEnhancement

# --- position ------------------------------------------------------------------------------


class SwapConsistency(Metric):
    """Share of order pairs with the same verdict in both orders, given three ways.

    ``value``: over pairs where both orders succeeded. ``value_failures_counted``: a pair with a
    failed order counts as inconsistent (the trust verdict's headline). ``equal``: LLMBar's
    published convention, pairs failed in both orders count as equal (None == None). The
    intervals (of ``value`` and of ``value_failures_counted``) count items: an item's repeats
    are one cluster (``stats.clustered_proportion``).
    """

    consistent: int
    n_pairs_total: int
    both_failed: int
    one_failed: int
    consistent_or_both_failed: int
    value_failures_counted: Number | None = None
    equal: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    failures_counted_ci_low: Number | None = None
    failures_counted_ci_high: Number | None = None
    n_items: int | None = None

    computed_order: ClassVar[tuple[str, ...]] = (
        "value",
        "ci_low",
        "ci_high",
        "n",
        "n_items",
        "consistent",
        "n_pairs_total",
        "both_failed",
        "one_failed",
        "consistent_or_both_failed",
        "value_failures_counted",
        "failures_counted_ci_low",
        "failures_counted_ci_high",
        "equal",
        "method",
        "reason",
        "warnings",
    )


class FirstPositionRate(BinomialTestMetric):
    """How often the first-shown response wins a decisive verdict, against 0.5 (Holm-adjusted)."""

    ties: int | None = None
    p_holm: Number | None = None


class ScoreOrderEffect(WilcoxonMetric):
    """Score shown first minus score shown second, same arm and item."""

    mean_difference: Number | None = None
    difference: str | None = None


class PairedPosition(PairedPositionMetric):
    """The paired position test (Holm-adjusted across judges): primary where the judge saw the
    pairs in both orders; the binomial ``first_position_rate`` treats the orders as independent."""

    p_holm: Number | None = None


class PositionJudge(Model):
    """One judge's position bias."""

    swap_consistency: SwapConsistency | Skipped
    first_position_rate: FirstPositionRate | Skipped
    score_order_effect: dict[str, ScoreOrderEffect]
    paired_position_test: PairedPosition | Skipped | None = None


class Position(Section):
    """Position bias per judge; ``top_position_rate`` keyed ``judge|k=<positions>`` (rankings)."""

    judges: dict[str, PositionJudge] | None = None
    top_position_rate: dict[str, BinomialTestMetric] | None = None


# --- verbosity -----------------------------------------------------------------------------


class Fit(Metric):
    """A regression coefficient (OLS or logit) with its test, interval and (pseudo) R²."""

    p_value: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    r_squared: Number | None = None

    computed_order: ClassVar[tuple[str, ...]] = (
        "value",
        "n",
        "p_value",
        "ci_low",
        "ci_high",
        "r_squared",
        "method",
        "reason",
        "warnings",
    )


class LengthFit(Fit):
    """The OLS slope of score on response length, in units of ``length_unit_chars``."""

    length_unit_chars: int | None = None


class VerbosityScores(Model):
    """Does a judge score longer responses higher?"""

    spearman: CorrelationMetric
    partial_spearman: CorrelationMetric
    ols: LengthFit
    detected: bool | None
    direction: str | None
    p_holm: Number | None = None


class LengthGivenTruth(Model):
    """The judge's pull toward the longer response beyond the gold labels
    (``jurybox.stats.length_preference_given_truth``): ``difference`` = P(picks the longer | gold
    is the shorter) − P(picks the shorter | gold is the longer)."""

    difference: Number
    ci_low: Number
    ci_high: Number
    p_value: Number
    rate_toward: Number
    rate_away: Number
    n: int
    method: str


class VerbosityPreferences(Model):
    """Does a judge prefer the longer response? With gold labels, ``detected`` reads the test
    conditioned on them (``given_truth``): being right is never a length bias."""

    longer_preferred: BinomialTestMetric
    logit: Fit
    detected: bool | None
    detected_by: str
    p_holm: Number | None = None
    given_truth: LengthGivenTruth | None = None


class VerbosityJudge(Model):
    """One judge's verbosity bias, on scores and on preferences where it gave them."""

    scores: VerbosityScores | None = None
    preferences: VerbosityPreferences | None = None


class Verbosity(Section):
    """Verbosity bias per judge; ``multiplicity`` says how the "detected" flags are corrected."""

    length_unit: str | None = None
    judges: dict[str, VerbosityJudge] | None = None
    multiplicity: str | None = None


# --- leniency ------------------------------------------------------------------------------


class JudgeMean(Model):
    """A judge's mean score and how many scores it averages."""

    mean: Number
    n: int


class LeniencyJudge(Model):
    """One judge's mean total on the common units, and its mean per dimension (all units)."""

    mean: Number | None
    n: int
    dimensions: dict[str, JudgeMean | None]


class LeniencyRange(Metric):
    """Max minus min of the judges' mean total scores."""

    most_lenient: str
    most_severe: str

    computed_order: ClassVar[tuple[str, ...]] = (
        "value",
        "n",
        "reason",
        "most_lenient",
        "most_severe",
        "method",
        "warnings",
    )


class Leniency(Section):
    """Per-judge score levels, their range, Friedman (+ Kendall's W) on the units every judge
    scored (related samples: the primary test) and Kruskal-Wallis across judges beside it."""

    judges: dict[str, LeniencyJudge] | None = None
    method: str | None = None
    range: LeniencyRange | Skipped | None = None
    kruskal_wallis: KruskalMetric | Skipped | None = None
    friedman: FriedmanMetric | Skipped | None = None


class Bias(Section):
    """The bias family."""

    position: Position | None = None
    verbosity: Verbosity | None = None
    self_enhancement: SelfEnhancement | None = None
    leniency: Leniency | None = None
