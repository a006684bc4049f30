"""The typed model of ``jurybox compare``: two or more runs over the same items, paired.

``CompareReport`` is what compare.json holds: one ``RunComparison`` per run against the first
(the baseline), one ``JudgeComparison`` per matched pair of judges (verdicts: accuracy vs gold
with McNemar's test and a paired interval, position consistency, agreement between the runs, the
units whose verdict changed; scores: the paired difference per dimension), and per run the
ADR-016 score study (inter-judge reliability per dimension, ranking stability, conciseness vs
length) with its cross-run differences.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from jurybox.analysis.model._base import Label, Metric, Model, Number
from jurybox.analysis.model.metrics import (
    AlphaIntervalMetric,
    CorrelationMetric,
    FriedmanMetric,
    ICCMetric,
    KappaMetric,
    McNemarMetric,
    PercentAgreementMetric,
    ProportionMetric,
    RankBiserialMetric,
    WilcoxonMetric,
)
from jurybox.stats.paired import (
    MeanDifference,
    PairedProportionDifference,
    RankingStability,
    ShiftEstimate,
)

COMPARE_SCHEMA_VERSION = 1


class PairedDifferenceMetric(Metric):
    """``PairedProportionDifference`` (p_B − p_A, Newcombe interval), headline ``estimate``."""

    result_type: ClassVar[type | None] = PairedProportionDifference
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_x: Number | None = None
    p_y: Number | None = None
    n_x_only: int | None = None
    n_y_only: int | None = None
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
    href: str


class PositionComparison(Model):
    """Share of items given the same winner in both orders, per run, and its paired change."""

    n_items: int
    consistency_a: ProportionMetric
    consistency_b: ProportionMetric
    difference: PairedDifferenceMetric
    mcnemar: McNemarMetric


class AccuracyComparison(Model):
    """Verdict correctness against the gold/human label on the units both runs judged."""

    n_units: int
    accuracy_a: ProportionMetric
    accuracy_b: ProportionMetric
    difference: PairedDifferenceMetric
    mcnemar: McNemarMetric


class VerdictComparison(Model):
    """Verdicts (pairwise winners, criterion Pass/Fail) of one judge pair, unit by unit."""

    n_units: int
    n_changed: int
    agreement: PercentAgreementMetric
    kappa: KappaMetric
    accuracy: AccuracyComparison | None = None
    accuracy_skipped: str | None = None
    position: PositionComparison | None = None
    changed: list[ChangedUnit]
    changed_omitted: int


class ScoreComparison(Model):
    """One dimension's scores (mean over orders) of the same responses under both runs."""

    dimension: str
    n_units: int
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


class ScoreStudy(Model):
    """ADR-016's measures for one run's scores."""

    run: str
    n_judges: int
    reliability: list[DimensionReliability]
    ranking_stability: RankingStabilityMetric
    kendall_w: FriedmanMetric
    conciseness_length: CorrelationMetric | None = None
    conciseness_dimension: str | None = None


class DimensionVersusHolistic(Model):
    """A dimension of the rubric run against the holistic score of the other run."""

    dimension: str
    alpha: Number | None
    holistic_alpha: Number | None
    difference: Number | None
    lower_variance: bool | None


class StudyComparison(Model):
    """ADR-016 across the two runs: rubric (A) dimensions vs the holistic score (B)."""

    rubric_run: str
    holistic_run: str
    holistic_dimension: str
    dimensions: list[DimensionVersusHolistic]
    ranking_stability_difference: RankingStabilityMetric


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
