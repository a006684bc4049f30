"""The ``human_calibration`` family: the judges against human labels."""

from __future__ import annotations

from jurybox.analysis.model._base import Model, Section, Skipped
from jurybox.analysis.model.agreement import AgreementBlock
from jurybox.analysis.model.metrics import (
    CorrectedRateMetric,
    GwetMetric,
    ICCMetric,
    KappaMetric,
    PPIMeanMetric,
    ProportionMetric,
    TprTnrMetric,
)


class InterAnnotator(AgreementBlock):
    """Agreement among the human annotators, and how often they had a majority."""

    majority_counts: dict[str, int] | None = None
    no_majority: int | None = None


class HumanPreferenceJudge(Model):
    """Cohen's kappa of a judge's preferences against the gold, per order, pooled, consolidated;
    Gwet's AC1 of the consolidated verdicts beside it (stable where kappa collapses under a
    skewed prevalence)."""

    orders: dict[str, KappaMetric]
    pooled: KappaMetric
    consolidated: KappaMetric
    consolidated_ac1: GwetMetric | None = None


class HumanPreferences(Section):
    """Judges' preferences against the human gold."""

    judges: dict[str, HumanPreferenceJudge] | None = None
    n_labelled: int | None = None


class DimensionKappa(KappaMetric):
    """Kappa of the judge's rounded mean score against the human score, and its weighted forms
    over the scale: linear (the ordinal default) and quadratic (what the trust verdict reads);
    Gwet's AC2 with linear weights over the same scale beside them. ``continuous``: the human
    scores are fractional, kappa is undefined, and the ICC of the total stands in."""

    weighted_quadratic: KappaMetric | None = None
    weighted_linear: KappaMetric | None = None
    gwet_ac2: GwetMetric | None = None
    continuous: bool | None = None


class HumanScoreJudge(Model):
    """A judge's scores against the human scores, per dimension (and ICC of the total)."""

    dimensions: dict[str, DimensionKappa]
    total_icc: ICCMetric | None = None


PPIByArm = dict[str, dict[str, PPIMeanMetric | Skipped]]


class HumanScores(Section):
    """Judges' scores against the human scores; ``prediction_powered``: judge -> arm ->
    dimension, the arm's mean score from the human-scored responses and the judge's scores of
    all of them (PPI++)."""

    judges: dict[str, HumanScoreJudge] | None = None
    rounding: str | None = None
    prediction_powered: dict[str, PPIByArm] | None = None
    prediction_powered_method: str | None = None


class CriterionJudge(Model):
    """A judge's Pass/Fail verdicts against the human ones, and the corrected pass rate."""

    tpr_tnr: TprTnrMetric
    human_pass_rate: ProportionMetric
    judge_pass_rate: ProportionMetric
    corrected_pass_rate: CorrectedRateMetric | Skipped


class HumanCriterion(Section):
    """Criterion verdicts against the human ones, keyed ``judge`` or ``judge|criterion``."""

    positive_class: str | None = None
    judges: dict[str, CriterionJudge | Skipped] | None = None


class HumanCalibration(Section):
    """The human-calibration family."""

    inter_annotator: InterAnnotator | None = None
    preferences: HumanPreferences | None = None
    scores: HumanScores | None = None
    criterion: HumanCriterion | None = None
