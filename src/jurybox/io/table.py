"""One flat row per judgment, with the judged item's texts and labels joined: the table behind
``jurybox export`` (CSV, Parquet, JSONL) and ``jurybox.load``.

Columns, in this order (absent values are empty / null):

- the record's scalar fields under their own names (``query_id``, ``judge_name``, ``status``,
  ``preferred_arm``, ``verdict``, ``preference_reasoning``, ``raw_response``, tokens, cost ...);
- its per-arm mappings spread into one column per key: ``position.A`` (the arm shown first),
  ``overall.<arm>``, ``score.<arm>.<dimension>``, ``confidence.<arm>.<dimension>``;
  ``ranking`` as ``>``-joined arms (``records.ranking_ordering``: an arm's own ``>`` and ``\\``
  escaped with a backslash); ``gate_failures`` / ``safety_flags`` as JSON text;
- the item: ``question``, ``response.<arm>`` (each arm's text), ``expected_answer``,
  ``contexts`` / ``metadata`` (JSON text), ``author.<arm>``;
- the labels (a labels file's entry over the item's own ``human``): ``human.preferred_arm``,
  ``human.verdict.<arm>``, ``human.score.<arm>.<dimension>``, ``human.annotator``, ``human.notes``.

Nested values stay JSON text rather than struct columns so that every format holds the same
table and a CSV round-trips. One exception in CSV only: a text cell (or column name) that begins
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, which a spreadsheet would run as a
formula, is written behind a ``'`` (OWASP's rule against CSV injection); Parquet and JSONL keep
the text as it is. ``exported_records`` reads the records back from the Parquet file
(``jurybox analyze`` and ``compare`` take one in place of a judgments.jsonl).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from jurybox.errors import ConfigError, DatasetError
from jurybox.io.atomic import AtomicFile, atomic_path
from jurybox.io.targets import FIRST_LINE_BYTES, first_json_line
from jurybox.records import Item, JudgeRecord, ranking_arms, ranking_ordering
from jurybox.redaction import any_known, holds_known, redact_value

TableFormat = Literal["csv", "parquet", "jsonl"]
FORMATS: tuple[TableFormat, ...] = ("csv", "parquet", "jsonl")

# Record fields spread into columns or written as JSON text rather than copied as they are.
_SPREAD = {"positions", "overall", "scores", "confidences", "ranking"}
_AS_JSON = {"gate_failures", "safety_flags", "scores_response_a", "scores_response_b"}
Row = dict[str, Any]


def judgment_rows(
    records: Iterable[JudgeRecord],
    items: Mapping[str, Item] | None = None,
    labels: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Row]:
    """One row per record (see the module doc for the columns); ``items`` and ``labels`` are
    keyed by item id, and a record whose item is unknown keeps its judgment columns only."""
    items, labels = items or {}, labels or {}
    rows = []
    for record in records:
        item = items.get(record.query_id)
        human = {**(item.human if item else {}), **labels.get(record.query_id, {})}
        rows.append({**_record_columns(record), **_item_columns(item), **_label_columns(human)})
    return rows


def _record_columns(record: JudgeRecord) -> Row:
    row: Row = {}
    for name, value in record.to_dict().items():
        if name in _SPREAD:
            continue
        row[name] = json.dumps(value, ensure_ascii=False) if name in _AS_JSON and value else value
    row.update({f"position.{letter}": arm for letter, arm in record.positions.items()})
    row.update({f"overall.{arm}": score for arm, score in (record.overall or {}).items()})
    row.update(_nested("score", record.scores))
    row.update(_nested("confidence", record.confidences))
    row["ranking"] = ranking_ordering(record.ranking) if record.ranking else None
    return row


def _nested(prefix: str, values: Mapping[str, Mapping[str, Any]] | None) -> Row:
    """``{arm: {dimension: x}}`` -> ``{"prefix.arm.dimension": x}`` (a bare number: the arm)."""
    row: Row = {}
    for arm, inner in (values or {}).items():
        if isinstance(inner, Mapping):
            row.update({f"{prefix}.{arm}.{key}": value for key, value in inner.items()})
        else:
            row[f"{prefix}.{arm}"] = inner
    return row


def _item_columns(item: Item | None) -> Row:
    if item is None:
        return {}
    row: Row = {"question": item.question}
    row.update({f"response.{arm}": text for arm, text in item.responses.items()})
    row["expected_answer"] = item.expected_answer
    row["contexts"] = json.dumps(list(item.contexts), ensure_ascii=False) if item.contexts else None
    row["metadata"] = json.dumps(dict(item.metadata), ensure_ascii=False) if item.metadata else None
    row.update({f"author.{arm}": family for arm, family in item.authors.items()})
    return row


def _label_columns(human: Mapping[str, Any]) -> Row:
    row: Row = {}
    for key in ("preferred_arm", "annotator", "notes"):
        if human.get(key) is not None:
            row[f"human.{key}"] = human[key]
    verdict = human.get("verdict")
    if isinstance(verdict, Mapping):
        row.update({f"human.verdict.{arm}": value for arm, value in verdict.items()})
    elif verdict is not None:
        row["human.verdict"] = verdict
    row.update(_nested("human.score", human.get("scores")))
    return row


def columns_of(rows: Sequence[Row]) -> list[str]:
    """Every column any row has, in first-seen order (rows differ: arms, dimensions, labels)."""
    return list(dict.fromkeys(name for row in rows for name in row))


def table_format(out: Path, given: str | None) -> TableFormat:
    """The format asked for, else the one ``out``'s suffix names (``.csv``, ``.parquet``,
    ``.jsonl``); neither is bad input."""
    name = given or out.suffix.lstrip(".").lower()
    for known in FORMATS:
        if name == known:
            return known
    raise ConfigError(
        f"cannot tell the export format of {out}: pass --format {'|'.join(FORMATS)}",
        field="--format",
    )


# The first columns of every table ``judgment_rows`` makes (the record's first fields).
_LEAD = ("key", "run_id", "query_id", "judge_name")


def is_export(path: Path) -> bool:
    """Whether ``path`` holds a table ``write_table`` wrote (any of its formats), by its first
    columns: the file ``jurybox export`` may replace. A judgments file is not one (its records
    keep ``positions`` whole; an export spreads it into ``position.*`` columns)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
    except OSError:
        return False
    if head == b"PAR1":
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # noqa: PLC0415

        try:
            names = pq.read_schema(path).names
        except Exception:
            return False
        return tuple(names[: len(_LEAD)]) == _LEAD and "positions" not in names
    if head.startswith(b"{"):
        first = first_json_line(path)
        return (
            first is not None and tuple(first)[: len(_LEAD)] == _LEAD and "positions" not in first
        )
    with path.open("rb") as handle:
        return handle.readline(FIRST_LINE_BYTES).startswith(",".join(_LEAD).encode())


def write_table(rows: Sequence[Row], out: Path, fmt: TableFormat) -> None:
    """Write ``rows`` to ``out`` as ``fmt``, all or nothing (a temp file renamed into place)."""
    _WRITERS[fmt](rows, out)


def _write_csv(rows: Sequence[Row], path: Path) -> None:
    with AtomicFile(path) as handle:  # text: known secrets redacted line by line
        columns = columns_of(rows)
        writer = csv.writer(handle)
        writer.writerow(map(_inert, columns))
        writer.writerows([_inert(row.get(name)) for name in columns] for row in rows)
        handle.commit()


# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _inert(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (``=cmd|' /C calc'!A0``), behind a
    ``'``; numbers (a negative score) and other text as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _write_jsonl(rows: Sequence[Row], path: Path) -> None:
    columns = columns_of(rows)  # every line has every column: a reader sees one schema
    with AtomicFile(path) as handle:
        for row in rows:
            full = {name: row.get(name) for name in columns}
            handle.write(json.dumps(full, ensure_ascii=False) + "\n")
        handle.commit()


def _write_parquet(rows: Sequence[Row], path: Path) -> None:
    import pyarrow as pa  # noqa: PLC0415
    import pyarrow.parquet as pq  # noqa: PLC0415

    columns = columns_of(rows)
    table = pa.table({name: _redacted([row.get(name) for row in rows]) for name in columns})
    with atomic_path(path) as temp:
        pq.write_table(table, temp)


def _redacted(values: list[Any]) -> list[Any]:
    """A column's values with known secrets redacted (text files are redacted as written; a
    Parquet file is binary, so its values are). One search per column decides."""
    if not any_known() or not holds_known(json.dumps(values, ensure_ascii=False, default=str)):
        return values
    return [redact_value(value, shapes=False) for value in values]


_WRITERS = {"csv": _write_csv, "parquet": _write_parquet, "jsonl": _write_jsonl}


def exported_records(path: Path) -> Iterator[tuple[int, Row]]:
    """The records of a Parquet file ``write_table`` wrote (row number from 1, the record's
    fields as a mapping): the columns above read back, the item and label columns left out.
    ``score.<arm>.<dimension>`` is split after an arm the record names (``position.*``,
    ``overall.*``), else at its first dot."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    try:
        batches = pq.ParquetFile(path).iter_batches()
        number = 0
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                yield number, _record_of(row, str(path), number)
    except (OSError, ValueError) as exc:  # pyarrow's errors are both
        if isinstance(exc, DatasetError):
            raise
        raise DatasetError(f"not a readable Parquet file: {exc}", path=str(path)) from None


def _record_of(row: Row, path: str, number: int) -> Row:
    record: Row = {}
    for name, value in row.items():
        if "." in name or name in _ITEM_COLUMNS:
            continue
        record[name] = value
        if name in _AS_JSON and isinstance(value, str):
            try:
                record[name] = json.loads(value)
            except json.JSONDecodeError as exc:
                message = f"not valid JSON ({exc.msg})"
                raise DatasetError(message, path=path, line=number, field=name) from None
    record["positions"] = _prefixed(row, "position.")
    record["overall"] = _prefixed(row, "overall.") or None
    arms = {*record["positions"].values(), *(record["overall"] or {})}
    record["scores"] = _unspread(_prefixed(row, "score."), arms) or None
    record["confidences"] = _unspread(_prefixed(row, "confidence."), arms) or None
    ranking = row.get("ranking")
    record["ranking"] = ranking_arms(ranking) if isinstance(ranking, str) else None
    return record


_ITEM_COLUMNS = {"question", "expected_answer", "contexts", "metadata"}


def _prefixed(row: Row, prefix: str) -> Row:
    return {
        name.removeprefix(prefix): value
        for name, value in row.items()
        if name.startswith(prefix) and value is not None
    }


def _unspread(values: Row, arms: set[str]) -> dict[str, Row]:
    """``{"arm.dimension": x}`` -> ``{arm: {dimension: x}}``."""
    nested: dict[str, Row] = {}
    for name, value in values.items():
        arm = next((a for a in arms if name.startswith(f"{a}.")), name.partition(".")[0])
        nested.setdefault(arm, {})[name.removeprefix(f"{arm}.")] = value
    return nested
