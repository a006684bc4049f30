"""What every verdict format shares: the record of one judged pair, JSON reading, vendors."""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import as_identifier, json_kind, read_json_lines, read_json_list
from jurybox.records import Item, JudgeRecord, Status, unit_key

MISSING = object()  # a verdict field that is absent, told apart from an explicit null


@dataclass
class Loaded:
    """What a reader found: records, items, and each unreadable verdict value with its count."""

    records: list[JudgeRecord] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    unreadable: Counter[str] = field(default_factory=Counter)
    seen: Counter[tuple[str, ...]] = field(default_factory=Counter)

    def note(self, value: Any) -> None:
        """Count one verdict value the format does not define (shown at the end of the import)."""
        self.unreadable[value_label(value)] += 1

    def repeat(self, *key: str) -> int:
        """The same judge, item and order again (a re-run appended to the file) is a repeat:
        0 the first time, then 1, 2 ..., not a clash."""
        self.seen[key] += 1
        return self.seen[key] - 1


def value_label(value: Any) -> str:
    """How an unreadable verdict value is shown: ``'tie'``, ``'3'``, ``null`` or ``missing``."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    return repr(str(value))[:40]


def nfc(value: str) -> str:
    """Text in Unicode NFC, so that the same words typed as NFC and NFD match."""
    return unicodedata.normalize("NFC", value)


@dataclass(frozen=True)
class At:
    """Where one entry of a verdict file is: the file, the line it starts on, and for an entry
    of a JSON list its number (from 0); builds the errors that point at it."""

    path: Path
    line: int | None = None
    index: int | None = None

    def error(self, message: str, field: str | None = None) -> DatasetError:
        prefix = f"entry {self.index}: " if self.index is not None else ""
        return DatasetError(prefix + message, path=str(self.path), line=self.line, field=field)


def json_entries(path: Path) -> Iterator[tuple[At, Any]]:
    """Where each element of a file holding one JSON list is, and the element (bounded JSON)."""
    for index, (line, value) in enumerate(read_json_list(path)):
        yield At(path, line, index), value


def jsonl_objects(path: Path) -> Iterator[tuple[At, dict[str, Any]]]:
    """Where each line of a JSONL file is, and its object (bounded JSON, strict UTF-8)."""
    for line, value in read_json_lines(path):
        at = At(path, line)
        if not isinstance(value, dict):
            raise at.error(f"a line must be a JSON object, got {json_kind(value)}")
        yield at, value


def mapping_of(value: Any, at: At, name: str | None = None) -> Mapping[str, Any]:
    """``value`` (the field ``name``, or the entry itself) when it is a JSON object, else an
    error naming file, entry and field."""
    if not isinstance(value, Mapping):
        raise at.error(f"expected an object, got {json_kind(value)}", name)
    return value


def field_of(entry: Any, name: str, at: At) -> Any:
    """The value of ``entry``'s field ``name``; the entry must be an object that has it."""
    entry = mapping_of(entry, at)
    if name not in entry:
        raise at.error(f"no '{name}'", name)
    return entry[name]


def text_of(entry: Mapping[str, Any], name: str, at: At, *, required: bool = True) -> str:
    """The field's text in NFC; absent or null is "" unless ``required``. A number or boolean
    is read as Python writes it (PandaLM's release holds ``true`` for two responses: "True");
    a list or an object is an error, since it would otherwise become text such as ``"[1]"``."""
    value = entry.get(name)
    if value is None and not required:
        return ""
    if isinstance(value, bool | int | float):
        value = str(value)
    if not isinstance(value, str):
        said = f"no '{name}'" if name not in entry else f"expected text, got {json_kind(value)}"
        raise at.error(said, name)
    return nfc(value)


def raw_text(value: Any) -> str | None:
    """A judge's raw answer as stored: text as it is, null as None, any other JSON value as its
    JSON text (nothing is dropped, nothing normalised)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def id_of(entry: Mapping[str, Any], name: str, at: At) -> str:
    """The field as an id: a non-empty string or an integer. Null, blank text and other kinds
    are errors (a null once became the id ``"None"``)."""
    if name not in entry:
        raise at.error(f"no '{name}'", name)
    text = as_identifier(entry[name])
    if text is None:
        said = json_kind(entry[name])
        raise at.error(f"expected a non-empty string or integer id, got {said}", name)
    return text


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
