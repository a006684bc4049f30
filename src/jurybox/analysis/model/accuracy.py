"""The ``accuracy_vs_gold`` family: judges against gold preferences (imported benchmarks)."""

from __future__ import annotations

from jurybox.analysis.model._base import Model, Number, Section, Skipped
from jurybox.analysis.model.metrics import ClusteredProportionMetric


class Accuracy(ClusteredProportionMetric):
    """``value`` = correct / n over successful judgments; ``accuracy_all`` counts failures wrong.

    Both intervals count items, not judgments (an item's orders and repeats are one cluster).
    """

    correct: int | None = None
    n_total: int | None = None
    accuracy_all: Number | None = None
    accuracy_all_ci_low: Number | None = None
    accuracy_all_ci_high: Number | None = None


class JudgeGoldAccuracy(Model):
    """A judge's accuracy per presentation order, pooled, consolidated, and in both orders."""

    orders: dict[str, Accuracy]
    pooled: Accuracy
    consolidated: Accuracy
    both_orders_correct: Accuracy | Skipped


class AccuracyVsGold(Section):
    """The accuracy-against-gold family."""

    judges: dict[str, JudgeGoldAccuracy] | None = None
    n_labelled: int | None = None
    method: str | None = None
