"""Any JSONL/CSV of verdicts with a column mapping (see ``jurybox.io.verdicts``)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import Loaded, _jsonl_rows, pair_record
from jurybox.records import Item, JudgeRecord, Status

# --- generic -------------------------------------------------------------------------------

_GENERIC_FIELDS = {
    "query_id",
    "judge",
    "preferred",
    "swap",
    "order",
    "gold",
    "question",
    "response_a",
    "response_b",
    "confidence",
    "model",
    "category",
}
_GENERIC_OPTIONS = {"preferred_is", "arm_a", "arm_b"}


def _ab(value: Any) -> str | None:
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip().upper()
    return {"A": "A", "1": "A", "B": "B", "2": "B", "TIE": "tie", "0": "tie", "C": "tie"}.get(text)


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "y", "t")


def _generic_rows(source: Path) -> list[tuple[int, dict[str, Any]]]:
    if source.suffix.lower() == ".csv":
        with source.open(encoding="utf-8", newline="") as handle:
            return [(i, dict(row)) for i, row in enumerate(csv.DictReader(handle), start=2)]
    return _jsonl_rows(source)


def _check_mapping(mapping: Mapping[str, str], source: Path) -> None:
    unknown = set(mapping) - _GENERIC_FIELDS - _GENERIC_OPTIONS
    if unknown:
        raise DatasetError(f"unknown mapping key(s) {sorted(unknown)}", path=str(source))
    for required in ("query_id", "judge", "preferred"):
        if required not in mapping:
            raise DatasetError(f"the mapping needs '{required}'", path=str(source), field=required)
    if mapping.get("preferred_is", "arm") not in ("arm", "position"):
        raise DatasetError("preferred_is must be 'arm' or 'position'", path=str(source))


def _cell(
    row: Mapping[str, Any], mapping: Mapping[str, str], name: str, where: tuple[Path, int]
) -> Any:
    column = mapping[name]
    if column not in row:
        raise DatasetError(f"no column '{column}'", path=str(where[0]), line=where[1], field=name)
    return row[column]


def _generic_item(
    qid: str, row: Mapping[str, Any], m: Mapping[str, str], arms: tuple[str, str]
) -> Item:
    responses = {
        arm: str(row[m[f]])
        for arm, f in zip(arms, ("response_a", "response_b"), strict=True)
        if f in m and row.get(m[f]) is not None
    }
    gold = _ab(row.get(m["gold"])) if "gold" in m else None
    human = {"preferred_arm": {"A": arms[0], "B": arms[1], "tie": "tie"}[gold]} if gold else {}
    meta = {"category": row.get(m["category"])} if "category" in m else {}
    return Item(
        id=qid,
        question=str(row.get(m.get("question", ""), "") or ""),
        responses=responses,
        human=human,
        metadata=meta,
    )


def _swapped(row: Mapping[str, Any], mapping: Mapping[str, str]) -> bool:
    """Whether the second response was shown first (``swap`` truthy, or ``order`` "BA")."""
    if "swap" in mapping:
        return _truthy(row.get(mapping["swap"]))
    if "order" in mapping:
        return str(row.get(mapping["order"], "AB")).strip().upper().startswith("B")
    return False


def _optional(row: Mapping[str, Any], mapping: Mapping[str, str], name: str) -> str | None:
    value = row.get(mapping[name]) if name in mapping else None
    return None if value in (None, "") else str(value)


def read_generic(source: Path, mapping: dict[str, str], stamp: str) -> Loaded:
    """A JSONL/CSV table of verdicts with a column mapping (see the importers docstring)."""
    _check_mapping(mapping, source)
    arms = (mapping.get("arm_a", "response_a"), mapping.get("arm_b", "response_b"))
    positional = mapping.get("preferred_is", "arm") == "position"
    records: list[JudgeRecord] = []
    items: dict[str, Item] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for line, row in _generic_rows(source):
        where = (source, line)
        qid = str(_cell(row, mapping, "query_id", where))
        judge = str(_cell(row, mapping, "judge", where))
        shown = (arms[1], arms[0]) if _swapped(row, mapping) else arms
        pref = _ab(_cell(row, mapping, "preferred", where))
        letters = {"A": shown[0], "B": shown[1]} if positional else {"A": arms[0], "B": arms[1]}
        winner = None if pref is None else ("tie" if pref == "tie" else letters[pref])
        # The same judge, item and order again is a repeat, not a duplicate.
        repeat = seen[(qid, judge, shown[0])] = seen.get((qid, judge, shown[0]), -1) + 1
        records.append(
            pair_record(
                run_id=f"import-generic-{source.stem}",
                stamp=stamp,
                qid=qid,
                judge=judge,
                shown=shown,
                winner=winner,
                status=Status.OK if winner else Status.UNPARSED,
                repeat=repeat,
                confidence=_optional(row, mapping, "confidence"),
                model=_optional(row, mapping, "model"),
            )
        )
        items.setdefault(qid, _generic_item(qid, row, mapping, arms))
    return records, list(items.values())
