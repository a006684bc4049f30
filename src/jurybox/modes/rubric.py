"""Rubric (pointwise) mode: one response at a time, a score per rubric dimension.

A judge that answers one holistic number instead gets ``holistic_fallback=True``, that number as
the overall (safety cap applied) and no per-dimension scores: consumers that need rubric scores
filter on the flag.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jurybox.config import TaskConfig
from jurybox.modes.base import (
    JudgingMode,
    Presentation,
    item_of,
    single,
)
from jurybox.prompts import PromptParts, rubric_prompt
from jurybox.records import Completion, Item, WorkUnit

if TYPE_CHECKING:
    from jurybox.modes.results import Judgment

# Start-up (issue #19): the result types and the scoring are imported where an answer is read.


class RubricMode(JudgingMode):
    name = "rubric"

    @classmethod
    def uses_rubric(cls, task: TaskConfig) -> bool:
        return True

    @classmethod
    def presentations(
        cls, task: TaskConfig, arms: tuple[str, ...], orders: Sequence[tuple[str, ...]]
    ) -> list[Presentation]:
        return [Presentation(arm, (arm,)) for arm in arms]

    def prompt(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> PromptParts:
        unit = single(units)
        return rubric_prompt(
            item_of(items, unit),
            unit.order[0],
            self.ctx.require_rubric(),
            reference_guided=self.ctx.task.reference_guided,
            request_confidence=self.ctx.scoring.request_confidence,
            confidence_scale=self.ctx.confidence_scale,
            sources=self.ctx.prompt,
        )

    def read(self, unit: WorkUnit, item: Item, completion: Completion) -> Judgment:
        from jurybox.modes import results, scoring  # noqa: PLC0415 - after the first request
        from jurybox.parsing import parse_rubric  # noqa: PLC0415 - after the first request
        from jurybox.rubrics.scoring import apply_safety_cap  # noqa: PLC0415 - after it too

        arm = unit.order[0]
        judged = parse_rubric(
            completion.text,
            completion.structured,
            self.ctx.require_rubric(),
            confidence_scale=self.ctx.confidence_scale,
        )
        if not judged.holistic_fallback:
            return results.RubricResult(
                judged.method, arm, scoring.scored_arms(self.ctx, item, {arm: judged.scores})
            )
        # One holistic number instead of the rubric: kept as the overall, flagged, never spread
        # over dimensions; ceilings and gates cannot apply without dimensions, the safety cap can.
        holistic = judged.holistic_score if judged.holistic_score is not None else float("nan")
        safety = scoring.safety_of(self.ctx, item.responses[arm])
        value, _ = apply_safety_cap(holistic, None, safety, self.ctx.safety)
        flag = safety.label if safety is not None else None
        return results.RubricResult(judged.method, arm, None, holistic=value, safety_flag=flag)
