"""The ``agreement`` family: how far the judges agree with each other."""

from __future__ import annotations

from jurybox.analysis.model._base import Model, Section
from jurybox.analysis.model.metrics import (
    AlphaIntervalMetric,
    AlphaMetric,
    ClusteredProportionMetric,
    FleissKappaMetric,
    GwetMetric,
    ICCMetric,
    KappaMetric,
    PercentAgreementMetric,
)


class PairAgreement(Model):
    """Agreement of two raters."""

    raters: list[str]
    cohen_kappa: KappaMetric
    percent_agreement: PercentAgreementMetric


class AgreementBlock(Section):
    """Every agreement statistic of one units x raters matrix.

    Labels (preferences, verdicts, ordinal scores) get kappa, percent agreement and Gwet's AC
    (AC2, linear weights, on ordinal scores); interval data (the continuous ``total``) gets no
    kappa on means: ICC(2,1) over the complete units instead. Every block has alpha, with its
    bootstrap interval in ``krippendorff_alpha_ci``.
    """

    level: str | None = None
    n_units: int | None = None
    n_complete_units: int | None = None
    krippendorff_alpha: AlphaMetric | None = None
    fleiss_kappa: FleissKappaMetric | None = None
    percent_agreement: ClusteredProportionMetric | None = None  # every judge agrees; over items
    pairs: list[PairAgreement] | None = None
    krippendorff_alpha_ci: AlphaIntervalMetric | None = None
    gwet_ac: GwetMetric | None = None
    icc: ICCMetric | None = None


class AgreementUnits(Model):
    """What one unit of agreement is, per kind of label."""

    preferences: str
    scores: str
    verdicts: str


class ScoreAgreement(Section):
    """Agreement on scores, per rubric dimension (and ``total``)."""

    dimensions: dict[str, AgreementBlock] | None = None


class Agreement(Section):
    """The agreement family."""

    unit: AgreementUnits | None = None
    judges: list[str] | None = None
    preferences: AgreementBlock | None = None
    scores: ScoreAgreement | None = None
    verdicts: AgreementBlock | None = None
