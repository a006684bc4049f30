"""Pairwise mode: responses A and B side by side, blind; verdict A / B / TIE.

Variants, as the task config asks: reference-guided (contexts and expected answer shown), with a
rubric (both responses scored per dimension, then a preference; scores mapped back to arms), and
batch pairwise (``batch_size`` pairs in one prompt, one result per pair).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from jurybox.config import TaskConfig
from jurybox.errors import ConfigError, ParseError
from jurybox.modes.base import (
    JudgingMode,
    Presentation,
    arms_of,
    item_of,
    pair_of,
    parse_failure,
    single,
    vendor_refusal,
)
from jurybox.prompts import PromptParts, batch_pairwise_prompt, pairwise_prompt
from jurybox.records import Completion, Item, WorkUnit

if TYPE_CHECKING:
    from jurybox.modes.results import Judgment, Pair, Verdict

# Start-up (issue #19): the result types (modes.results) and the rubric scoring (modes.scoring)
# are imported where an answer is read, after the first request.

_VERDICTS: dict[str, Verdict] = {"A": "A", "B": "B", "TIE": "TIE"}


def _verdict(value: str) -> Verdict:
    if value in _VERDICTS:
        return _VERDICTS[value]
    raise ParseError(f"verdict {value!r} is not A, B or TIE")


class PairwiseMode(JudgingMode):
    name = "pairwise"

    @classmethod
    def uses_rubric(cls, task: TaskConfig) -> bool:
        return task.pairwise_with_rubric

    @classmethod
    def check_arms(cls, task: TaskConfig, arms: tuple[str, ...]) -> None:
        if len(arms) != 2:
            raise ConfigError(
                f"pairwise mode compares exactly two arms, the dataset has {list(arms)}; "
                "name two of them in task.arms",
                field="task.arms",
            )

    @classmethod
    def presentations(
        cls, task: TaskConfig, arms: tuple[str, ...], orders: Sequence[tuple[str, ...]]
    ) -> list[Presentation]:
        return [Presentation(f"{order[0]}_first", order) for order in orders]

    @classmethod
    def batch_size(cls, task: TaskConfig) -> int:
        return 1 if task.pairwise_with_rubric else task.batch_size

    @property
    def is_batch(self) -> bool:
        return self.batch_size(self.ctx.task) > 1

    def prompt(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> PromptParts:
        task = self.ctx.task
        if not units:
            raise ValueError("a pairwise prompt needs at least one work unit")
        if self.is_batch:
            return batch_pairwise_prompt(
                [(item_of(items, unit), arms_of(unit)) for unit in units],
                reference_guided=task.reference_guided,
                request_confidence=self.ctx.scoring.request_confidence,
                sources=self.ctx.prompt,
            )
        unit = single(units)
        arms = arms_of(unit)
        return pairwise_prompt(
            item_of(items, unit),
            arms,
            reference_guided=task.reference_guided,
            rubric=self.ctx.rubric if task.pairwise_with_rubric else None,
            request_confidence=self.ctx.scoring.request_confidence,
            confidence_scale=self.ctx.confidence_scale,
            sources=self.ctx.prompt,
            examples=task.examples,
        )

    def pair_labels(self, unit: WorkUnit) -> Pair | None:
        return pair_of(unit) if len(unit.order) == 2 else None

    def interpret(
        self, units: Sequence[WorkUnit], items: Mapping[str, Item], completion: Completion
    ) -> list[Judgment]:
        if not self.is_batch or vendor_refusal(completion) is not None:
            return super().interpret(units, items, completion)
        from jurybox.modes.results import PairwiseResult  # noqa: PLC0415 - after the first request
        from jurybox.parsing import parse_batch_pairwise  # noqa: PLC0415 - after the first request

        parsed = parse_batch_pairwise(completion.text, completion.structured, len(units))
        out: list[Judgment] = []
        for unit, result in zip(units, parsed, strict=True):
            if isinstance(result, ParseError):
                out.append(parse_failure(completion, result, self.pair_labels(unit)))
                continue
            verdict = _verdict(result.verdict)
            out.append(
                PairwiseResult(
                    result.method, pair_of(unit), verdict, result.confidence, result.reasoning
                )
            )
        return out

    def read(self, unit: WorkUnit, item: Item, completion: Completion) -> Judgment:
        from jurybox import parsing  # noqa: PLC0415 - after the first request
        from jurybox.modes.results import PairwiseResult  # noqa: PLC0415 - after the first request

        pair = pair_of(unit)
        if not self.ctx.task.pairwise_with_rubric:
            plain = parsing.parse_pairwise(completion.text, completion.structured)
            return PairwiseResult(
                plain.method, pair, _verdict(plain.verdict), plain.confidence, plain.reasoning
            )
        from jurybox.modes import scoring  # noqa: PLC0415 - only a pairwise run with a rubric

        judged = parsing.parse_pairwise_rubric(
            completion.text,
            completion.structured,
            self.ctx.require_rubric(),
            confidence_scale=self.ctx.confidence_scale,
        )
        return PairwiseResult(
            judged.method,
            pair,
            _verdict(judged.verdict),
            judged.confidence,
            judged.reasoning,
            scores_a={d.name: d.score for d in judged.scores_a},
            scores_b={d.name: d.score for d in judged.scores_b},
            arms=scoring.scored_arms(
                self.ctx, item, {pair.a: judged.scores_a, pair.b: judged.scores_b}
            ),
        )
