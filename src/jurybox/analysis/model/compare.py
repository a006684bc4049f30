"""The typed model of ``jurybox compare``: two or more runs over the same items, paired.

``CompareReport`` is what compare.json holds: one ``RunComparison`` per run against the first
(the baseline), one ``JudgeComparison`` per matched pair of judges (verdicts: accuracy vs gold
with McNemar's test and a paired interval, position consistency, agreement between the runs, the
units whose verdict changed; scores: the paired difference per dimension), and per run the
ADR-016 score study (inter-judge reliability per dimension, ranking stability, conciseness vs
length) with its cross-run differences.

The first screen of compare.html reads ``RunComparison.headlines`` (per paired judge: "better",
"worse" or "no evidence" on its headline figure, with both runs' trust levels) and
``config_changes`` (what differs between the two runs' configs and own prompts).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from jurybox.analysis.model._base import Label, Metric, Model, Number
from jurybox.analysis.model.metrics import (
    AlphaIntervalMetric,
    ClusteredProportionMetric,
    CorrelationMetric,
    ICCMetric,
    KappaMetric,
    McNemarMetric,
    PercentAgreementMetric,
    ProportionMetric,
    RankBiserialMetric,
    WilcoxonMetric,
)
from jurybox.stats.alpha_ci import AlphaDifference
from jurybox.stats.paired import (
    MeanDifference,
    PairedProportionDifference,
    RankingStability,
    SharePairedDifference,
    ShiftEstimate,
)
from jurybox.stats.study import Concordance, VarianceDifference

# 2: headlines, config_changes, RunSummary.report / trust; ChangedUnit.href gone (links are
# made by the pages, relative to where they are written).
# 3: ADR-016 as the ADR states it: ScoreStudy.concordance (Kendall's W against its null, was
# kendall_w) and conciseness_paired; DimensionVersusHolistic.variance decides lower_variance.
# 4: the item is the unit of the accuracy comparison (issue 33): AccuracyComparison.n_items,
# n_judgments_a/_b (was n_units), its difference a ShareDifferenceMetric over items and its
# test counting items; Headline.n_items; conciseness_paired.median_difference.
# 5: VerdictComparison.n_items; its agreement and kappa intervals count items (the design
# effect over items, a bootstrap drawing items), no longer units as if independent;
# Headline's score error and ScoreComparison are paired per item (the mean over its responses),
# with n_items.
COMPARE_SCHEMA_VERSION = 5

Answer = Literal["better", "worse", "no evidence"]
TrustLevel = Literal["trusted", "use_with_caution", "not_trusted", "insufficient_evidence"]


class PairedDifferenceMetric(Metric):
    """``PairedProportionDifference`` (p_B − p_A, Bonett–Price interval), headline ``estimate``."""

    result_type: ClassVar[type | None] = PairedProportionDifference
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_x: Number | None = None
    p_y: Number | None = None
    n_x_only: int | None = None
    n_y_only: int | None = None
    confidence: Number | None = None


class ShareDifferenceMetric(Metric):
    """``SharePairedDifference`` (mean over items of B's share right − A's, adjusted Wald
    interval over items), headline ``estimate``."""

    result_type: ClassVar[type | None] = SharePairedDifference
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_x: Number | None = None
    p_y: Number | None = None
    n_x_higher: int | None = None
    n_y_higher: int | None = None
    confidence: Number | None = None


class AlphaDifferenceMetric(Metric):
    """``AlphaDifference`` (interval alpha, rubric dimension − holistic), headline ``estimate``."""

    result_type: ClassVar[type | None] = AlphaDifference
    ci_low: Number | None = None
    ci_high: Number | None = None
    alpha_x: Number | None = None
    alpha_y: Number | None = None
    n_units: int | None = None
    n_bootstrap: int | None = None
    confidence: Number | None = None


class VarianceDifferenceMetric(Metric):
    """``VarianceDifference`` (inter-reviewer variance, dimension − holistic, per item),
    headline ``estimate``."""

    result_type: ClassVar[type | None] = VarianceDifference
    ci_low: Number | None = None
    ci_high: Number | None = None
    variance: Number | None = None
    holistic_variance: Number | None = None
    ratio: Number | None = None
    decision: Literal["lower", "higher", "undecided"] | None = None
    n_items: int | None = None
    n_reviewers: int | None = None
    n_bootstrap: int | None = None
    confidence: Number | None = None


class ConcordanceMetric(Metric):
    """``Concordance`` (Kendall's W against its null 1/m, permutation p), headline
    ``kendall_w``."""

    result_type: ClassVar[type | None] = Concordance
    null_expectation: Number | None = None
    p_value: Number | None = None
    friedman_p_value: Number | None = None
    mean_spearman: Number | None = None
    decision: Literal["above chance", "no evidence"] | None = None
    n_judges: int | None = None
    n_units: int | None = None
    n_permutations: int | None = None
    confidence: Number | None = None


class MeanDifferenceMetric(Metric):
    """``MeanDifference`` (mean of B − A, paired t), headline ``estimate``."""

    result_type: ClassVar[type | None] = MeanDifference
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_value: Number | None = None
    confidence: Number | None = None


class ShiftMetric(Metric):
    """``ShiftEstimate`` (Hodges–Lehmann shift B − A), headline ``estimate``."""

    result_type: ClassVar[type | None] = ShiftEstimate
    ci_low: Number | None = None
    ci_high: Number | None = None
    confidence: Number | None = None


class RankingStabilityMetric(Metric):
    """``RankingStability`` (mean Kendall tau-b between judges), headline ``estimate``."""

    result_type: ClassVar[type | None] = RankingStability
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_judges: int | None = None
    n_units: int | None = None
    n_bootstrap: int | None = None
    confidence: Number | None = None


class JudgeTrust(Model):
    """One judge's trust level in one run, as ``jurybox analyze`` gives it (default thresholds)."""

    judge: str
    level: TrustLevel
    reason: str


class RunSummary(Model):
    """One compared run: where it came from and what it holds."""

    label: str
    source: str
    n_records: int
    n_ok: int
    n_items: int
    judges: list[str]
    modes: list[str]
    dimensions: list[str]
    has_gold: bool
    items_source: str | None  # the dataset the run's items (lengths, labels) were read from
    report: str | None = None  # the run's report.html (its item explorer), where one was found
    trust: list[JudgeTrust] | None = None


class JudgePairing(Model):
    """Which judge of the baseline run is compared with which judge of the other run."""

    judge_a: str
    judge_b: str
    matched_by: Literal["name", "order"]


class ChangedUnit(Model):
    """A unit (item × presentation order) whose verdict differs between the two runs."""

    item_id: str
    order: str
    verdict_a: Label
    verdict_b: Label
    gold: Label


class PositionComparison(Model):
    """Share of items given the same winner in both orders, per run, and its paired change."""

    n_items: int
    consistency_a: ProportionMetric
    consistency_b: ProportionMetric
    difference: PairedDifferenceMetric
    mcnemar: McNemarMetric


class AccuracyComparison(Model):
    """Verdict correctness against the gold/human label on the items both runs judged, the
    item the unit: each run's share over its judgments of the item (both orders, retests),
    paired by item. ``accuracy_a``/``_b``: shares over judgments with the interval over items;
    ``difference``: the mean per-item difference; ``mcnemar``: the sign test over the items
    whose share differs (McNemar's form, b and c counting items)."""

    n_items: int
    n_judgments_a: int
    n_judgments_b: int
    accuracy_a: ClusteredProportionMetric
    accuracy_b: ClusteredProportionMetric
    difference: ShareDifferenceMetric
    mcnemar: McNemarMetric


class VerdictComparison(Model):
    """Verdicts (pairwise winners, criterion Pass/Fail) of one judge pair, unit by unit."""

    n_units: int
    n_items: int  # the items of the units: what the intervals of agreement and kappa count
    n_changed: int
    agreement: PercentAgreementMetric
    kappa: KappaMetric
    accuracy: AccuracyComparison | None = None
    accuracy_skipped: str | None = None
    position: PositionComparison | None = None
    changed: list[ChangedUnit]
    changed_omitted: int


class ScoreComparison(Model):
    """One dimension's scores (mean over orders) of the same responses under both runs, each
    figure over items (an item's score the mean over its responses)."""

    dimension: str
    n_units: int  # the responses both runs scored
    n_items: int  # their items: the unit of every figure
    mean_a: Number | None
    mean_b: Number | None
    mean_difference: MeanDifferenceMetric
    shift: ShiftMetric
    wilcoxon: WilcoxonMetric
    rank_biserial: RankBiserialMetric
    correlation: CorrelationMetric


class JudgeComparison(Model):
    """Everything compared for one matched pair of judges."""

    judge_a: str
    judge_b: str
    matched_by: Literal["name", "order"]
    verdicts: VerdictComparison | None = None
    scores: list[ScoreComparison]


class DimensionReliability(Model):
    """How alike the judges of one run score one dimension (units = item × arm)."""

    dimension: str
    n_units: int
    inter_judge_sd: Number | None
    alpha: AlphaIntervalMetric
    icc: ICCMetric


class ConcisenessMetric(WilcoxonMetric):
    """The one-sided Wilcoxon test of longer − shorter conciseness per item, with the median
    of those per-item differences (negative: longer responses scored less concise)."""

    median_difference: Number | None = None


class ScoreStudy(Model):
    """ADR-016's measures for one run's scores."""

    run: str
    n_judges: int
    reliability: list[DimensionReliability]
    ranking_stability: RankingStabilityMetric
    concordance: ConcordanceMetric
    conciseness_length: CorrelationMetric | None = None
    # Per item with two responses of different lengths: conciseness score of the longer minus
    # the shorter's, Wilcoxon signed-rank, one-sided (ADR-016 expects it below 0).
    conciseness_paired: ConcisenessMetric | None = None
    conciseness_dimension: str | None = None


class DimensionVersusHolistic(Model):
    """A dimension of the rubric run against the holistic score of the other run.

    ``lower_variance`` reads ``variance`` (inter-reviewer variance, paired by item): True when
    its interval lies below 0, False above, None when it holds 0 or cannot be computed. The α
    difference beside it is agreement relative to each score's own spread, not variance."""

    dimension: str
    alpha: Number | None
    holistic_alpha: Number | None
    difference: AlphaDifferenceMetric
    variance: VarianceDifferenceMetric
    lower_variance: bool | None


class StudyComparison(Model):
    """ADR-016 across the two runs: rubric (A) dimensions vs the holistic score (B)."""

    rubric_run: str
    holistic_run: str
    holistic_dimension: str
    dimensions: list[DimensionVersusHolistic]
    ranking_stability_difference: RankingStabilityMetric


class Headline(Model):
    """One paired judge's answer to "did B do better than A?", on its headline figure: accuracy
    against the gold/human label, item by item (the sign test over items), or, for a judge
    that only scores, how far its scores are from the human scores (mean absolute error per
    item, the mean over its responses; paired t test over items). ``better`` and ``worse``
    need the test's p-value, Holm-adjusted over the judges of the comparison, below
    1 − confidence; anything else is ``no evidence``, with ``reason`` where no test could
    run."""

    judge_a: str
    judge_b: str
    answer: Answer
    measure: Literal["accuracy", "score error"] | None = None
    n_units: int | None = None  # score error: the responses both runs scored
    n_items: int | None = None  # the items both runs judged (the unit of the test)
    value_a: Number | None = None  # accuracy, or mean absolute error, of run A
    value_b: Number | None = None
    difference: Number | None = None  # B − A (for score error, negative is better)
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_value: Number | None = None  # the test's own
    p_adjusted: Number | None = None  # Holm-adjusted over the comparison's judges
    n_tested: int | None = None  # judges in the Holm family
    test: str | None = None
    reason: str | None = None
    trust_a: TrustLevel | None = None
    trust_b: TrustLevel | None = None


class ConfigChange(Model):
    """One setting that differs between the two runs (values as JSON text; None: not set), or
    the text of their own instructions / template (``diff``: unified diff lines, A to B)."""

    setting: str
    value_a: str | None
    value_b: str | None
    diff: list[str] | None = None


class RunComparison(Model):
    """One run against the baseline."""

    run_a: str
    run_b: str
    n_shared_items: int
    pairing: list[JudgePairing]
    unpaired_judges: list[str]
    judges: list[JudgeComparison]
    study: StudyComparison | None = None
    study_skipped: str | None = None
    headlines: list[Headline] | None = None
    config_changes: list[ConfigChange] | None = None
    config_skipped: str | None = None  # why no config could be compared (an import: none kept)


class GeneratedBy(Model):
    package: str
    version: str


class CompareReport(Model):
    """compare.json."""

    schema_version: int
    generated_by: GeneratedBy
    confidence: Number
    runs: list[RunSummary]
    comparisons: list[RunComparison]
    studies: list[ScoreStudy]
    notes: list[str]
