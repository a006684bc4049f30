"""Mode glue: work units -> prompt request, and judge completion -> JudgeRecord fields.

``build_request`` picks the prompt for the task's mode and shows arms in the positions given by
``WorkUnit.order``; ``interpret`` parses the completion and maps positions back to arms. Bad judge
text never raises here: it becomes ``status=unparsed`` (``truncated`` when the completion hit
``max_tokens``, ``refused`` when the judge or a content filter declined) with the reason in
``error``. Pipeline-owned fields (identity, usage, raw text) are added by ``recording``.

With the safety gate on (``JURYBOX_SAFETY_GATE=true``) every scored response is checked before
its overall is computed; a flag lands in ``safety_flags`` and caps ``overall``. A rubric judge
that answers one holistic number gets ``holistic_fallback=True``, that number as ``overall`` (safety
cap applied) and no ``scores``: consumers that need rubric scores filter on the flag.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox import parsing
from jurybox.config import JudgeConfig, RunConfig, ScoringConfig, TaskConfig
from jurybox.errors import ConfigError, ParseError
from jurybox.evaluators import code_request
from jurybox.prompts import (
    PromptParts,
    batch_pairwise_prompt,
    criterion_prompt,
    pairwise_prompt,
    ranking_prompt,
    rubric_prompt,
)
from jurybox.records import (
    POSITION_LETTERS,
    Completion,
    CompletionRequest,
    DimensionScore,
    Item,
    Status,
    WorkUnit,
)
from jurybox.rubrics import (
    Criterion,
    Rubric,
    SafetyResult,
    SafetySettings,
    apply_safety_cap,
    check_safety,
    load_criterion,
    load_rubric,
    overall_score,
)

Fields = dict[str, Any]


@dataclass(frozen=True)
class JudgingContext:
    """What every prompt and every interpretation of one run needs."""

    task: TaskConfig
    scoring: ScoringConfig
    rubric: Rubric | None
    criteria: Mapping[str, Criterion] = field(default_factory=dict)
    safety: SafetySettings = field(default_factory=SafetySettings)
    # Folder of each criterion file: a code criterion's Python check is imported from there.
    criterion_dirs: Mapping[str, Path] = field(default_factory=dict)

    @classmethod
    def from_config(
        cls, config: RunConfig, *, env: Mapping[str, str] | None = None
    ) -> JudgingContext:
        """Load the rubric (if the mode uses one) and the criteria, relative to the config file.

        ``env`` (default ``os.environ``) supplies ``JURYBOX_WEIGHT_*`` and ``JURYBOX_SAFETY_*``.
        Criteria are keyed by their file's stem, as work units name them.
        """
        task = config.task
        if task.batch_size > 1 and (task.mode != "pairwise" or task.pairwise_with_rubric):
            raise ConfigError(
                "batch_size > 1 is only supported for plain pairwise judging",
                field="task.batch_size",
            )
        rubric = None
        if task.mode in ("rubric", "ranking") or task.pairwise_with_rubric:
            base_dir = Path(config.source_path).parent if config.source_path else None
            rubric = load_rubric(task.rubric, base_dir=base_dir, env=env)
        criteria: dict[str, Criterion] = {}
        dirs: dict[str, Path] = {}
        if task.mode == "criterion":
            if not task.criteria:
                raise ConfigError("criterion mode needs at least one file", field="task.criteria")
            for path in task.criteria:
                resolved = config.resolve(path)
                criteria[Path(path).stem] = _runnable_criterion(resolved)
                dirs[Path(path).stem] = resolved.parent
        safety = SafetySettings.from_env(env)
        return cls(task, config.scoring, rubric, criteria, safety, criterion_dirs=dirs)

    @property
    def confidence_scale(self) -> tuple[int, int] | None:
        """Per-score confidence scale asked for, or None when confidence is not requested."""
        if not self.scoring.request_confidence:
            return None
        if self.rubric is not None and self.rubric.confidence_scale is not None:
            return self.rubric.confidence_scale
        return self.scoring.confidence_scale

    @property
    def is_batch(self) -> bool:
        return self.task.mode == "pairwise" and self.task.batch_size > 1

    def require_rubric(self) -> Rubric:
        if self.rubric is None:
            raise ValueError(f"mode '{self.task.mode}' needs a rubric in the judging context")
        return self.rubric

    def is_code(self, unit: WorkUnit) -> bool:
        """Whether the unit's criterion is a code check (answered by ``CodeProvider``)."""
        if self.task.mode != "criterion":
            return False
        return self.criterion(unit.criterion).kind == "code"

    def criterion(self, name: str | None) -> Criterion:
        """The criterion a unit names: by file stem, else by the criterion's own ``name``."""
        if name is not None and name in self.criteria:
            return self.criteria[name]
        for criterion in self.criteria.values():
            if criterion.name == name:
                return criterion
        raise ValueError(f"unknown criterion {name!r} (loaded: {sorted(self.criteria)})")


def _runnable_criterion(path: Path) -> Criterion:
    criterion = load_criterion(path)
    if criterion.train_examples:
        # Silently dropping them would judge with a different prompt than the one calibrated.
        raise ConfigError(
            "train_examples name items of a train split; judge this criterion with `jurybox "
            "calibrate` / `jurybox estimate`, or write the examples inline under `examples`",
            path=str(path),
            field="train_examples",
        )
    return criterion


# --- requests ---------------------------------------------------------------------------------


def _item(items: Mapping[str, Item], unit: WorkUnit) -> Item:
    try:
        return items[unit.item_id]
    except KeyError:
        raise ValueError(f"work unit names unknown item '{unit.item_id}'") from None


def _pair(unit: WorkUnit) -> tuple[str, str]:
    if len(unit.order) != 2:
        raise ValueError(f"pairwise unit {unit.key} must order two arms, got {unit.order}")
    return unit.order[0], unit.order[1]


def build_prompt(
    ctx: JudgingContext, units: Sequence[WorkUnit], items: Mapping[str, Item]
) -> PromptParts:
    """The prompt for one call: one unit, or every unit of a batch-pairwise call."""
    if not units:
        raise ValueError("build_prompt needs at least one work unit")
    task = ctx.task
    if ctx.is_batch:
        pairs = [(_item(items, unit), _pair(unit)) for unit in units]
        return batch_pairwise_prompt(
            pairs,
            reference_guided=task.reference_guided,
            request_confidence=ctx.scoring.request_confidence,
        )
    if len(units) != 1:
        raise ValueError(f"only batch pairwise takes several units, got {len(units)}")
    unit, item = units[0], _item(items, units[0])
    if task.mode == "pairwise":
        return pairwise_prompt(
            item,
            _pair(unit),
            reference_guided=task.reference_guided,
            rubric=ctx.rubric if task.pairwise_with_rubric else None,
            request_confidence=ctx.scoring.request_confidence,
            confidence_scale=ctx.confidence_scale,
        )
    if task.mode == "rubric":
        return rubric_prompt(
            item,
            unit.order[0],
            ctx.require_rubric(),
            reference_guided=task.reference_guided,
            request_confidence=ctx.scoring.request_confidence,
            confidence_scale=ctx.confidence_scale,
        )
    if task.mode == "ranking":
        return ranking_prompt(
            item, unit.order, ctx.require_rubric(), reference_guided=task.reference_guided
        )
    return criterion_prompt(ctx.criterion(unit.criterion), item, unit.order[0])


def build_request(  # noqa: PLR0917 - positional signature pinned in docs/contracts.md
    ctx: JudgingContext,
    units: Sequence[WorkUnit],
    items: Mapping[str, Item],
    judge: JudgeConfig,
    max_tokens: int,
    seed: int | None,
) -> CompletionRequest:
    """The provider request for one call; the schema is sent only for native structured output.

    A code criterion's unit becomes a ``code_request`` (check and item as JSON) for
    ``jurybox.evaluators.CodeProvider``; no model ever sees it.
    """
    if len(units) == 1 and ctx.is_code(units[0]):
        unit = units[0]
        criterion = ctx.criterion(unit.criterion)
        base_dir = ctx.criterion_dirs.get(unit.criterion or "")
        return code_request(criterion, _item(items, unit), unit.order[0], base_dir)
    parts = build_prompt(ctx, units, items)
    return CompletionRequest(
        system=parts.system,
        user=parts.user,
        max_tokens=max_tokens,
        temperature=judge.temperature,
        response_schema=parts.schema if judge.structured_output else None,
        schema_name=parts.schema_name,
        seed=seed,
    )


# --- interpretation ---------------------------------------------------------------------------


def _ok(method: str, **fields: Any) -> Fields:
    base: Fields = {
        "status": Status.OK,
        "parse_success": True,
        "parse_method": method,
        "error": None,
        "holistic_fallback": False,
    }
    return {**base, **fields}


def _failure(status: Status, error: str, **fields: Any) -> Fields:
    base: Fields = {"status": status, "parse_success": False, "parse_method": None}
    return {**base, "error": error, "holistic_fallback": False, **fields}


def _vendor_refusal(completion: Completion) -> str | None:
    if completion.refusal:
        return f"judge refused: {completion.refusal}"
    if completion.finish_reason in ("refusal", "content_filter"):
        return f"judge refused (finish_reason={completion.finish_reason})"
    return None


def _parse_failure(completion: Completion, exc: ParseError, **fields: Any) -> Fields:
    if isinstance(exc, parsing.JudgeRefusal):
        return _failure(Status.REFUSED, str(exc), **fields)
    if completion.finish_reason == "length":
        return _failure(Status.TRUNCATED, f"truncated at max_tokens: {exc}", **fields)
    return _failure(Status.UNPARSED, str(exc), **fields)


def _pair_labels(unit: WorkUnit) -> Fields:
    if len(unit.order) != 2:
        return {}
    return {"response_a_label": unit.order[0], "response_b_label": unit.order[1]}


def _preference(unit: WorkUnit, verdict: str) -> Fields:
    if verdict == "TIE":
        return {"preference": "tie", "preferred_arm": "tie"}
    return {"preference": verdict, "preferred_arm": unit.positions()[verdict]}


def _safety(ctx: JudgingContext, text: str) -> SafetyResult | None:
    return check_safety(text) if ctx.safety.enabled else None


def _scored_arms(
    ctx: JudgingContext, item: Item, by_arm: Mapping[str, tuple[DimensionScore, ...]]
) -> Fields:
    """scores / confidences / overall / gate_failures / safety_flags, keyed by arm."""
    rubric = ctx.require_rubric()
    scores: dict[str, dict[str, float]] = {}
    confidences: dict[str, dict[str, float]] = {}
    overall: dict[str, float] = {}
    gates: dict[str, list[str]] = {}
    flags: dict[str, str] = {}
    for arm, dims in by_arm.items():
        scores[arm] = {d.name: d.score for d in dims}
        conf = {d.name: d.confidence for d in dims if d.confidence is not None}
        if conf:
            confidences[arm] = conf
        safety = _safety(ctx, item.responses[arm])
        if safety is not None and safety.label is not None:
            flags[arm] = safety.label
        result = overall_score(rubric, scores[arm], safety, ctx.safety)
        overall[arm], gates[arm] = result.value, list(result.gate_failures)
    return {
        "scores": scores,
        "confidences": confidences or None,
        "overall": overall,
        "gate_failures": gates,
        "safety_flags": flags or None,
    }


def _interpret_pairwise(
    ctx: JudgingContext, unit: WorkUnit, item: Item, completion: Completion
) -> Fields:
    if not ctx.task.pairwise_with_rubric:
        verdict = parsing.parse_pairwise(completion.text, completion.structured)
        return _ok(
            verdict.method,
            **_preference(unit, verdict.verdict),
            confidence=verdict.confidence,
            preference_reasoning=verdict.reasoning,
        )
    judged = parsing.parse_pairwise_rubric(
        completion.text,
        completion.structured,
        ctx.require_rubric(),
        confidence_scale=ctx.confidence_scale,
    )
    arm_a, arm_b = _pair(unit)
    return _ok(
        judged.method,
        **_preference(unit, judged.verdict),
        confidence=judged.confidence,
        preference_reasoning=judged.reasoning,
        scores_response_a={d.name: d.score for d in judged.scores_a},
        scores_response_b={d.name: d.score for d in judged.scores_b},
        **_scored_arms(ctx, item, {arm_a: judged.scores_a, arm_b: judged.scores_b}),
    )


def _interpret_rubric(
    ctx: JudgingContext, unit: WorkUnit, item: Item, completion: Completion
) -> Fields:
    arm = unit.order[0]
    judged = parsing.parse_rubric(
        completion.text,
        completion.structured,
        ctx.require_rubric(),
        confidence_scale=ctx.confidence_scale,
    )
    if not judged.holistic_fallback:
        return _ok(judged.method, **_scored_arms(ctx, item, {arm: judged.scores}))
    # One holistic number instead of the rubric: kept as the overall, flagged, never spread
    # over dimensions; ceilings and gates cannot apply without dimensions, the safety cap can.
    holistic = judged.holistic_score if judged.holistic_score is not None else float("nan")
    safety = _safety(ctx, item.responses[arm])
    value, _ = apply_safety_cap(holistic, None, safety, ctx.safety)
    flags = {arm: safety.label} if safety is not None and safety.label is not None else None
    return _ok(judged.method, holistic_fallback=True, overall={arm: value}, safety_flags=flags)


def _interpret_ranking(
    ctx: JudgingContext, unit: WorkUnit, item: Item, completion: Completion
) -> Fields:
    letters = list(POSITION_LETTERS[: len(unit.order)])
    judged = parsing.parse_ranking(
        completion.text, completion.structured, letters, ctx.require_rubric()
    )
    positions = unit.positions()
    fields = _scored_arms(
        ctx, item, {positions[letter]: judged.evaluations[letter] for letter in letters}
    )
    # Ranking comes from the overall scores; the judge's own order only breaks ties.
    judge_rank = {positions[letter]: index for index, letter in enumerate(judged.ranking)}
    overall = fields["overall"]
    ranking = sorted(overall, key=lambda arm: (-overall[arm], judge_rank[arm]))
    return _ok(judged.method, **fields, ranking=ranking)


def _interpret_criterion(
    ctx: JudgingContext, unit: WorkUnit, item: Item, completion: Completion
) -> Fields:
    judged = parsing.parse_criterion(completion.text, completion.structured)
    return _ok(judged.method, verdict=judged.answer)


_Interpreter = Callable[[JudgingContext, WorkUnit, Item, Completion], Fields]
_INTERPRETERS: dict[str, _Interpreter] = {
    "pairwise": _interpret_pairwise,
    "rubric": _interpret_rubric,
    "ranking": _interpret_ranking,
    "criterion": _interpret_criterion,
}


def _interpret_batch(
    ctx: JudgingContext, units: Sequence[WorkUnit], completion: Completion
) -> list[Fields]:
    results = parsing.parse_batch_pairwise(completion.text, completion.structured, len(units))
    out = []
    for unit, result in zip(units, results, strict=True):
        if isinstance(result, ParseError):
            out.append(_parse_failure(completion, result, **_pair_labels(unit)))
            continue
        out.append(
            _ok(
                result.method,
                **_pair_labels(unit),
                **_preference(unit, result.verdict),
                confidence=result.confidence,
                preference_reasoning=result.reasoning,
            )
        )
    return out


def interpret(
    ctx: JudgingContext,
    units: Sequence[WorkUnit],
    items: Mapping[str, Item],
    completion: Completion,
) -> list[Fields]:
    """One dict of JudgeRecord fields per unit. Never raises on bad judge text."""
    labels = [_pair_labels(unit) if ctx.task.mode == "pairwise" else {} for unit in units]
    refused = _vendor_refusal(completion)
    if refused is not None:
        return [_failure(Status.REFUSED, refused, **extra) for extra in labels]
    if ctx.is_batch:
        return _interpret_batch(ctx, units, completion)
    if len(units) != 1:
        raise ValueError(f"only batch pairwise takes several units, got {len(units)}")
    unit = units[0]
    try:
        fields = _INTERPRETERS[ctx.task.mode](ctx, unit, _item(items, unit), completion)
    except ParseError as exc:
        return [_parse_failure(completion, exc, **labels[0])]
    return [{**labels[0], **fields}]
