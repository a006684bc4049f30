"""Code criteria: a criterion of ``kind: code`` is answered by its check, never by a model.

The check reaches ``jurybox.evaluators`` as a typed object on a ``CheckRequest``. The request's
``system`` / ``user`` texts are the check (with a hash of any file it reads) and the item as JSON:
nothing parses them back, they exist so that the prompt hash and the response cache key change
exactly when the check or the item does. ``CodeProvider`` answers with ``{"reasoning", "answer"}``
under ``vendor = "code"``, so a code criterion leaves the same ``JudgeRecord`` lines as a model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from jurybox.config import JudgeConfig, TaskConfig
from jurybox.errors import BadRequestError, ProviderError
from jurybox.evaluators import CodeEvaluator, check_payload
from jurybox.modes._criteria import criterion_presentations, read_criterion
from jurybox.modes.base import JudgingContext, JudgingMode, Presentation, item_of, single
from jurybox.modes.results import Judgment
from jurybox.prompts import PromptParts
from jurybox.providers.base import Provider
from jurybox.records import Completion, CompletionRequest, Item, WorkUnit
from jurybox.rubrics.criteria import CodeCheck, Criterion

CODE_VENDOR = "code"
CODE_SCHEMA_NAME = "code_check"


@dataclass(frozen=True, kw_only=True)
class CheckRequest(CompletionRequest):
    """A code criterion's call: the typed check, the item and arm it runs on, and the folder its
    Python or schema files are read from."""

    check: CodeCheck
    item: Item
    arm: str
    base_dir: Path | None


def code_request(criterion: Criterion, item: Item, arm: str, base_dir: Path | None) -> CheckRequest:
    """The request a code criterion's unit becomes (answered by ``CodeProvider``)."""
    if criterion.check is None:
        raise ValueError(f"criterion {criterion.name!r} has no check")
    system = {
        **check_payload(criterion.check, base_dir),
        "criterion": criterion.name,
        "base_dir": str(base_dir) if base_dir is not None else None,
    }
    user = {
        "id": item.id,
        "arm": arm,
        "question": item.question,
        "response": item.responses[arm],
        "metadata": dict(item.metadata),
    }
    return CheckRequest(
        system=json.dumps(system, sort_keys=True, ensure_ascii=False),
        user=json.dumps(user, sort_keys=True, ensure_ascii=False, default=str),
        max_tokens=1,
        temperature=None,
        response_schema=None,
        schema_name=CODE_SCHEMA_NAME,
        check=criterion.check,
        item=item,
        arm=arm,
        base_dir=base_dir,
    )


class CodeProvider:
    """A provider that answers ``CheckRequest`` calls by running the check."""

    vendor = CODE_VENDOR
    is_local = False

    def __init__(self, model: str = "code") -> None:
        self.model = model
        self.calls = 0
        self._evaluator = CodeEvaluator()

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        started = time.perf_counter()
        if not isinstance(request, CheckRequest):
            raise BadRequestError("the code provider only answers code-criterion requests")
        check = request.check
        verdict = self._evaluator.evaluate(check, request.item, request.arm, request.base_dir)
        answer = {"reasoning": verdict.reasoning, "answer": verdict.answer}
        return Completion(
            text=json.dumps(answer, ensure_ascii=False),
            model=f"code:{check.type}",
            latency_ms=(time.perf_counter() - started) * 1000.0,
            finish_reason="stop",
            structured=answer,
        )

    def classify_error(self, exc: BaseException) -> ProviderError:
        # A check that raises on some input will raise again: never retried, recorded as data.
        if isinstance(exc, ProviderError):
            return exc
        return BadRequestError(f"code check raised {type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        return None


class CodeMode(JudgingMode):
    """The criterion units whose criterion is a code check (``CriterionMode`` hands them over)."""

    name = "code"

    def __init__(self, ctx: JudgingContext) -> None:
        super().__init__(ctx)
        self._provider = CodeProvider()

    @classmethod
    def presentations(
        cls, task: TaskConfig, arms: tuple[str, ...], orders: Sequence[tuple[str, ...]]
    ) -> list[Presentation]:
        return criterion_presentations(task, arms)

    def prompt(self, units: Sequence[WorkUnit], items: Mapping[str, Item]) -> PromptParts:
        raise TypeError("a code criterion has no prompt: its check answers")

    def request(
        self,
        units: Sequence[WorkUnit],
        items: Mapping[str, Item],
        judge: JudgeConfig,
        max_tokens: int,
        seed: int | None,
    ) -> CompletionRequest:
        unit = single(units)
        base_dir = self.ctx.criterion_dirs.get(unit.criterion or "")
        criterion = self.ctx.criterion(unit.criterion)
        return code_request(criterion, item_of(items, unit), unit.order[0], base_dir)

    def answerer(self, unit: WorkUnit) -> Provider | None:
        return self._provider

    def read(self, unit: WorkUnit, item: Item, completion: Completion) -> Judgment:
        return read_criterion(completion)  # the same reader as a model's criterion answer
