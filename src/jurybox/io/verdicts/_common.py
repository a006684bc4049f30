"""What every verdict format shares: the record of one judged pair, JSON reading, vendors."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.records import Item, JudgeRecord, Status, unit_key

MISSING = object()  # a verdict field that is absent, told apart from an explicit null


@dataclass
class Loaded:
    """What a reader found: records, items, and each unreadable verdict value with its count."""

    records: list[JudgeRecord] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    unreadable: Counter[str] = field(default_factory=Counter)

    def note(self, value: Any) -> None:
        """Count one verdict value the format does not define (shown at the end of the import)."""
        self.unreadable[value_label(value)] += 1


def value_label(value: Any) -> str:
    """How an unreadable verdict value is shown: ``'tie'``, ``'3'``, ``null`` or ``missing``."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    return repr(str(value))[:40]


def nfc(value: Any) -> str:
    """Text in Unicode NFC, so that the same words typed as NFC and NFD match."""
    return unicodedata.normalize("NFC", str(value))


def entry_error(path: Path, index: int, name: str, message: str) -> DatasetError:
    """The error for one unreadable entry: file, entry number (from 0) and field."""
    return DatasetError(f"entry {index}: {message}", path=str(path), field=name)


def mapping_of(value: Any, path: Path, index: int, name: str) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else a clean error naming file, entry and field."""
    if not isinstance(value, Mapping):
        kind = type(value).__name__ if value is not None else "null"
        raise entry_error(path, index, name, f"expected an object, got {kind}")
    return value


def list_of(value: Any, path: Path, name: str) -> list[Any]:
    """``value`` when it is a JSON list (the file's top level or one field), else an error."""
    if not isinstance(value, list):
        kind = type(value).__name__ if value is not None else "null"
        raise DatasetError(f"expected a list, got {kind}", path=str(path), field=name)
    return value


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
    except UnicodeDecodeError:
        raise DatasetError("not UTF-8 text", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None


def _field(entry: Any, name: str, path: Path, index: int) -> Any:
    entry = mapping_of(entry, path, index, name)
    if name not in entry:
        raise DatasetError(f"entry {index} has no '{name}'", path=str(path), field=name)
    return entry[name]


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows: list[tuple[int, dict[str, Any]]] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line, text in enumerate(handle, start=1):
            if text.strip():
                try:
                    row = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DatasetError(
                        f"invalid JSON: {exc.msg}", path=str(path), line=line
                    ) from None
                if not isinstance(row, dict):
                    raise DatasetError("a line must be a JSON object", path=str(path), line=line)
                rows.append((line, row))
    return rows


def single_record(
    *,
    run_id: str,
    stamp: str,
    qid: str,
    judge: str,
    arm: str,
    status: Status,
    score: float | None = None,
    verdict: str | None = None,
    criterion: str | None = None,
    raw: str | None = None,
    model: str | None = None,
    repeat: int = 0,
) -> JudgeRecord:
    """One imported judgment of one response alone: a score (rubric) or Pass/Fail (criterion).

    A score is kept as the response's ``overall`` and as its one dimension, ``score``.
    """
    ok = status == Status.OK
    return JudgeRecord(
        key=unit_key(qid, judge, arm, repeat, criterion=criterion),
        run_id=run_id,
        query_id=qid,
        judge_name=judge,
        judge_model=model or judge,
        judge_vendor=vendor_of(model or judge),
        mode="criterion" if criterion is not None else "rubric",
        presentation_order=arm,
        positions={"A": arm},
        status=status,
        parse_success=ok,
        raw_response=raw,
        timestamp=stamp,
        repeat=repeat,
        criterion=criterion,
        parse_method="imported",
        scores={arm: {"score": score}} if ok and score is not None else None,
        overall={arm: score} if ok and score is not None else None,
        verdict=verdict if ok else None,
        error=None if ok else f"imported verdict: {status.value}",
    )
