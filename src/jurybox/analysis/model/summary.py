"""The ``summary`` section: what went in, and what was excluded and why."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from jurybox.analysis.model._base import Model


class Excluded(Model):
    """Records left out of the metrics."""

    total: int
    holistic_fallback: int
    by_status: dict[str, int]


class NonFiniteScores(Model):
    """Judge scores that were no finite number (NaN, ±inf), left out of every metric: how
    many, on how many items, and the first items and scores named (``judge item arm
    dimension = value``)."""

    total: int
    n_items: int
    items: list[str]
    examples: list[str]


class JudgeSummary(Model):
    """One judge as the records name it."""

    name: str
    model: str | None
    vendor: str | None
    family: str | None
    n_records: int
    n_ok: int
    local_judge: bool


class HumanLabelCounts(Model):
    """How many human labels of each kind were given (``scores`` and ``verdicts`` count one per
    response and dimension); ``items``: the judged items that carry any of them (absent in
    reports written before it was recorded); ``targeted``: items labelled through ``jurybox
    label``'s targeted stream only, kept out of the other counts (and figures)."""

    preferences: int
    annotators: int
    scores: int
    verdicts: int
    targeted: int | None = None
    items: int | None = None


class JudgeFailures(Model):
    """One judge's failed records; rates are None when nothing was counted."""

    n_records: int
    n_failed: int
    failure_rate: float | None
    parse_failure_rate: float | None
    by_status: dict[str, int]


class InputScreen(Model):
    """What ``jurybox analyze`` left out of its input before the analysis, and why: records
    repeated under one key (the last complete one is kept) and human labels that match no
    judgment (an unknown query id, or a value that names no arm)."""

    duplicates_dropped: int
    labels_unknown_ids: int
    labels_bad_values: int


class RunProgress(Model):
    """Where the run that wrote the judgments stood when they were analysed (its manifest):
    ``status`` running, complete, interrupted or failed (a run killed without a word stays
    running); ``units_done`` of its ``units_planned`` judgments; ``resume``, the command that
    carries it on or redoes its failed calls, where it has any to do."""

    status: str
    units_planned: int | None = None
    units_done: int | None = None
    resume: str | None = None


SavingMethod = Literal["synchronous prices", "assumed 50% discount", "mixed"]


class RunCost(Model):
    """What the judgments cost, and how many came from provider batches (``--batch``).

    ``batch_saving_usd`` is what the batch records' tokens would have cost at their judges'
    synchronous prices less what they cost. ``batch_saving_method`` says how it was priced:
    ``"synchronous prices"`` (every batch judge's settings known, from the run's manifest),
    ``"assumed 50% discount"`` (none known: the vendors' batch discount, so the saving equals
    the cost) or ``"mixed"``. It is None when no batch record is priced, or when a known judge
    has no synchronous price for a batch record's tokens.

    ``unpriced_judges`` names the judges whose answers (token counts recorded) carry no cost:
    no price was known for them, so ``cost_usd`` leaves them out. Left out of the JSON when
    none is.
    """

    cost_usd: float | None
    n_priced: int
    n_batch_records: int
    n_sync_records: int
    batch_cost_usd: float | None
    batch_saving_usd: float | None
    batch_saving_method: SavingMethod | None = None
    unpriced_judges: list[str] = Field(default_factory=list)


class Summary(Model):
    """What went in, and what was excluded and why."""

    n_records: int
    n_ok: int
    excluded: Excluded
    judges: list[JudgeSummary]
    modes: list[str]
    arms: list[str]
    control_arm: str | None
    treatment_arm: str | None
    dimensions: list[str]
    n_items: int
    n_retest_records: int
    human_labels: HumanLabelCounts
    local_judge_used: bool
    failures: dict[str, JudgeFailures]
    input_screen: InputScreen | None = None
    cost: RunCost | None = None
    # Per judge, the pairs judged in one presentation order only where the judge saw others in
    # both (an interrupted run): left out of swap consistency. Absent when there is none.
    one_order: dict[str, int] | None = None
    run: RunProgress | None = None
    non_finite_scores: NonFiniteScores | None = None
