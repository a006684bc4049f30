"""Criterion (pass/fail) mode: one response, one atomic criterion; ``{"reasoning", "answer"}``.

A criterion of ``kind: code`` is no prompt for a model: its units go to ``modes.code``, whose
check answers in-process. The judge's reasoning is kept on the typed result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Self

from jurybox.config import JudgeConfig, RunConfig, TaskConfig
from jurybox.errors import ConfigError, ParseError
from jurybox.modes._criteria import (
    criterion_name,
    criterion_presentations,
    read_criterion,
    runnable_criterion,
)
from jurybox.modes.base import JudgingContext, JudgingMode, Presentation, item_of, single
from jurybox.prompts import PromptParts, PromptSources, criterion_prompt, load_prompt_sources
from jurybox.providers.base import Provider
from jurybox.records import Completion, CompletionRequest, Item, JudgeRecord, WorkUnit
from jurybox.rubrics.safety import SafetySettings

if TYPE_CHECKING:
    from jurybox.modes.results import CriterionResult, Judgment
    from jurybox.rubrics.criteria import Criterion


class CriterionMode(JudgingMode):
    name = "criterion"

    def __init__(self, ctx: JudgingContext) -> None:
        super().__init__(ctx)
        # Lazy: code checks pull in jsonschema (~40 ms), which a run without them never needs
        # before its first request (`jurybox run` starts instantly, issue #19).
        from jurybox.modes.code import CodeMode  # noqa: PLC0415

        self._code = CodeMode(ctx)  # one per run: it keeps user check functions loaded

    @classmethod
    def from_config(
        cls,
        config: RunConfig,
        *,
        env: Mapping[str, str] | None = None,
        prompt: PromptSources | None = None,
    ) -> Self:
        """Criteria are keyed by their file's stem, as work units name them."""
        cls.check_batch(config.task)
        if not config.task.criteria:
            raise ConfigError("criterion mode needs at least one file", field="task.criteria")
        criteria: dict[str, Criterion] = {}
        dirs: dict[str, Path] = {}
        for path in config.task.criteria:
            resolved = config.resolve(path)
            criteria[criterion_name(path)] = runnable_criterion(resolved)
            dirs[criterion_name(path)] = resolved.parent
        safety = SafetySettings.from_env(env)
        sources = prompt if prompt is not None else load_prompt_sources(config)
        context = JudgingContext(config.task, config.scoring, None, criteria, safety, dirs, sources)
        return cls(context)

    @classmethod
    def check_task(cls, task: TaskConfig) -> None:
        if not task.criteria:
            raise ConfigError(
                "criterion mode needs at least one file in task.criteria", field="task.criteria"
            )

    @classmethod
    def presentations(
        cls, task: TaskConfig, arms: tuple[str, ...], orders: Sequence[tuple[str, ...]]
    ) -> list[Presentation]:
        return criterion_presentations(task, arms)

    def is_code(self, unit: WorkUnit) -> bool:
        """Whether the unit's criterion is a code check (answered by ``modes.code``)."""
        return self.ctx.criterion(unit.criterion).kind == "code"

    def prompt(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> PromptParts:
        unit = single(units)
        return criterion_prompt(
            self.ctx.criterion(unit.criterion),
            item_of(items, unit),
            unit.order[0],
            sources=self.ctx.prompt,
        )

    def request(
        self,
        units: Sequence[WorkUnit],
        items: Mapping[str, Item],
        judge: JudgeConfig,
        max_tokens: int,
        seed: int | None,
    ) -> CompletionRequest:
        if len(units) == 1 and self.is_code(units[0]):
            return self._code.request(units, items, judge, max_tokens, seed)
        return super().request(units, items, judge, max_tokens, seed)

    def answerer(self, unit: WorkUnit) -> Provider | None:
        return self._code.answerer(unit) if self.is_code(unit) else None

    def read(self, unit: WorkUnit, item: Item, completion: Completion) -> Judgment:
        return read_criterion(completion)


def judgment_of(record: JudgeRecord) -> CriterionResult:
    """A criterion record's typed result, read back through the same reader as the run.

    The record format keeps no reasoning field for criteria (records stay as they were), so a
    record read from a judgments file gets its reasoning from its raw answer, here, in one place.
    Raises ParseError when the record holds no readable answer.
    """
    if record.raw_response is None:
        raise ParseError(f"record {record.key} holds no answer")
    return read_criterion(Completion(record.raw_response, record.judge_model))
