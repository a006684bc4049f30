"""Shims for the judging tests: a ``JudgingContext``'s mode, its requests, and its typed results
as the ``JudgeRecord`` fields they fill (what reaches judgments.jsonl)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.config import JudgeConfig, RunConfig
from jurybox.modes import JudgingContext, JudgingMode, Judgment, build_mode, mode_class
from jurybox.records import Completion, CompletionRequest, Item, JudgeRecord, Status, WorkUnit


def mode_of(ctx: JudgingContext) -> JudgingMode:
    return mode_class(ctx.task.mode)(ctx)


def context_from_config(config: RunConfig, *, env: Mapping[str, str]) -> JudgingContext:
    return build_mode(config, env=env).ctx


def build_request(  # noqa: PLR0917 - mirrors JudgingMode.request
    ctx: JudgingContext,
    units: Sequence[WorkUnit],
    items: Mapping[str, Item],
    judge: JudgeConfig,
    max_tokens: int,
    seed: int | None,
) -> CompletionRequest:
    return mode_of(ctx).request(units, items, judge, max_tokens, seed)


def record_fields(judgment: Judgment, unit: WorkUnit) -> dict[str, Any]:
    """The record fields a result fills, on a blank record (status as ``Status``)."""
    blank = JudgeRecord(
        key=unit.key,
        run_id="run",
        query_id=unit.item_id,
        judge_name=unit.judge,
        judge_model="m",
        judge_vendor="fake",
        mode="test",
        presentation_order=unit.ordering,
        positions=unit.positions(),
        status=Status.UNPARSED,
        parse_success=False,
        raw_response=None,
        timestamp="",
    )
    fields = dataclasses.replace(blank, **judgment.fields()).to_dict()
    fields["status"] = Status(fields["status"])
    return fields


def interpret(
    ctx: JudgingContext,
    units: Sequence[WorkUnit],
    items: Mapping[str, Item],
    completion: Completion,
) -> list[dict[str, Any]]:
    judged = mode_of(ctx).interpret(units, items, completion)
    return [record_fields(j, unit) for j, unit in zip(judged, units, strict=True)]
