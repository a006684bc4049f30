"""``stopping``: where a ``jurybox run --until`` run stopped each judge, and on which interval.

Read from the run's manifest (its ``until`` entry, written by ``jurybox.pipeline.until``); absent
for a run judged to the end of its plan without ``--until``. The intervals are the anytime-valid
confidence sequence's (betting, 95 %): after an early stop they are the ones that hold, where a
fixed-n interval over the same items would be too narrow (its n was chosen by the data).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.analysis.model._base import Model, Number


class StoppedJudge(Model):
    """One judge: stopped or not, why, after how many items and units, and the interval."""

    stopped_early: bool
    stop: str | None  # decided | precision | plan_done | None (not finished)
    outcome: str | None  # above | below (the trust bar), within (± the half-width)
    trusted: bool | None  # above: True, below: False (accuracy only)
    items_judged: int
    items_measured: int  # items that entered the sequence (labelled ones, for accuracy)
    units_judged: int
    units_planned: int
    estimate: Number | None
    ci_low: Number | None
    ci_high: Number | None
    statement: str


class Stopping(Model):
    """The run's ``--until`` and each judge's stop."""

    until: str
    metric: str  # accuracy | win_rate
    threshold: Number | None = None  # accuracy: trust.min_accuracy
    half_width: Number | None = None  # win rate
    confidence: Number
    method: str
    order: str
    block_items: int
    items_planned: int
    judges: dict[str, StoppedJudge]

    @classmethod
    def from_manifest(cls, entry: Mapping[str, Any]) -> Stopping:
        """From the manifest's ``until`` entry (keys this model does not know are left out)."""
        judges = {
            str(name): StoppedJudge.model_validate(
                {k: v for k, v in judge.items() if k in StoppedJudge.model_fields}
            )
            for name, judge in (entry.get("judges") or {}).items()
        }
        fields = {k: v for k, v in entry.items() if k in cls.model_fields and k != "judges"}
        return cls.model_validate({**fields, "judges": judges})
