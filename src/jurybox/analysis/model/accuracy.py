"""The ``accuracy_vs_gold`` family: judges against gold preferences (imported benchmarks)."""

from __future__ import annotations

from typing import ClassVar

from jurybox.analysis.model._base import Metric, Model, Number, Section, Skipped
from jurybox.analysis.model.metrics import ClusteredProportionMetric
from jurybox.stats.stratified import StratifiedProportion


class Accuracy(ClusteredProportionMetric):
    """``value`` = correct / n over successful judgments; ``accuracy_all`` counts failures wrong.

    Both intervals count items, not judgments (an item's orders and repeats are one cluster).
    """

    correct: int | None = None
    n_total: int | None = None
    accuracy_all: Number | None = None
    accuracy_all_ci_low: Number | None = None
    accuracy_all_ci_high: Number | None = None


class TieConventions(Model):
    """A judge's pooled accuracy with its ties counted wrong (the trust verdict's convention)
    and counted half (a benchmark's own, e.g. LLMBar's), failures wrong in both; present only
    for a judge that answered tie."""

    ties: int  # successful judgments that were a tie where the gold names a winner
    n_total: int
    ties_wrong: Number  # correct / n_total: the accuracy the verdict reads
    ties_half: Number  # (correct + ties / 2) / n_total


class JudgeGoldAccuracy(Model):
    """A judge's accuracy per presentation order, pooled, consolidated, and in both orders."""

    orders: dict[str, Accuracy]
    pooled: Accuracy
    consolidated: Accuracy
    both_orders_correct: Accuracy | Skipped
    ties: TieConventions | None = None


class DesignAccuracy(Metric):
    """``StratifiedProportion``, headline ``estimate``: accuracy weighted by stratum."""

    result_type: ClassVar[type | None] = StratifiedProportion
    ci_low: Number | None = None
    ci_high: Number | None = None
    se: Number | None = None
    n_effective: Number | None = None
    n_by_stratum: dict[str, int] | None = None
    size_by_stratum: dict[str, int] | None = None
    confidence: Number | None = None


class DesignJudgeAccuracy(Model):
    """A judge's stratum-weighted accuracy: failures counted as wrong (what the verdict reads)
    and over successful judgments only."""

    counted: DesignAccuracy
    parsed: DesignAccuracy


class LabelledByDesign(Section):
    """Accuracy over the items ``jurybox label`` chose (``analysis.labelling``): labelled items
    per stream, each stratum's size, and each judge's stratum-weighted accuracy."""

    judges: dict[str, DesignJudgeAccuracy] | None = None
    streams: dict[str, int] | None = None
    strata: dict[str, int] | None = None
    method: str | None = None


class AccuracyVsGold(Section):
    """The accuracy-against-gold family. ``design``: present when labels came from
    ``jurybox label``; the other figures then read its uniform stream only."""

    judges: dict[str, JudgeGoldAccuracy] | None = None
    n_labelled: int | None = None
    method: str | None = None
    ties_note: str | None = None  # why the two tie conventions differ, where a judge tied
    design: LabelledByDesign | None = None
