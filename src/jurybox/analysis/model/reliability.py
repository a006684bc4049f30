"""The ``reliability`` family: test-retest, internal consistency, confidence calibration."""

from __future__ import annotations

from typing import ClassVar

from jurybox.analysis.model._base import Model, Number, Section
from jurybox.analysis.model.metrics import (
    CorrelationMetric,
    CronbachAlphaMetric,
    ICCMetric,
    KappaMetric,
    PercentAgreementMetric,
    ProportionMetric,
)


class LabelRetest(Model):
    """Agreement of a label (preference, verdict) with its retest."""

    n_pairs: int
    percent_agreement: PercentAgreementMetric
    cohen_kappa: KappaMetric


class TestRetest(Section):
    """ICC(2,1) per dimension and per judge (total); agreement of retested labels."""

    __test__ = False  # not a pytest class

    n_retest_records: int | None = None
    dimensions: dict[str, ICCMetric] | None = None
    judges: dict[str, ICCMetric] | None = None
    preferences: LabelRetest | None = None
    verdicts: LabelRetest | None = None


class InternalConsistency(Section):
    """Cronbach's alpha across rubric dimensions, pooled and per judge."""

    subjects: str | None = None
    dimensions: list[str] | None = None
    pooled: CronbachAlphaMetric | None = None
    judges: dict[str, CronbachAlphaMetric] | None = None


class ConfidenceBin(ProportionMetric):
    """The hit rate among the judgments that stated one confidence level."""

    stated_confidence: Number

    leading: ClassVar[tuple[str, ...]] = ("stated_confidence",)


class PreferenceCalibration(Model):
    """Does a judge's stated confidence track being right?"""

    spearman: CorrelationMetric
    bins: list[ConfidenceBin]


class ScoreCalibration(PreferenceCalibration):
    """Does a judge's stated confidence track a small score error?"""

    mean_abs_error: Number | None


class PreferenceCalibrationSection(Section):
    """Confidence calibration of pairwise verdicts."""

    target: str | None = None
    confidence_levels: dict[str, Number] | None = None
    judges: dict[str, PreferenceCalibration] | None = None


class ScoreCalibrationSection(Section):
    """Confidence calibration of dimension scores."""

    target: str | None = None
    expected_sign: str | None = None
    judges: dict[str, ScoreCalibration] | None = None


class ConfidenceCalibration(Section):
    """Confidence calibration of verdicts and of dimension scores."""

    preferences: PreferenceCalibrationSection | None = None
    scores: ScoreCalibrationSection | None = None


class Reliability(Section):
    """The reliability family."""

    test_retest: TestRetest | None = None
    internal_consistency: InternalConsistency | None = None
    confidence_calibration: ConfidenceCalibration | None = None
