"""One metric model per ``jurybox.stats`` result the analysis reports.

Each has the base metric fields (``value`` = the result's headline field, ``n``, ``method``,
``reason``, ``warnings``) and the result's other fields, which are None (and absent from the
dump) when the statistic could not be computed.
"""

from __future__ import annotations

from typing import ClassVar

from jurybox.analysis.model._base import Label, Metric, Model, Number
from jurybox.stats.alpha_ci import AlphaInterval
from jurybox.stats.clustered import ClusteredProportion
from jurybox.stats.corrected import CorrectedWinRate
from jurybox.stats.gwet import GwetResult
from jurybox.stats.length_control import LengthControlledWinRate
from jurybox.stats.ppi import PPIMean
from jurybox.stats.related import FriedmanResult, PairedPositionResult
from jurybox.stats.results import (
    AlphaResult,
    BinomialTestResult,
    CorrectedRate,
    CorrelationResult,
    CronbachAlphaResult,
    EffectSizeResult,
    FleissKappaResult,
    ICCResult,
    KappaResult,
    KruskalResult,
    McNemarResult,
    PercentAgreement,
    ProportionInterval,
    RankBiserialResult,
    TOSTResult,
    TprTnrResult,
    WilcoxonResult,
    WinRateResult,
)
from jurybox.stats.subgroups import SubgroupHeterogeneity


class PercentAgreementMetric(Metric):
    """``PercentAgreement``, headline ``estimate``."""

    result_type: ClassVar[type | None] = PercentAgreement
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_agree: int | None = None
    n_items: int | None = None
    confidence: Number | None = None
    n_clusters: int | None = None


class KappaMetric(Metric):
    """``KappaResult``, headline ``kappa``."""

    result_type: ClassVar[type | None] = KappaResult
    ase: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    ase0: Number | None = None
    z: Number | None = None
    p_value: Number | None = None
    n_items: int | None = None
    categories: list[Label] | None = None
    weights: str | None = None
    confidence: Number | None = None
    n_clusters: int | None = None
    n_bootstrap: int | None = None


class FleissKappaMetric(Metric):
    """``FleissKappaResult``, headline ``kappa``; its interval a bootstrap over items."""

    result_type: ClassVar[type | None] = FleissKappaResult
    p_observed: Number | None = None
    p_expected: Number | None = None
    se0: Number | None = None
    z: Number | None = None
    p_value: Number | None = None
    n_items: int | None = None
    n_raters: int | None = None
    n_categories: int | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_clusters: int | None = None
    confidence: Number | None = None


class AlphaMetric(Metric):
    """``AlphaResult``, headline ``alpha``."""

    result_type: ClassVar[type | None] = AlphaResult
    level: str | None = None
    n_units: int | None = None
    n_raters: int | None = None
    n_pairable_values: int | None = None


class ICCMetric(Metric):
    """``ICCResult``, headline ``icc``."""

    result_type: ClassVar[type | None] = ICCResult
    kind: str | None = None
    f: Number | None = None
    df1: Number | None = None
    df2: Number | None = None
    p_value: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_targets: int | None = None
    n_raters: int | None = None
    confidence: Number | None = None


class CronbachAlphaMetric(Metric):
    """``CronbachAlphaResult``, headline ``alpha``."""

    result_type: ClassVar[type | None] = CronbachAlphaResult
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_subjects: int | None = None
    n_items: int | None = None
    confidence: Number | None = None


class WilcoxonMetric(Metric):
    """``WilcoxonResult``, headline ``statistic``."""

    result_type: ClassVar[type | None] = WilcoxonResult
    p_value: Number | None = None
    z: Number | None = None
    n_zero: int | None = None
    alternative: str | None = None
    zero_method: str | None = None
    correction: bool | None = None


class EffectSizeMetric(Metric):
    """``EffectSizeResult``, headline ``estimate``."""

    result_type: ClassVar[type | None] = EffectSizeResult
    ci_low: Number | None = None
    ci_high: Number | None = None
    confidence: Number | None = None


class RankBiserialMetric(Metric):
    """``RankBiserialResult``, headline ``estimate``."""

    result_type: ClassVar[type | None] = RankBiserialResult
    t_plus: Number | None = None
    t_minus: Number | None = None
    n_zero: int | None = None


class TOSTMetric(Metric):
    """``TOSTResult``, headline ``mean_diff``."""

    result_type: ClassVar[type | None] = TOSTResult
    p_value: Number | None = None
    equivalent: bool | None = None
    t_lower: Number | None = None
    p_lower: Number | None = None
    t_upper: Number | None = None
    p_upper: Number | None = None
    df: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    margin_low: Number | None = None
    margin_high: Number | None = None
    alpha: Number | None = None


class McNemarMetric(Metric):
    """``McNemarResult``, headline ``statistic``."""

    result_type: ClassVar[type | None] = McNemarResult
    p_value: Number | None = None
    b: int | None = None
    c: int | None = None
    n_discordant: int | None = None


class CorrelationMetric(Metric):
    """``CorrelationResult``, headline ``rho``."""

    result_type: ClassVar[type | None] = CorrelationResult
    p_value: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_covariates: int | None = None
    confidence: Number | None = None


class KruskalMetric(Metric):
    """``KruskalResult``, headline ``statistic``."""

    result_type: ClassVar[type | None] = KruskalResult
    df: int | None = None
    p_value: Number | None = None
    epsilon_squared: Number | None = None
    n_groups: int | None = None


class BinomialTestMetric(Metric):
    """``BinomialTestResult``, headline ``proportion``."""

    result_type: ClassVar[type | None] = BinomialTestResult
    successes: int | None = None
    null_proportion: Number | None = None
    p_value: Number | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    alternative: str | None = None
    confidence: Number | None = None


class ProportionMetric(Metric):
    """``ProportionInterval``, headline ``estimate``."""

    result_type: ClassVar[type | None] = ProportionInterval
    ci_low: Number | None = None
    ci_high: Number | None = None
    successes: Number | None = None
    confidence: Number | None = None


class ClusteredProportionMetric(ProportionMetric):
    """``ClusteredProportion`` (a share of judgments, items as clusters), headline ``estimate``."""

    result_type: ClassVar[type | None] = ClusteredProportion
    n_clusters: int | None = None
    n_effective: Number | None = None
    design_effect: Number | None = None


class TprTnrMetric(Metric):
    """``TprTnrResult``, headline ``youden``."""

    result_type: ClassVar[type | None] = TprTnrResult
    tpr: ProportionMetric | None = None
    tnr: ProportionMetric | None = None
    n_positive: int | None = None
    n_negative: int | None = None


class CorrectedRateMetric(Metric):
    """``CorrectedRate``, headline ``estimate``."""

    result_type: ClassVar[type | None] = CorrectedRate
    ci_low: Number | None = None
    ci_high: Number | None = None
    tpr: Number | None = None
    tnr: Number | None = None
    n_labelled: int | None = None
    n_unlabelled: int | None = None
    p_obs: Number | None = None
    confidence: Number | None = None
    n_bootstrap: int | None = None


class WinRateMetric(Metric):
    """``WinRateResult``, headline ``estimate``."""

    result_type: ClassVar[type | None] = WinRateResult
    ci_low: Number | None = None
    ci_high: Number | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    confidence: Number | None = None


class GwetMetric(Metric):
    """``GwetResult`` (AC1 unweighted, AC2 weighted), headline ``coefficient``; its interval a
    bootstrap over items."""

    result_type: ClassVar[type | None] = GwetResult
    p_agreement: Number | None = None
    p_chance: Number | None = None
    n_units: int | None = None
    n_categories: int | None = None
    weights: str | None = None
    ci_low: Number | None = None
    ci_high: Number | None = None
    n_clusters: int | None = None
    confidence: Number | None = None


class AlphaIntervalMetric(Metric):
    """``AlphaInterval`` (Krippendorff's alpha with a BCa bootstrap interval), headline
    ``alpha``."""

    result_type: ClassVar[type | None] = AlphaInterval
    ci_low: Number | None = None
    ci_high: Number | None = None
    level: str | None = None
    n_units: int | None = None
    n_bootstrap: int | None = None
    confidence: Number | None = None


class FriedmanMetric(Metric):
    """``FriedmanResult`` (with Kendall's W), headline ``statistic``."""

    result_type: ClassVar[type | None] = FriedmanResult
    df: int | None = None
    p_value: Number | None = None
    kendall_w: Number | None = None
    n_blocks: int | None = None
    n_treatments: int | None = None


class PairedPositionMetric(Metric):
    """``PairedPositionResult`` (exact sign test on pairs whose winner flips with the order),
    headline ``proportion_first``."""

    result_type: ClassVar[type | None] = PairedPositionResult
    ci_low: Number | None = None
    ci_high: Number | None = None
    p_value: Number | None = None
    n_first_both: int | None = None
    n_second_both: int | None = None
    n_discordant: int | None = None
    n_pairs: int | None = None
    confidence: Number | None = None


class SubgroupEffectRow(Model):
    """One subgroup's paired differences: median, Wilcoxon p and its Holm adjustment."""

    subgroup: str
    n: int
    median_difference: Number | None
    p_value: Number | None
    p_holm: Number | None


class HeterogeneityMetric(Metric):
    """``SubgroupHeterogeneity`` (Kruskal-Wallis of per-item effects across subgroups),
    headline ``p_value``."""

    result_type: ClassVar[type | None] = SubgroupHeterogeneity
    statistic: Number | None = None
    df: int | None = None
    epsilon_squared: Number | None = None
    effects: list[SubgroupEffectRow] | None = None
    alpha: Number | None = None


class LengthControlledMetric(Metric):
    """``LengthControlledWinRate`` (AlpacaEval-style GLM on the length difference), headline
    ``estimate``; the raw rate beside it."""

    result_type: ClassVar[type | None] = LengthControlledWinRate
    ci_low: Number | None = None
    ci_high: Number | None = None
    raw_rate: Number | None = None
    raw_ci_low: Number | None = None
    raw_ci_high: Number | None = None
    length_coef: Number | None = None
    length_p_value: Number | None = None
    length_scale: Number | None = None
    confidence: Number | None = None


class CorrectedWinRateMetric(Metric):
    """``CorrectedWinRate`` (A/B/tie misclassification-matrix inversion from a judge's verdicts
    on human-labelled pairs), headline ``estimate``; the judge's raw rate beside it."""

    result_type: ClassVar[type | None] = CorrectedWinRate
    ci_low: Number | None = None
    ci_high: Number | None = None
    raw_rate: Number | None = None
    shares: list[Number | None] | None = None
    classes: list[Label] | None = None
    confusion: list[list[Number | None]] | None = None
    n_labelled: int | None = None
    n_unlabelled: int | None = None
    confidence: Number | None = None
    n_bootstrap: int | None = None


class PPIMeanMetric(Metric):
    """``PPIMean`` (prediction-powered mean score, PPI++), headline ``estimate``; the human-only
    mean and the judge's mean beside it."""

    result_type: ClassVar[type | None] = PPIMean
    ci_low: Number | None = None
    ci_high: Number | None = None
    se: Number | None = None
    lam: Number | None = None
    classical_estimate: Number | None = None
    classical_ci_low: Number | None = None
    classical_ci_high: Number | None = None
    judge_mean: Number | None = None
    n_labelled: int | None = None
    n_unlabelled: int | None = None
    confidence: Number | None = None
