"""What every verdict format shares: the record of one judged pair, JSON reading, vendors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.records import Item, JudgeRecord, Status, unit_key

Loaded = tuple[list[JudgeRecord], list[Item]]
_VENDORS = (
    ("chatgpt", "openai"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("claude", "anthropic"),
    ("palm", "google"),
    ("gemini", "google"),
    ("llama", "meta"),
    ("pandalm", "pandalm"),
    ("qwen", "alibaba"),
    ("mistral", "mistral"),
)


def vendor_of(name: str) -> str:
    """Best-effort vendor of a judge or model name (empty when unknown)."""
    folded = name.casefold()
    return next((vendor for prefix, vendor in _VENDORS if folded.startswith(prefix)), "")


def pair_record(
    *,
    run_id: str,
    stamp: str,
    qid: str,
    judge: str,
    shown: tuple[str, str],
    winner: str | None,
    status: Status,
    raw: str | None = None,
    model: str | None = None,
    repeat: int = 0,
    confidence: str | None = None,
    positions_shown: bool = True,
) -> JudgeRecord:
    """One imported pairwise judgment; ``winner`` is an arm, "tie" or None (failed).

    ``positions_shown=False`` marks a verdict derived from scoring each response alone.
    """
    ordering = f"{shown[0]}_first"
    preference = None
    if winner is not None:
        preference = "tie" if winner == "tie" else ("A" if winner == shown[0] else "B")
    return JudgeRecord(
        key=unit_key(qid, judge, ordering, repeat),
        run_id=run_id,
        query_id=qid,
        judge_name=judge,
        judge_model=model or judge,
        judge_vendor=vendor_of(model or judge),
        mode="pairwise",
        presentation_order=ordering,
        positions={"A": shown[0], "B": shown[1]},
        status=status,
        parse_success=status == Status.OK,
        raw_response=raw,
        timestamp=stamp,
        repeat=repeat,
        parse_method="imported",
        response_a_label=shown[0],
        response_b_label=shown[1],
        preference=preference,
        positions_shown=positions_shown,
        preferred_arm=winner,
        confidence=confidence,
        error=None if status == Status.OK else f"imported verdict: {status.value}",
    )


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError("file not found", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None


def _field(entry: Mapping[str, Any], name: str, path: Path, index: int) -> Any:
    if name not in entry:
        raise DatasetError(f"entry {index} has no '{name}'", path=str(path), field=name)
    return entry[name]


# --- LLMBar --------------------------------------------------------------------------------


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if text.strip():
                try:
                    rows.append((line, json.loads(text)))
                except json.JSONDecodeError as exc:
                    raise DatasetError(
                        f"invalid JSON: {exc.msg}", path=str(path), line=line
                    ) from None
    return rows
