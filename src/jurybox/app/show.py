"""``jurybox show RUN ITEM``: the exact system and user text a judgment's judge was sent.

The prompt is rebuilt by ``pipeline.sent.RunPrompts`` from what the run kept (its manifest's
config snapshot and own prompt, the dataset it names) and checked against each record's
``prompt_hash``, so what is printed is what went over the wire, or an error says why it cannot
be (docs/prompts.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.app.sources import recorded_config_path, run_items, run_records, run_sources
from jurybox.config import RunConfig, config_from_mapping
from jurybox.errors import DatasetError, InputError
from jurybox.pipeline.manifest import MANIFEST_FILE, read_manifest
from jurybox.pipeline.sent import PromptUnavailable, RunPrompts, SentPrompt
from jurybox.prompts import PromptSources
from jurybox.records import JudgeRecord

__all__ = ["Selection", "Shown", "format_shown", "open_run_prompts", "show_prompts"]


@dataclass(frozen=True, slots=True)
class Selection:
    """Which judgments of an item to show (None: any)."""

    item: str
    judge: str | None = None
    order: str | None = None
    repeat: int | None = None
    criterion: str | None = None
    retest: bool | None = None

    def matches(self, record: JudgeRecord) -> bool:
        wanted = (
            (self.judge, record.judge_name),
            (self.order, record.presentation_order),
            (self.repeat, record.repeat),
            (self.criterion, record.criterion),
            (self.retest, record.retest),
        )
        return record.query_id == self.item and all(w is None or w == got for w, got in wanted)


@dataclass(frozen=True, slots=True)
class Shown:
    """One judgment and the prompt its call sent."""

    record: JudgeRecord
    prompt: SentPrompt


def open_run_prompts(
    run: Path, *, dataset: Path | None = None
) -> tuple[RunPrompts, list[JudgeRecord]]:
    """The prompt rebuilder of a run folder (or its judgments.jsonl) and the run's records.

    Raises InputError when the run has no manifest (an import: jurybox sent nothing) or its
    config, own prompt or dataset cannot be read.
    """
    path, records = run_records(run)
    manifest = read_manifest(path.parent / MANIFEST_FILE)
    if manifest is None or not isinstance(manifest.get("config"), dict):
        raise DatasetError(
            f"no {MANIFEST_FILE} with the run's config beside the judgments: its prompts are "
            "unknown (imported verdicts were never sent by jurybox)",
            path=str(path),
        )
    config = _run_config(manifest, recorded_config_path(path, manifest))
    prompt = _run_prompt(manifest, path)
    sources = run_sources(path, dataset=dataset, human=None)
    items = run_items(path, sources) if sources.dataset.path is not None else None
    if items is None:
        raise DatasetError(
            f"the dataset the run judged is not found ({sources.dataset.note or 'none named'})",
            path=str(path.parent / MANIFEST_FILE),
        )
    return RunPrompts(config, {item.id: item for item in items}, prompt, records), records


def _run_config(manifest: dict[str, Any], config_path: str | None) -> RunConfig:
    # The snapshot was validated when the run started; credentials in it are redacted, which a
    # prompt never needs.
    return config_from_mapping(manifest["config"], source=config_path or "<manifest config>")


def _run_prompt(manifest: dict[str, Any], path: Path) -> PromptSources | None:
    entry = manifest.get("prompt")
    if entry is None:
        return None
    try:
        return PromptSources.from_manifest(entry)
    except ValueError as exc:
        raise DatasetError(str(exc), path=str(path.parent / MANIFEST_FILE)) from None


def show_prompts(run: Path, selection: Selection, *, dataset: Path | None = None) -> list[Shown]:
    """The selected judgments of one item with the prompts their calls sent.

    Raises InputError when nothing matches (naming what the item has) or a prompt cannot be
    rebuilt with its record's hash."""
    prompts, records = open_run_prompts(run, dataset=dataset)
    chosen = [record for record in records if selection.matches(record)]
    if not chosen:
        raise DatasetError(_nothing_matches(selection, records), path=str(run))
    try:
        return [Shown(record, prompts.of(record)) for record in chosen]
    except PromptUnavailable as exc:
        raise InputError(str(exc), path=str(run)) from None


def _nothing_matches(selection: Selection, records: Sequence[JudgeRecord]) -> str:
    of_item = [record for record in records if record.query_id == selection.item]
    if not of_item:
        return f"no judgment of item {selection.item!r} in the run"
    judges = sorted({record.judge_name for record in of_item})
    orders = sorted({record.presentation_order for record in of_item})
    repeats = sorted({record.repeat for record in of_item})
    return (
        f"no judgment of item {selection.item!r} matches; it has judges {', '.join(judges)}, "
        f"orders {', '.join(orders)}, repeats {', '.join(map(str, repeats))}"
    )


def format_shown(shown: Sequence[Shown]) -> str:
    """Each judgment's prompt as sent and its answer, for a terminal: the system and user
    text are printed byte for byte between the marker lines."""
    blocks = []
    for number, one in enumerate(shown, start=1):
        record, prompt = one.record, one.prompt
        where = [f"judge {record.judge_name}", f"item {record.query_id}"]
        where += [f"order {record.presentation_order}", f"repeat {record.repeat}"]
        where += [f"criterion {record.criterion}"] * (record.criterion is not None)
        where += ["retest"] * record.retest
        head = f"=== judgment {number} of {len(shown)}: {', '.join(where)}"
        head += f" (status {record.status.value}, prompt {prompt.prompt_hash[:12]}"
        head += f", one call for {prompt.units} judgments)" if prompt.units > 1 else ")"
        schema = "native JSON schema sent" if prompt.response_schema is not None else "no schema"
        blocks.append(
            f"{head}\n--- system ---\n{prompt.system}\n--- user ---\n{prompt.user}\n"
            f"--- answer ({_usage(record)}; {schema}) ---\n{record.raw_response or ''}\n"
        )
    return "\n".join(blocks)


def _usage(record: JudgeRecord) -> str:
    tokens = f"{_count(record.input_tokens)} in / {_count(record.output_tokens)} out tokens"
    latency = f"{record.latency_ms:.0f} ms" if record.latency_ms is not None else "latency unknown"
    cached = ", from the cache" if record.cache_hit else ""
    return f"{tokens}, {latency}{cached}"


def _count(value: int | None) -> str:
    return str(value) if value is not None else "?"


def shown_json(shown: Sequence[Shown]) -> str:
    """The same as JSON (one object per judgment), for scripts and diffs."""
    rows = [
        {
            "key": one.record.key,
            "judge": one.record.judge_name,
            "item": one.record.query_id,
            "order": one.record.presentation_order,
            "repeat": one.record.repeat,
            "retest": one.record.retest,
            "criterion": one.record.criterion,
            "status": one.record.status.value,
            "prompt_hash": one.prompt.prompt_hash,
            "system": one.prompt.system,
            "user": one.prompt.user,
            "response_schema": one.prompt.response_schema,
            "schema_name": one.prompt.schema_name,
            "judgments_in_call": one.prompt.units,
            "raw_response": one.record.raw_response,
            "input_tokens": one.record.input_tokens,
            "output_tokens": one.record.output_tokens,
            "latency_ms": one.record.latency_ms,
        }
        for one in shown
    ]
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
