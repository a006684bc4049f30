"""Any JSONL/CSV of verdicts with a column mapping (see ``jurybox.io.verdicts``).

Three shapes, told apart by the verdict key the mapping names: ``preferred`` (pairwise),
``score`` (one response scored alone) or ``label`` (a binary Pass/Fail label).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import read_csv_rows
from jurybox.io.verdicts._common import (
    At,
    Loaded,
    id_of,
    jsonl_objects,
    pair_record,
    single_record,
    text_of,
)
from jurybox.records import Item, Status

# Every --map key, with what it names; shown by `jurybox import --help` and in the error.
MAP_KEYS = {
    "query_id": "column: item id (required)",
    "judge": "column: judge name (required)",
    "preferred": "column: pairwise verdict A|B|tie or 1|2|0",
    "score": "column: a number scoring one response alone",
    "label": "column: a binary label yes/no, true/false, 1/0, pass/fail",
    "arm": "column: which response a score or label is about (default 'response')",
    "swap": "column: truthy when the second response was shown first",
    "order": "column: 'AB' or 'BA', the order shown",
    "gold": "column: the human verdict, in the same vocabulary as the judge's",
    "question": "column: the question text",
    "response": "column: the judged response (score, label)",
    "response_a": "column: the first response (pairwise)",
    "response_b": "column: the second response (pairwise)",
    "confidence": "column: verdict confidence",
    "model": "column: the judge's model",
    "category": "column: item category (reports break results down by it)",
    "criterion": "column: criterion name of a label (default 'label')",
    "preferred_is": "option: 'arm' (default; preferred is in the original numbering) or 'position'",
    "arm_a": "option: name of the first arm (default response_a)",
    "arm_b": "option: name of the second arm (default response_b)",
}
_VERDICT_KEYS = ("preferred", "score", "label")
_BINARY = {
    **dict.fromkeys(("yes", "true", "1", "pass", "passed", "y", "t"), "Pass"),
    **dict.fromkeys(("no", "false", "0", "fail", "failed", "n", "f"), "Fail"),
}


def map_keys_text() -> str:
    """The ``--map`` keys, one per line, for help texts and errors."""
    return "\n".join(f"  {key:<13} {meaning}" for key, meaning in MAP_KEYS.items())


def _ab(value: Any) -> str | None:
    if value is None or str(value).strip() == "":
        return None
    text = str(value).strip().upper()
    return {"A": "A", "1": "A", "B": "B", "2": "B", "TIE": "tie", "0": "tie", "C": "tie"}.get(text)


def _binary(value: Any) -> str | None:
    if isinstance(value, float) and value in (0.0, 1.0):
        value = int(value)
    return _BINARY.get(str(value).strip().lower()) if value is not None else None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "y", "t")


def _generic_rows(source: Path) -> Iterator[tuple[At, dict[str, Any]]]:
    """Each row and where it is: a CSV's records (ragged rows and a header naming a column twice
    refused) or a JSONL file's objects."""
    if source.suffix.lower() == ".csv":
        return ((At(source, line), row) for line, row in read_csv_rows(source))
    return jsonl_objects(source)


def _check_mapping(mapping: Mapping[str, str], source: Path) -> str:
    """The verdict key the mapping uses; an unknown or missing key lists every known one."""
    unknown = set(mapping) - set(MAP_KEYS)
    if unknown:
        raise DatasetError(
            f"unknown --map key(s) {sorted(unknown)}; known keys:\n{map_keys_text()}",
            path=str(source),
        )
    for required in ("query_id", "judge"):
        if required not in mapping:
            raise DatasetError(f"the mapping needs '{required}'", path=str(source), field=required)
    given = [key for key in _VERDICT_KEYS if key in mapping]
    if len(given) != 1:
        raise DatasetError(
            "the mapping needs exactly one verdict key of preferred (pairwise), score (rubric) "
            f"or label (Pass/Fail), got {given or 'none'}",
            path=str(source),
        )
    if mapping.get("preferred_is", "arm") not in ("arm", "position"):
        raise DatasetError("preferred_is must be 'arm' or 'position'", path=str(source))
    return given[0]


def _cell(row: Mapping[str, Any], mapping: Mapping[str, str], name: str, at: At) -> Any:
    column = mapping[name]
    if column not in row:
        raise at.error(f"no column '{column}'", name)
    return row[column]


def _id(row: Mapping[str, Any], mapping: Mapping[str, str], name: str, at: At) -> str:
    """An id column's value: null, blank or a list is an error, never the id ``"None"``."""
    _cell(row, mapping, name, at)
    return id_of(row, mapping[name], at)


def _optional(row: Mapping[str, Any], mapping: Mapping[str, str], name: str, at: At) -> str | None:
    """A text column's value; None where it is not mapped, absent, null or empty."""
    if name not in mapping:
        return None
    return text_of(row, mapping[name], at, required=False) or None


def _pair_item(
    qid: str, row: Mapping[str, Any], m: Mapping[str, str], arms: tuple[str, str], at: At
) -> Item:
    responses = {
        arm: text_of(row, m[f], at)
        for arm, f in zip(arms, ("response_a", "response_b"), strict=True)
        if f in m and row.get(m[f]) is not None
    }
    gold = _ab(row.get(m["gold"])) if "gold" in m else None
    human = {"preferred_arm": {"A": arms[0], "B": arms[1], "tie": "tie"}[gold]} if gold else {}
    return Item(
        id=qid,
        question=_optional(row, m, "question", at) or "",
        responses=responses,
        human=human,
        metadata=_metadata(row, m),
    )


def _metadata(row: Mapping[str, Any], m: Mapping[str, str]) -> dict[str, Any]:
    return {"category": row.get(m["category"])} if "category" in m else {}


def _swapped(row: Mapping[str, Any], mapping: Mapping[str, str]) -> bool:
    """Whether the second response was shown first (``swap`` truthy, or ``order`` "BA")."""
    if "swap" in mapping:
        return _truthy(row.get(mapping["swap"]))
    if "order" in mapping:
        return str(row.get(mapping["order"], "AB")).strip().upper().startswith("B")
    return False


class _Reader:
    """One generic table being read: the mapping and what was found."""

    def __init__(self, source: Path, mapping: Mapping[str, str], stamp: str) -> None:
        self.source, self.m, self.stamp = source, mapping, stamp
        self.run_id = f"import-generic-{source.stem}"
        self.loaded = Loaded()
        self.items: dict[str, Item] = {}

    def pairwise(self, row: Mapping[str, Any], at: At) -> None:
        m = self.m
        arms = (m.get("arm_a", "response_a"), m.get("arm_b", "response_b"))
        qid, judge = _id(row, m, "query_id", at), _id(row, m, "judge", at)
        shown = (arms[1], arms[0]) if _swapped(row, m) else arms
        value = _cell(row, m, "preferred", at)
        pref = _ab(value)
        positional = m.get("preferred_is", "arm") == "position"
        letters = {"A": shown[0], "B": shown[1]} if positional else {"A": arms[0], "B": arms[1]}
        winner = None if pref is None else ("tie" if pref == "tie" else letters[pref])
        if winner is None:
            self.loaded.note(value)
        self.loaded.records.append(
            pair_record(
                run_id=self.run_id,
                stamp=self.stamp,
                qid=qid,
                judge=judge,
                shown=shown,
                winner=winner,
                status=Status.OK if winner else Status.UNPARSED,
                repeat=self.loaded.repeat(qid, judge, shown[0]),
                confidence=_optional(row, m, "confidence", at),
                model=_optional(row, m, "model", at),
            )
        )
        if qid not in self.items:
            self.items[qid] = _pair_item(qid, row, m, arms, at)

    def single(self, key: str, row: Mapping[str, Any], at: At) -> None:
        m = self.m
        qid, judge = _id(row, m, "query_id", at), _id(row, m, "judge", at)
        arm = _optional(row, m, "arm", at) or "response"
        value = _cell(row, m, key, at)
        read: Any = _number(value) if key == "score" else _binary(value)
        if read is None:
            self.loaded.note(value)
        criterion = (_optional(row, m, "criterion", at) or "label") if key == "label" else None
        self.loaded.records.append(
            single_record(
                run_id=self.run_id,
                stamp=self.stamp,
                qid=qid,
                judge=judge,
                arm=arm,
                status=Status.OK if read is not None else Status.UNPARSED,
                score=read if key == "score" else None,
                verdict=read if key == "label" else None,
                criterion=criterion,
                model=_optional(row, m, "model", at),
                repeat=self.loaded.repeat(qid, judge, arm, criterion or ""),
            )
        )
        self._single_item(qid, arm, key, row, at)

    def _single_item(self, qid: str, arm: str, key: str, row: Mapping[str, Any], at: At) -> None:
        m = self.m
        item = self.items.setdefault(
            qid,
            Item(
                id=qid,
                question=_optional(row, m, "question", at) or "",
                responses={},
                metadata=_metadata(row, m),
            ),
        )
        responses = {**item.responses, arm: _optional(row, m, "response", at) or ""}
        human = dict(item.human)
        gold = row.get(m["gold"]) if "gold" in m else None
        if key == "score" and _number(gold) is not None:
            human["overall"] = {**human.get("overall", {}), arm: _number(gold)}
        elif key == "label" and _binary(gold) is not None:
            human["verdict"] = {**human.get("verdict", {}), arm: _binary(gold)}
        self.items[qid] = Item(
            id=qid, question=item.question, responses=responses, metadata=item.metadata, human=human
        )


def read_generic(source: Path, mapping: dict[str, str], stamp: str) -> Loaded:
    """A JSONL/CSV table of verdicts with a column mapping (see the importers docstring)."""
    key = _check_mapping(mapping, source)
    if not source.is_file():
        raise DatasetError("generic import reads one .jsonl or .csv file", path=str(source))
    reader = _Reader(source, mapping, stamp)
    for at, row in _generic_rows(source):
        if key == "preferred":
            reader.pairwise(row, at)
        else:
            reader.single(key, row, at)
    if not reader.loaded.records:
        raise DatasetError("no row to import", path=str(source))
    reader.loaded.items = list(reader.items.values())
    return reader.loaded
