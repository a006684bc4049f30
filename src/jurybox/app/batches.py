"""``jurybox batches DIR [--cancel]`` and the batch side of ``jurybox run``: the config switch,
the dry-run plan (batches per judge, cost at the batch rate), listing and cancelling a run's
provider batches from its ``batches.jsonl``."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from jurybox.config import JudgeConfig, RunConfig
from jurybox.errors import ConfigError
from jurybox.pipeline.batch import BATCH_LOG_FILE, BatchEntry, read_log
from jurybox.pipeline.manifest import MANIFEST_FILE, read_manifest
from jurybox.pipeline.runner import RunInputs, request_for
from jurybox.pipeline.summary import JudgeEstimate
from jurybox.pipeline.units import make_batches
from jurybox.pricing import batch_priced, format_usd, tokens_cost_usd
from jurybox.providers.batch import BATCH_VENDORS, batch_backend
from jurybox.providers.registry import create_provider

# The vendor limits, known without importing any SDK (the same figures as the vendor modules).
_LIMITS = {
    "openai": (50_000, 200 * 1024 * 1024),
    "anthropic": (100_000, 256 * 1024 * 1024),
    "google": (100_000, 19 * 1024 * 1024),
}
_LINE_OVERHEAD = 400  # bytes of JSON around a request's text in a batch line (an estimate)


def with_batch(config: RunConfig, batch: bool, fallback: str | None) -> RunConfig:
    """The config with ``--batch`` / ``--batch-fallback`` applied (the CLI wins)."""
    update: dict[str, Any] = {}
    if batch:
        update["batch"] = True
    if fallback is not None:
        update["batch_fallback"] = fallback
    if not update:
        return config
    return config.model_copy(update={"pipeline": config.pipeline.model_copy(update=update)})


def batched_judges(config: RunConfig) -> list[str]:
    """Judges whose provider has a batch API (the rest run synchronously in a batch run)."""
    return [name for name, judge in config.judges.items() if judge.provider in BATCH_VENDORS]


@dataclass(frozen=True)
class BatchPlan:
    judge: str
    requests: int
    batches: int
    sync_cost_usd: float | None
    batch_cost_usd: float | None


def plan_estimates(
    inputs: RunInputs, estimates: Sequence[JudgeEstimate]
) -> tuple[list[JudgeEstimate], list[BatchPlan]]:
    """Dry-run estimates with batch judges at the batch rate, and their batch plan."""
    config = inputs.config
    calls = make_batches(config, inputs.units)
    priced, plans = [], []
    for estimate in estimates:
        judge = config.judges[estimate.judge]
        if judge.provider not in _LIMITS:
            priced.append(estimate)
            continue
        mine = [call for call in calls if call[0].judge == estimate.judge]
        size = sum(_line_size(inputs, call) for call in mine)
        max_requests, max_bytes = _LIMITS[judge.provider]
        count = max(math.ceil(len(mine) / max_requests), math.ceil(size / max_bytes))
        at_batch_rate = batch_priced(judge)
        cost = tokens_cost_usd(at_batch_rate, estimate.input_tokens, estimate.output_tokens, 0)
        most = tokens_cost_usd(at_batch_rate, estimate.input_tokens, estimate.max_output_tokens, 0)
        plans.append(BatchPlan(estimate.judge, len(mine), count, estimate.cost_usd, cost))
        priced.append(replace(estimate, cost_usd=cost, max_cost_usd=most))
    return priced, plans


def _line_size(inputs: RunInputs, call: Any) -> int:
    request = request_for(inputs, call)
    return len((request.system + request.user).encode()) + _LINE_OVERHEAD


def print_plan(console: Console, plans: Sequence[BatchPlan], sync_judges: Sequence[str]) -> None:
    table = Table(title="batch plan: provider batches at the batch rate")
    for column in ("judge", "requests", "batches", "cost est. (sync)", "cost est. (batch)"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for plan in plans:
        table.add_row(
            plan.judge,
            str(plan.requests),
            str(plan.batches),
            format_usd(plan.sync_cost_usd),
            format_usd(plan.batch_cost_usd),
        )
    console.print(table)
    if sync_judges:
        console.print(f"synchronous (no batch API): {', '.join(sync_judges)}")


# --- jurybox batches DIR ------------------------------------------------------------------------


def _judges_of(directory: Path) -> dict[str, JudgeConfig]:
    manifest = read_manifest(directory / MANIFEST_FILE)
    if manifest is None:
        raise ConfigError(f"{directory} has no {MANIFEST_FILE}: not a run folder", field="DIR")
    judges = manifest.get("config", {}).get("judges", {})
    return {name: JudgeConfig.model_validate(judge) for name, judge in judges.items()}


def list_batches(directory: str | Path, *, cancel: bool, console: Console) -> list[dict[str, Any]]:
    """Print the run's batches (live state for open ones); with ``cancel``, cancel those."""
    directory = Path(directory)
    entries = list(read_log(directory / BATCH_LOG_FILE).values())
    if not entries:
        raise ConfigError(f"{directory} has no {BATCH_LOG_FILE}: not a batch run", field="DIR")
    rows = asyncio.run(_rows(entries, _judges_of(directory), cancel))
    table = Table(title=f"batches of {directory}")
    for column in ("label", "judge", "batch id", "requests", "attempt", "status", "done"):
        table.add_column(column)
    for row in rows:
        table.add_row(*(str(row[key]) for key in row))
    console.print(table)
    return rows


async def _rows(
    entries: Sequence[BatchEntry], judges: dict[str, JudgeConfig], cancel: bool
) -> list[dict[str, Any]]:
    backends: dict[str, Any] = {}
    rows = []
    try:
        for entry in entries:
            status, done = _logged_status(entry), ""
            if entry.open and entry.batch_id is not None and entry.judge in judges:
                backend = backends.get(entry.judge)
                if backend is None:
                    provider = create_provider(entry.judge, judges[entry.judge])
                    backend = backends[entry.judge] = batch_backend(provider)
                status, done = await _live(backend, entry.batch_id, cancel)
            rows.append(
                {
                    "label": entry.label,
                    "judge": entry.judge,
                    "batch_id": entry.batch_id or "-",
                    "requests": len(entry.requests),
                    "attempt": entry.attempt,
                    "status": status,
                    "done": done,
                }
            )
    finally:
        for backend in backends.values():
            await backend.aclose()
    return rows


def _logged_status(entry: BatchEntry) -> str:
    if entry.collected:
        return f"collected ({entry.status})"
    if entry.abandoned:
        return f"abandoned ({entry.status})"
    return "submitting (no id yet)" if entry.batch_id is None else "open"


async def _live(backend: Any, batch_id: str, cancel: bool) -> tuple[str, str]:
    try:
        if cancel:
            await backend.cancel(batch_id)
        state = await backend.state(batch_id)
    except Exception as exc:
        return f"unknown: {backend.classify_error(exc)}", ""
    done = f"{state.done}/{state.total}" if state.total else ""
    return state.status, done
