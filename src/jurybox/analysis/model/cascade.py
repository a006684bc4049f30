"""The typed model of ``jurybox cascade``: cascade.json.

``CascadeReport`` holds what was replayed (judges cheap → strong, the guarantee asked for, the
split), each judge's calibrated threshold (``StageModel``), and three rules measured on the same
test split (``RuleOutcome``): the calibrated cascade, the strongest judge alone under the same
guarantee, and the uncalibrated rule "a judge decides where its presentation orders all agree,
else escalate". A number that does not exist (no item decided, a judge that decides nothing) is
absent or null, never NaN.

A fresh run (``jurybox cascade CONFIG``) calls each judge only on the items that reach it, so the
strongest judge alone and the uncalibrated rule cannot be measured on the test split: those two
entries are absent, and ``fresh_run`` says what the run called and spent, against the strongest
judge on every item (estimated from what it cost per item where it was called).
"""

from __future__ import annotations

from jurybox.analysis.model._base import Model, Number
from jurybox.analysis.model.compare import GeneratedBy

CASCADE_SCHEMA_VERSION = 1


class CascadeSettings(Model):
    """What was asked: judges in cascade order, the guarantee and the split."""

    judges: list[str]
    target: Number
    delta: Number
    calibration_share: Number
    seed: int
    confidence: str  # orders | stated | both
    cost_basis: str  # usd | tokens | calls | weighted calls
    split_delta: bool
    min_selected: int


class ItemCounts(Model):
    """Which items took part: judged by every judge, with a human label, in each split."""

    n_items: int
    n_missing_a_judge: int
    n_labelled: int
    n_calibration: int
    n_test: int
    n_unlabelled: int


class StageModel(Model):
    """One judge's calibration; ``threshold`` null: it decides nothing."""

    judge: str
    confidence: str  # the confidence the judge gave: orders, orders×stated, stated
    threshold: Number | None
    n_reaching: int
    n_selected: int
    n_disagree: int
    risk_bound: Number | None
    delta: Number
    method: str


class RuleOutcome(Model):
    """One routing rule on the test split: agreement where it decided, shares, cost."""

    rule: str
    thresholds: list[Number | None]
    agreement: Number | None
    ci_low: Number | None
    ci_high: Number | None
    meets_target: bool | None
    n_items: int
    n_decided: int
    decided_share: dict[str, Number]
    nobody_share: Number
    cost: Number
    cost_strongest: Number
    cost_ratio: Number | None
    method: str


class RoutedUnlabelled(Model):
    """How the calibrated cascade routes the items with no human label."""

    n_items: int
    decided_share: dict[str, Number]
    nobody_share: Number


class FreshRun(Model):
    """What a fresh-run cascade called and spent, over every item, against the strongest judge
    alone (its cost per item where it was called, times every item: an estimate)."""

    run_dir: str
    items: int
    called: dict[str, int]  # items each judge judged
    units: dict[str, int]  # its work units (calls)
    cost: dict[str, Number]
    cost_total: Number
    cost_strongest_alone: Number | None  # None: the strongest judge was never called
    cost_ratio: Number | None
    cost_basis: str
    decided: dict[str, int]  # items each judge decided (calibration items included)
    needs_human: int
    method: str


class CascadeReport(Model):
    """cascade.json."""

    schema_version: int
    generated_by: GeneratedBy
    source: str
    settings: CascadeSettings
    items: ItemCounts
    stages: list[StageModel]
    cascade: RuleOutcome
    strongest_alone: RuleOutcome | None = None  # absent for a fresh run (module docstring)
    uncalibrated: RuleOutcome | None = None
    unlabelled: RoutedUnlabelled | None = None
    needs_human: int
    method: str
    notes: list[str]
    fresh_run: FreshRun | None = None
