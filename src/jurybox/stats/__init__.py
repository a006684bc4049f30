"""Pure statistical functions for judge evaluation: arrays in, frozen results out.

No I/O and no global RNG state: every stochastic function takes
``rng: numpy.random.Generator | int | None``. Invalid or degenerate input (empty, one class, one
rater, zero variance) raises ``ValueError`` naming the shape or value; nothing returns 0 or NaN
silently. Every result records the variant computed in its ``method`` field.
"""

from __future__ import annotations

from jurybox.stats._rng import RNGLike
from jurybox.stats.aggregation import borda_count, dawid_skene
from jurybox.stats.agreement import (
    cohen_kappa,
    cohen_kappa_table,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)
from jurybox.stats.alpha_ci import (
    AlphaDifference,
    AlphaInterval,
    alpha_difference,
    krippendorff_alpha_ci,
)
from jurybox.stats.bias import (
    ConditionalPreference,
    LengthLogitResult,
    conditional_preference,
    length_logit,
    length_preference_given_truth,
    position_preference_given_truth,
)
from jurybox.stats.clustered import ClusteredProportion, clustered_proportion, effective_counts
from jurybox.stats.corrected import CorrectedWinRate, corrected_win_rate
from jurybox.stats.correlation import partial_spearman, spearman
from jurybox.stats.gwet import GwetResult, gwet_ac, gwet_ac_counts
from jurybox.stats.hypothesis import (
    binomial_test,
    cohens_d_paired,
    holm,
    kruskal_wallis,
    mcnemar,
    rank_biserial,
    tost_paired,
    wilcoxon_signed_rank,
)
from jurybox.stats.length_control import LengthControlledWinRate, length_controlled_win_rate
from jurybox.stats.paired import (
    MeanDifference,
    PairedProportionDifference,
    RankingStability,
    ShiftEstimate,
    hodges_lehmann,
    kendall_tau_difference,
    kendall_tau_panel,
    mean_difference,
    paired_proportion_difference,
)
from jurybox.stats.pairwise import cohen_kappa_pairs, cohen_kappa_tables, percent_agreement_pairs
from jurybox.stats.ppi import PPIMean, ppi_mean
from jurybox.stats.prevalence import (
    corrected_pass_rate,
    rogan_gladen,
    tpr_tnr,
    wilson_interval,
    win_rate_interval,
)
from jurybox.stats.related import (
    FDRResult,
    FriedmanResult,
    PairedPositionResult,
    benjamini_hochberg,
    friedman,
    paired_position_test,
)
from jurybox.stats.reliability import cronbach_alpha, icc
from jurybox.stats.results import (
    AlphaResult,
    BinomialTestResult,
    BordaResult,
    CorrectedRate,
    CorrelationResult,
    CronbachAlphaResult,
    DawidSkeneResult,
    EffectSizeResult,
    FleissKappaResult,
    HolmResult,
    ICCResult,
    KappaResult,
    KruskalResult,
    LowDiscriminationWarning,
    McNemarResult,
    PercentAgreement,
    ProportionInterval,
    RankBiserialResult,
    RoganGladenResult,
    TOSTResult,
    TprTnrResult,
    WilcoxonResult,
    WinRateResult,
)
from jurybox.stats.stratified import StratifiedProportion, stratified_proportion
from jurybox.stats.subgroups import SubgroupEffect, SubgroupHeterogeneity, subgroup_heterogeneity

__all__ = [
    "AlphaDifference",
    "AlphaInterval",
    "AlphaResult",
    "BinomialTestResult",
    "BordaResult",
    "ClusteredProportion",
    "ConditionalPreference",
    "CorrectedRate",
    "CorrectedWinRate",
    "CorrelationResult",
    "CronbachAlphaResult",
    "DawidSkeneResult",
    "EffectSizeResult",
    "FDRResult",
    "FleissKappaResult",
    "FriedmanResult",
    "GwetResult",
    "HolmResult",
    "ICCResult",
    "KappaResult",
    "KruskalResult",
    "LengthControlledWinRate",
    "LengthLogitResult",
    "LowDiscriminationWarning",
    "McNemarResult",
    "MeanDifference",
    "PPIMean",
    "PairedPositionResult",
    "PairedProportionDifference",
    "PercentAgreement",
    "ProportionInterval",
    "RNGLike",
    "RankBiserialResult",
    "RankingStability",
    "RoganGladenResult",
    "ShiftEstimate",
    "StratifiedProportion",
    "SubgroupEffect",
    "SubgroupHeterogeneity",
    "TOSTResult",
    "TprTnrResult",
    "WilcoxonResult",
    "WinRateResult",
    "alpha_difference",
    "benjamini_hochberg",
    "binomial_test",
    "borda_count",
    "clustered_proportion",
    "cohen_kappa",
    "cohen_kappa_pairs",
    "cohen_kappa_table",
    "cohen_kappa_tables",
    "cohens_d_paired",
    "conditional_preference",
    "corrected_pass_rate",
    "corrected_win_rate",
    "cronbach_alpha",
    "dawid_skene",
    "effective_counts",
    "fleiss_kappa",
    "friedman",
    "gwet_ac",
    "gwet_ac_counts",
    "hodges_lehmann",
    "holm",
    "icc",
    "kendall_tau_difference",
    "kendall_tau_panel",
    "krippendorff_alpha",
    "krippendorff_alpha_ci",
    "kruskal_wallis",
    "length_controlled_win_rate",
    "length_logit",
    "length_preference_given_truth",
    "mcnemar",
    "mean_difference",
    "paired_position_test",
    "paired_proportion_difference",
    "partial_spearman",
    "percent_agreement",
    "percent_agreement_pairs",
    "position_preference_given_truth",
    "ppi_mean",
    "rank_biserial",
    "rogan_gladen",
    "spearman",
    "stratified_proportion",
    "subgroup_heterogeneity",
    "tost_paired",
    "tpr_tnr",
    "wilcoxon_signed_rank",
    "wilson_interval",
    "win_rate_interval",
]
