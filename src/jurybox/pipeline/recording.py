"""Turn a completion (or a failed call) into JudgeRecords: provenance, usage, cost, error text.

A mode's ``interpret`` decides what the judge said, as a typed result (``jurybox.modes.results``);
this module adds what the pipeline knows (which unit, which run, tokens, cost, attempts, cache)
and lets the result fill its own fields (status, verdict, scores: never provenance). The result
names only fields ``JudgeRecord`` has (its constructor raises otherwise), so
nothing a mode says is silently dropped.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jurybox.config import JudgeConfig
from jurybox.errors import ProviderError
from jurybox.pricing import completion_cost_usd
from jurybox.providers._common import scrub_secrets
from jurybox.providers.base import Provider
from jurybox.records import Completion, JudgeRecord, Status, WorkUnit

if TYPE_CHECKING:
    from jurybox.modes.results import Judgment  # loaded when an answer is read (#19)


@dataclass(frozen=True, slots=True)
class RecordContext:
    """What every record of one judge in one run shares."""

    run_id: str
    mode: str
    judge_name: str
    judge: JudgeConfig
    provider: Provider


def utc_now() -> str:
    """``datetime.now(UTC).isoformat(timespec="milliseconds")``: every record is stamped, and
    the date and time of day change once a second, so that part is formatted once a second."""
    millis = time.time_ns() // 1_000_000
    second, milli = divmod(millis, 1000)
    if second != _STAMP[0]:
        _STAMP[:] = second, datetime.fromtimestamp(second, UTC).isoformat()[:19]
    return f"{_STAMP[1]}.{milli:03d}+00:00"


_STAMP: list[Any] = [None, ""]  # the second last stamped, and its date and time of day


def _identity(
    ctx: RecordContext,
    unit: WorkUnit,
    *,
    status: Status,
    raw_response: str | None,
    prompt_hash: str,
    attempts: int,
    error: str | None = None,
) -> dict[str, Any]:
    """The fields of the unit's record that say what it is; judgment fields left out."""
    provider = ctx.provider
    # A literal (a third of ``dict(...)``'s cost); the field named like a mode is set by
    # keyword, as the pipeline names no mode as a string.
    fields = {
        "key": unit.key,
        "run_id": ctx.run_id,
        "query_id": unit.item_id,
        "judge_name": ctx.judge_name,
        "judge_model": provider.model,
        "judge_vendor": provider.vendor,
        "mode": ctx.mode,
        "presentation_order": unit.ordering,
        "positions": unit.positions(),
        "status": status,
        "parse_success": False,
        "raw_response": raw_response,
        "timestamp": utc_now(),
        "repeat": unit.repeat,
        "retest": unit.retest,
        "error": error,
        "prompt_hash": prompt_hash,
        "attempts": attempts,
        "local_judge": provider.is_local,
        "judge_family": ctx.judge.family,
    }
    fields.update(criterion=unit.criterion)
    return fields


def _share(total: int | None, parts: int, index: int) -> int | None:
    """Split a batch's token count over its records; the shares add up to the total."""
    if total is None:
        return None
    return total // parts + (1 if index < total % parts else 0)


def _usage(
    completion: Completion, index: int, parts: int, cost: float | None, cache_hit: bool
) -> dict[str, Any]:
    """Usage fields of record ``index`` of the ``parts`` a call answered; ``cost`` the call's."""
    if parts == 1:
        input_tokens, output_tokens = completion.input_tokens, completion.output_tokens
        cached, reasoning = completion.cached_input_tokens, completion.reasoning_tokens
    else:
        input_tokens = _share(completion.input_tokens, parts, index)
        output_tokens = _share(completion.output_tokens, parts, index)
        cached = _share(completion.cached_input_tokens, parts, index)
        reasoning = _share(completion.reasoning_tokens, parts, index)
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cached_input_tokens": cached,
        "reasoning_tokens": reasoning,
        "cost_usd": None if cost is None else cost / parts,
        "latency_ms": completion.latency_ms,
        "finish_reason": completion.finish_reason,
        "cache_hit": cache_hit,
    }


def completed_records(
    ctx: RecordContext,
    units: Sequence[WorkUnit],
    judgments: Sequence[Judgment],
    completion: Completion,
    *,
    prompt_hash: str,
    attempts: int,
    cache_hit: bool,
) -> list[JudgeRecord]:
    """One record per unit from the mode's typed results plus provenance and usage."""
    if len(judgments) != len(units):
        raise ValueError(f"interpret returned {len(judgments)} results for {len(units)} units")
    # A cache hit cost nothing in this run; its tokens are still recorded so that reports can
    # say how much of the input the cache served.
    cost = 0.0 if cache_hit else completion_cost_usd(ctx.judge, completion)
    records = []
    for index, (unit, judged) in enumerate(zip(units, judgments, strict=True)):
        # Identity first with a placeholder outcome; the result then sets its own fields. One
        # record built from the three (``dataclasses.replace`` per step cost ~3x more).
        fields = _identity(
            ctx,
            unit,
            status=Status.UNPARSED,
            raw_response=completion.text,
            prompt_hash=prompt_hash,
            attempts=attempts,
        )
        fields.update(_usage(completion, index, len(units), cost, cache_hit))
        fields.update(judged.fields())
        records.append(JudgeRecord(**fields))
    return records


def error_text(ctx: RecordContext, error: ProviderError, attempts: int) -> str:
    """The error as recorded: its kind in brackets (``pipeline.failures`` reads it back), type,
    attempts, message, with any key scrubbed out: ``[HTTP 500] TransientError after 6
    attempts: ...``."""
    env = ctx.judge.api_key_env
    secret = os.environ.get(env) if env else None  # only to remove it from the message
    tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if attempts else ""
    return scrub_secrets(f"[{error.kind}] {type(error).__name__}{tries}: {error}", [secret])


def failed_records(
    ctx: RecordContext,
    units: Sequence[WorkUnit],
    error: ProviderError,
    *,
    prompt_hash: str,
    attempts: int,
) -> list[JudgeRecord]:
    """``provider_error`` records: the call never produced an answer."""
    text = error_text(ctx, error, attempts)
    return [
        JudgeRecord(
            **_identity(
                ctx,
                unit,
                status=Status.PROVIDER_ERROR,
                raw_response=None,
                error=text,
                prompt_hash=prompt_hash,
                attempts=attempts,
            )
        )
        for unit in units
    ]
