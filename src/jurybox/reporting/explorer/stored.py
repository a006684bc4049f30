"""What the explorer shows of each record left on disk, read by pyarrow instead of record by record.

The report's records pass (``render/files.py``) needs, of each of a million records, only what
``judgment`` reads (about fifteen fields) and, for the few that failed, the whole record. Parsing
every line with ``json.loads`` and building a ``JudgeRecord`` of it was most of that pass's CPU
(~65 µs a record); here the lines are parsed in blocks by ``pyarrow.json`` (C++, threaded, the
next block while this one is shaped) and the same ``judgment`` runs over the columns' values.

The result is the one the record path gives, line for line; where a block's columns could say
something else, the block (or the line) is read the record path's way instead:

- a column typed otherwise than the record path reads it (a number where a text is expected, a
  ``repeat`` read as a float), or a line pyarrow does not parse: the whole block;
- an escaped surrogate (pyarrow and ``json.loads`` decode a lone one differently), or a JSON
  ``null`` inside ``positions`` or ``overall`` (Arrow cannot tell it from an absent key): the
  whole block;
- a record whose verdict text is its ``overall`` scores, when there are two or more (their order
  is the record's own, Arrow gives the block's) or one read as a float that is a whole number
  and not written as jurybox writes a float (``7`` and ``7.0`` are shown differently and Arrow
  reads both as 7.0; the line is searched for ``"overall": {"arm": 7.0}``); and a mean
  confidence of three or more values that are not all whole numbers (a float sum's last digit
  depends on the order): that line.

Failed records (status not ok, or a holistic fallback) are read whole, for the appendix.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.json as pj  # type: ignore[import-untyped]

from jurybox.io.judgments import BLOCK_BYTES, StoredLines, StoredRecords
from jurybox.records import JudgeRecord, Status
from jurybox.reporting.explorer.data import (
    Judgment,
    judgment,
    mean_words,
    order_words,
    reasoning_words,
    verdict_words,
)
from jurybox.reporting.view.format import MISSING

# One thread: the block is parsed in a worker thread while the main one shapes the last block.
_READ = pj.ReadOptions(block_size=4 << 20, use_threads=False)
_STRINGS = (
    "query_id", "judge_name", "presentation_order", "criterion", "verdict", "preferred_arm",
    "confidence", "preference_reasoning", "raw_response", "error", "status",
)  # fmt: skip
_BOOLS = ("retest", "holistic_fallback")
_COLUMNS = (*_STRINGS, *_BOOLS, "repeat", "ranking", "positions", "overall", "confidences")
# Blocks read the record path's way (see the module's docstring).
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_NULL_INSIDE = re.compile(rb'"(?:positions|overall)":\s*\{[^}]*\bnull\b')


@dataclass(frozen=True, slots=True)
class Seen:
    """One record as the explorer shows it; ``failed`` the whole record when it is excluded
    from the metrics (``is_failed``), for the failure appendix; else None."""

    query_id: str
    judge: str
    shown: Judgment
    failed: JudgeRecord | None


@dataclass(slots=True)
class SeenBlock:
    """A block of records as the explorer shows them, field by field (row ``i`` of each list
    is record ``first + i``): a million records make no object each. ``failed``: the whole
    record of each row excluded from the metrics (``is_failed``), in order, for the appendix;
    ``texts``: whether every shown field is a text (a record read whole may hold another
    type, which the explorer shows as the record path does)."""

    first: int
    query_ids: list[str]
    judges: list[str]
    orders: list[str]
    verdicts: list[str]
    confidences: list[str]
    reasonings: list[str]
    statuses: list[str]
    failed: list[tuple[int, JudgeRecord]]
    texts: bool = True

    def seen(self) -> Iterator[Seen]:
        """Each row as a ``Seen``."""
        failed = dict(self.failed)
        rows = zip(
            self.query_ids, self.judges, self.orders, self.verdicts, self.confidences,
            self.reasonings, self.statuses, strict=True,
        )  # fmt: skip
        for row, (query_id, judge, order, verdict, confidence, reasoning, status) in enumerate(
            rows
        ):
            shown = Judgment(judge, order, verdict, confidence, reasoning, status)
            yield Seen(query_id, judge, shown, failed.get(row))


def seen_blocks(records: StoredRecords, *, block_bytes: int = BLOCK_BYTES) -> Iterator[SeenBlock]:
    """The records as the explorer shows them, block by block in the records' order (their
    lines parsed ``block_bytes`` at a time, the next block in a worker thread)."""
    return seen_line_blocks(records.line_blocks(block_bytes))


# pyarrow's table of a block parsed already (every column, or those ``shown_columns``
# keeps), else None: the block is parsed here.
ParsedAlready = Callable[[StoredLines], pa.Table | None]


def seen_line_blocks(
    blocks: Iterator[StoredLines], parsed: ParsedAlready | None = None
) -> Generator[SeenBlock, None, None]:
    """``seen_blocks`` of records given as their lines, block by block; ``parsed`` asked for
    each block's table first (in order, in a worker thread)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-explorer") as pool:
        ahead = pool.submit(_next_parsed, blocks, parsed)
        while (found := ahead.result()) is not None:
            ahead = pool.submit(_next_parsed, blocks, parsed)
            yield _block_seen(*found)


def _next_parsed(
    blocks: Iterator[StoredLines], parsed: ParsedAlready | None
) -> tuple[StoredLines, pa.Table | None] | None:
    """The next block and pyarrow's table of it (None where the record path must read it);
    run in a worker thread: reading and pyarrow's parse release the GIL."""
    block = next(blocks, None)
    if block is None:
        return None
    return block, _parsed(block, parsed(block) if parsed is not None else None)


def shown_columns(table: pa.Table) -> pa.Table:
    """The columns of a block's table that the explorer and the appendix read."""
    return table.select([name for name in table.schema.names if name in _COLUMNS])


def _parsed(block: StoredLines, table: pa.Table | None = None) -> pa.Table | None:
    """pyarrow's table of the block (``table``: parsed already), checked as the record path
    would read it; None where that path must read it."""
    if _SURROGATE.search(block.data) or _NULL_INSIDE.search(block.data):
        return None
    try:
        if table is None:
            table = pj.read_json(io.BytesIO(block.data), read_options=_READ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(block.starts) or not _typed(table.schema):
        return None
    table = shown_columns(table)
    try:
        table.validate(full=True)  # pyarrow takes bytes that are not UTF-8 as they are
    except pa.ArrowInvalid:
        return None
    return table


def _is(kind: pa.DataType, *accepted: Any) -> bool:
    return bool(pa.types.is_null(kind) or any(check(kind) for check in accepted))


def _struct_of(kind: pa.DataType, inner: Any) -> bool:
    return _is(kind) or (pa.types.is_struct(kind) and all(inner(field.type) for field in kind))


def _number(kind: pa.DataType) -> bool:
    return _is(kind, pa.types.is_integer, pa.types.is_floating)


def _typed(schema: pa.Schema) -> bool:
    """Whether every column read is typed as the record path would read its values."""
    kinds = {name: schema.field(name).type for name in schema.names if name in _COLUMNS}
    null = pa.null()
    return (
        all(_is(kinds.get(name, null), pa.types.is_string) for name in _STRINGS)
        and all(_is(kinds.get(name, null), pa.types.is_boolean) for name in _BOOLS)
        and _is(kinds.get("repeat", null), pa.types.is_integer)
        and _is(kinds.get("ranking", null), pa.types.is_list)
        and (
            not pa.types.is_list(kinds.get("ranking", null))
            or pa.types.is_string(kinds["ranking"].value_type)
        )
        and _struct_of(kinds.get("positions", null), lambda k: _is(k, pa.types.is_string))
        and _struct_of(kinds.get("overall", null), _number)
        and _struct_of(kinds.get("confidences", null), lambda k: _struct_of(k, _number))
    )


def _block_seen(block: StoredLines, table: pa.Table | None) -> SeenBlock:
    n = len(block.starts)
    if table is None:
        return _whole_rows(block, _empty_block(block.first, n), range(n))
    values = _Values(table)
    statuses, fallbacks = values.get("status"), values.get("holistic_fallback")
    verdicts, confidences = _verdicts(values, block), _confidences(values)
    seen = SeenBlock(
        block.first,
        values.get("query_id"),
        values.get("judge_name"),
        _orders(values),
        verdicts,  # type: ignore[arg-type]  # its Nones are read whole below
        confidences,  # type: ignore[arg-type]
        list(
            map(
                reasoning_words,
                *(values.get(name) for name in ("preference_reasoning", "raw_response", "error")),
            )
        ),
        [_OK] * n,
        [],
    )
    whole = [
        row
        for row, (status, fallback, verdict, confidence) in enumerate(
            zip(statuses, fallbacks, verdicts, confidences, strict=True)
        )
        if status != _OK or fallback or verdict is None or confidence is None
    ]
    return _whole_rows(block, seen, whole)


_OK = Status.OK.value


def _empty_block(first: int, n: int) -> SeenBlock:
    query_ids, judges, orders, verdicts, confidences, reasonings, statuses = (
        [""] * n for _ in range(7)
    )
    return SeenBlock(
        first, query_ids, judges, orders, verdicts, confidences, reasonings, statuses, []
    )


def _whole_rows(block: StoredLines, seen: SeenBlock, rows: Iterable[int]) -> SeenBlock:
    """``seen`` with these rows read from their records (the record path's way)."""
    for row in rows:
        record = block.record(row)
        shown = judgment(record)
        seen.query_ids[row], seen.judges[row] = record.query_id, record.judge_name
        seen.orders[row], seen.verdicts[row] = shown.order, shown.verdict
        seen.confidences[row], seen.reasonings[row] = shown.confidence, shown.reasoning
        seen.statuses[row] = shown.status
        if record.status != Status.OK or record.holistic_fallback:
            seen.failed.append((row, record))
        fields = (record.query_id, record.judge_name, *_shown_fields(shown))
        seen.texts = seen.texts and all(type(value) is str for value in fields)
    return seen


def _shown_fields(shown: Judgment) -> tuple[Any, ...]:
    """What a judgment shows but its judge: order, verdict, confidence, reasoning, status."""
    return (shown.order, shown.verdict, shown.confidence, shown.reasoning, shown.status)


class _Values:
    """A block's columns as Python values (an absent column: all None)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.n = table.num_rows

    def get(self, name: str) -> list[Any]:
        if name not in self.table.schema.names:
            return [None] * self.n
        return self.table.column(name).to_pylist()  # type: ignore[no-any-return]

    def fields(self, name: str) -> dict[str, pa.Array]:
        """A struct column's fields (with the struct's nulls), in the block's key order."""
        if name not in self.table.schema.names:
            return {}
        column = self.table.column(name).combine_chunks()
        return _fields_of(column)


def _fields_of(column: pa.Array) -> dict[str, pa.Array]:
    if not pa.types.is_struct(column.type):
        return {}
    return {field.name: array for field, array in zip(column.type, column.flatten(), strict=True)}


def _valid(array: pa.Array) -> np.ndarray[Any, Any]:
    return np.asarray(array.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _orders(values: _Values) -> list[str]:
    """``order_words`` of each row (few distinct ones: each worked out once)."""
    known: dict[tuple[Any, ...], str] = {}
    orders = []
    names = ("presentation_order", "retest", "repeat", "criterion")
    for key in zip(*(values.get(name) for name in names), strict=True):
        text = known.get(key)
        if text is None:
            text = known[key] = order_words(*key)
        orders.append(text)
    return orders


def _verdicts(values: _Values, block: StoredLines) -> list[str | None]:
    """``verdict_text`` of each row; None where the columns cannot tell it (see the module's
    docstring: two or more ``overall`` scores, or one that may have been an int)."""
    counts, first = _shown_arms(values)
    arms, scores, floats = _single_overall(values)
    known: dict[tuple[Any, ...], str] = {}
    verdicts: list[str | None] = []
    rows = zip(
        values.get("ranking"), values.get("verdict"), values.get("preferred_arm"), strict=True
    )
    for row, (ranking, verdict, preferred) in enumerate(rows):
        if ranking or verdict is not None or preferred is not None:
            shown = (first[row],) if counts[row] == 1 else (None,) * counts[row]
            verdicts.append(verdict_words(ranking, verdict, shown, preferred, None))
            continue
        arm = arms[row]
        if arm is None:  # no overall score (0), or more than one
            verdicts.append(MISSING if scores[row] == 0 else None)
            continue
        score = scores[row]
        if arm in floats and score.is_integer() and not _written_as_float(block, row, arm, score):
            verdicts.append(None)
            continue
        key = (arm, score, type(score))
        text = known.get(key)
        if text is None:
            text = known[key] = verdict_words(None, None, (), None, {arm: score})
        verdicts.append(text)
    return verdicts


def _written_as_float(block: StoredLines, row: int, arm: str, score: float) -> bool:
    """Whether the line's ``overall`` is ``{arm: score}`` written as jurybox writes a float
    (``7.0``, not ``7``), so that it reads as Arrow read it."""
    written = '"overall": ' + json.dumps({arm: score})
    return written.encode("utf-8") in block.line(row)


def _shown_arms(values: _Values) -> tuple[list[int], list[str | None]]:
    """Each row's number of arms in ``positions`` and its first one (``verdict_words`` reads
    the one arm shown, or only how many there are)."""
    fields = values.fields("positions")
    if not fields:
        return [0] * values.n, [None] * values.n
    counts = np.sum([_valid(array) for array in fields.values()], axis=0).tolist()
    first = pc.coalesce(*(array.cast(pa.string()) for array in fields.values())).to_pylist()
    return counts, first


def _single_overall(
    values: _Values,
) -> tuple[list[str | None], list[Any], frozenset[str]]:
    """Per row, the one arm with an ``overall`` score and the score (None and the number of
    scores, 0 or 2+, where there is not exactly one), and the arms Arrow read as floats."""
    fields = values.fields("overall")
    if not fields:
        return [None] * values.n, [0] * values.n, frozenset()
    names = list(fields)
    valid = np.vstack([_valid(array) for array in fields.values()])
    counts = valid.sum(axis=0)
    which = valid.argmax(axis=0)
    scores = [array.to_pylist() for array in fields.values()]
    arms: list[str | None] = []
    picked: list[Any] = []
    for row, (count, k) in enumerate(zip(counts.tolist(), which.tolist(), strict=True)):
        arms.append(names[k] if count == 1 else None)
        picked.append(scores[k][row] if count == 1 else count)
    floats = frozenset(n for n, a in fields.items() if pa.types.is_floating(a.type))
    return arms, picked, floats


_EXACT = 2.0**50  # whole numbers below this add up to the same float in any order


def _confidences(values: _Values) -> list[str | None]:
    """``_confidence`` of each row: its own confidence, else the mean of its confidences;
    None where the columns cannot tell the mean (three or more values not all whole, whose
    float sum depends on their order, which Arrow does not keep)."""
    own = values.get("confidence")
    total = np.zeros(values.n)
    count = np.zeros(values.n, dtype=np.int64)
    unsure = np.zeros(values.n, dtype=bool)
    for arm in values.fields("confidences").values():
        for dims in _fields_of(arm).values():
            valid = _valid(dims)
            number = np.asarray(
                pc.cast(dims, pa.float64()).to_numpy(zero_copy_only=False), dtype=float
            )
            number = np.where(valid, number, 0.0)
            total += number
            count += valid
            unsure |= (number != np.floor(number)) | (np.abs(number) >= _EXACT)
    unsure &= count > 2
    known: dict[tuple[float, int], str] = {}
    rows = zip(own, total.tolist(), count.tolist(), unsure.tolist(), strict=True)
    texts: list[str | None] = []
    for confidence, summed, counted, doubt in rows:
        if confidence:
            texts.append(confidence)
        elif doubt:
            texts.append(None)
        else:
            text = known.get((summed, counted))
            if text is None:
                text = known[(summed, counted)] = mean_words(summed, counted)
            texts.append(text)
    return texts
