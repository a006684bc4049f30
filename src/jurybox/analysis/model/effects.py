"""The ``effects`` family: does the treatment arm beat control?"""

from __future__ import annotations

from jurybox.analysis.model._base import Model, Number, Section, Skipped
from jurybox.analysis.model.metrics import (
    CorrectedWinRateMetric,
    EffectSizeMetric,
    HeterogeneityMetric,
    LengthControlledMetric,
    McNemarMetric,
    RankBiserialMetric,
    TOSTMetric,
    WilcoxonMetric,
    WinRateMetric,
)


class HolmWilcoxon(WilcoxonMetric):
    """Wilcoxon signed-rank with ``p_holm`` across a subgroup's rubric dimensions."""

    p_holm: Number | None = None


class PairedTests(Model):
    """Treatment minus control over the items scored in both arms."""

    n: int
    control_mean: Number | None
    treatment_mean: Number | None
    mean_difference: Number | None
    wilcoxon: HolmWilcoxon
    cohens_d: EffectSizeMetric
    rank_biserial: RankBiserialMetric
    significant: bool | None = None


class Subgroup(Model):
    """Paired tests per dimension (and ``total``) over a set of items."""

    n_items: int
    dimensions: dict[str, PairedTests | Skipped]


class ByMetadata(Section):
    """Subgroups by an item metadata value (category, difficulty); ``heterogeneity`` per
    dimension: does the treatment effect differ across the subgroups (Holm within)?"""

    groups: dict[str, Subgroup | Skipped] | None = None
    heterogeneity: dict[str, HeterogeneityMetric] | None = None


class Equivalence(Section):
    """TOST equivalence on the items marked normal."""

    margin: Number | None = None
    n_items: int | None = None
    dimensions: dict[str, TOSTMetric | Skipped] | None = None


class GateFailures(McNemarMetric):
    """McNemar's test of gate failures, control against treatment."""

    table: list[list[int]] | None = None
    table_layout: str | None = None
    control_failures: int | None = None
    treatment_failures: int | None = None


class EffectScores(Section):
    """Score effects: overall, by category and difficulty, per judge, equivalence, gates."""

    unit: str | None = None
    overall: Subgroup | None = None
    by_category: ByMetadata | None = None
    by_difficulty: ByMetadata | None = None
    per_judge: dict[str, PairedTests | Skipped] | None = None
    equivalence: Equivalence | None = None
    gate_failures: GateFailures | Skipped | None = None


class PreferenceWinRate(WinRateMetric):
    """Win rate of treatment over control from consolidated verdicts (a flip is a tie)."""

    flip_is_tie: bool | None = None


class EffectPreferences(Section):
    """Pairwise effects per judge, for the panel's majority, by category and difficulty; the
    length-controlled win rates (per judge and panel) beside the raw ones where items give the
    responses' lengths; ``corrected`` per judge where humans labelled some of the pairs: the
    win rate over the unlabelled pairs corrected by the judge's confusion matrix on the
    labelled ones."""

    judges: dict[str, PreferenceWinRate] | None = None
    panel: PreferenceWinRate | None = None
    panel_method: str | None = None
    by_category: dict[str, PreferenceWinRate] | None = None
    by_difficulty: dict[str, PreferenceWinRate] | None = None
    length_controlled: dict[str, LengthControlledMetric] | None = None
    panel_length_controlled: LengthControlledMetric | None = None
    corrected: dict[str, CorrectedWinRateMetric | Skipped] | None = None
    corrected_method: str | None = None


class Effects(Section):
    """The treatment-effect family."""

    control_arm: str | None = None
    treatment_arm: str | None = None
    scores: EffectScores | None = None
    preferences: EffectPreferences | None = None
