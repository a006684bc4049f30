"""One block of judgments.jsonl -> the rows ``frame._rows_of`` makes of it, parsed by pyarrow.

``pyarrow.json`` parses a block of lines in C++ (threaded) into columns, and the record and score
tables are cut from those columns without a Python object per record: the step that makes a
million records readable in seconds. The block is taken only when its columns are what the
record path reads, typed as it would type them (strings, numbers, booleans, the mappings as
structs); anything else (a JSON ``NaN``, a key of schema version 1, an unexpected type, an
unparseable line) returns None and the caller parses the block line by line, which also gives
the error a bad line deserves. A line with a null required field is checked line by line too
(JSON null and an absent key look alike in Arrow; only the latter is an error).

Row order: the record path emits a record's score rows in its mappings' own key order, Arrow in
the block's first-seen order; the two agree whenever the records list arms and dimensions in
one order, as every file jurybox writes does (arms sorted, dimensions in rubric order).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.json as pj  # type: ignore[import-untyped]

from jurybox.analysis._common import TOTAL
from jurybox.io.judgments import REQUIRED_FIELDS, STATUSES, LineBlock
from jurybox.records import RECORD_SCHEMA_VERSION, Status

_READ = pj.ReadOptions(block_size=4 << 20)
_STRINGS = (
    "key", "query_id", "judge_name", "judge_model", "judge_vendor", "mode",
    "presentation_order", "status", "criterion", "preference", "preferred_arm", "confidence",
    "verdict", "batch_id", "judge_family",
)  # fmt: skip
_BOOLS = {
    "retest": False,
    "holistic_fallback": False,
    "local_judge": False,
    "positions_shown": True,
}
_TOKENS = ("input_tokens", "output_tokens", "cached_input_tokens")
_NUMBERS = ("repeat", "cost_usd", *_TOKENS, "schema_version")
# The records table's first columns, from these fields (see frame._SOURCE).
_PLAIN = (
    "key", "query_id", "judge_name", "judge_model", "judge_vendor", "mode", "presentation_order",
    "status", "repeat", "retest", "criterion", "preference", "preferred_arm", "confidence",
    "verdict", "holistic_fallback", "local_judge", "batch_id", "cost_usd", *_TOKENS,
)  # fmt: skip
_DEFAULTS: dict[str, Any] = {"repeat": 0, **_BOOLS}
_STRUCTS = ("positions", "ranking", "scores", "confidences", "overall", "gate_failures")
_USED = frozenset((*_PLAIN, *_STRUCTS, "positions_shown", "judge_family", "judge_name"))


def _is(kind: pa.DataType, *accepted: Any) -> bool:
    return pa.types.is_null(kind) or any(check(kind) for check in accepted)


def _numeric(kind: pa.DataType) -> bool:
    return _is(kind, pa.types.is_integer, pa.types.is_floating)


def _struct_of(kind: pa.DataType, inner: Any) -> bool:
    """A null column, or a struct whose every field passes ``inner``."""
    if pa.types.is_null(kind):
        return True
    return pa.types.is_struct(kind) and all(inner(field.type) for field in kind)


def _strings_list(kind: pa.DataType) -> bool:
    return _is(kind) or (pa.types.is_list(kind) and _is(kind.value_type, pa.types.is_string))


def _plain(table: pa.Table) -> bool:
    """Whether every column the frame reads is typed as the record path would read it."""
    schema = table.schema
    names = set(schema.names)
    if not names >= REQUIRED_FIELDS:
        return False
    kinds = {name: schema.field(name).type for name in names}
    checks = [
        *(_is(kinds[n], pa.types.is_string) for n in _STRINGS if n in names),
        *(_is(kinds[n], pa.types.is_boolean) for n in _BOOLS if n in names),
        *(_numeric(kinds[n]) for n in _NUMBERS if n in names),
        _struct_of(kinds["positions"], lambda k: _is(k, pa.types.is_string)),
        _strings_list(kinds.get("ranking", pa.null())),
        _struct_of(kinds.get("overall", pa.null()), _numeric),
        _struct_of(kinds.get("gate_failures", pa.null()), _strings_list),
        *(
            _struct_of(kinds.get(n, pa.null()), lambda k: _struct_of(k, _numeric))
            for n in ("scores", "confidences")
        ),
        pa.types.is_string(kinds["key"]) and table.column("key").null_count == 0,
        pa.types.is_string(kinds["status"]) and table.column("status").null_count == 0,
    ]
    if not all(checks):
        return False
    statuses = pa.array(sorted(STATUSES))
    if not pc.all(pc.is_in(table.column("status"), value_set=statuses)).as_py():
        return False
    if "schema_version" in names and table.column("schema_version").null_count < len(table):
        return bool(pc.min(table.column("schema_version")).as_py() >= RECORD_SCHEMA_VERSION)
    return True


def parse_block(block: LineBlock) -> pa.Table | None:
    """The block as an Arrow table, or None when the record path must read it."""
    return used_columns(parse_whole_block(block))


def used_columns(table: pa.Table | None) -> pa.Table | None:
    """The columns of ``parse_whole_block``'s table that the tables are cut from."""
    if table is None:
        return None
    # Only the columns read below are kept: the answers' raw text is most of a line's bytes.
    return table.select([n for n in table.schema.names if n in _USED]).combine_chunks()


def parse_whole_block(block: LineBlock) -> pa.Table | None:
    """The block as pyarrow parses it, every column (None when the record path must read
    it): what ``parse_block`` keeps columns of, and what a reader beside it may share."""
    try:
        table = pj.read_json(io.BytesIO(block.data), read_options=_READ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(block.offsets) or not _plain(table):
        return None
    nulls = np.zeros(table.num_rows, dtype=bool)
    for name in REQUIRED_FIELDS:
        nulls |= table.column(name).is_null().to_numpy(zero_copy_only=False)
    block.checked(np.flatnonzero(nulls).tolist())  # raises what read_records raises
    return table


def _column(table: pa.Table, name: str) -> pa.Array:
    """The column, nulls as ``JudgeRecord``'s default where it has one; all-null if absent."""
    if name not in table.schema.names:
        default = _DEFAULTS.get(name)
        return pa.array([default] * table.num_rows)
    column = table.column(name).combine_chunks()
    if name in _DEFAULTS and not pa.types.is_null(column.type):
        return pc.fill_null(column, _DEFAULTS[name])
    if name in _DEFAULTS:
        return pa.array([_DEFAULTS[name]] * table.num_rows)
    return column


def _fields(table: pa.Table, name: str) -> dict[str, pa.Array]:
    """A struct column's fields, each with the struct's own nulls applied."""
    if name not in table.schema.names or not pa.types.is_struct(table.schema.field(name).type):
        return {}
    column = table.column(name).combine_chunks()
    return {field.name: array for field, array in zip(column.type, column.flatten(), strict=True)}


def _objects(array: pa.Array) -> np.ndarray[Any, Any]:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=object)


def sorted_categorical(values: pd.Series, *, object_categories: bool) -> pd.Categorical | None:
    """``pd.Categorical(values, categories=sorted(distinct values))`` of an Arrow-backed text
    column, encoded by pyarrow (hashing in C++; pandas hashes each row through Python objects,
    seconds for a million-record score table); None for any other column."""
    if not (isinstance(values.dtype, pd.StringDtype) and values.dtype.storage == "pyarrow"):
        return None
    array = pa.array(values.array)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    encoded = pc.dictionary_encode(array)
    distinct = encoded.dictionary.to_pylist()
    categories = sorted(distinct)
    position = {value: i for i, value in enumerate(categories)}
    remap = np.array([position[v] for v in distinct] + [-1], dtype=np.int64)  # null: -1
    codes = remap[pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False)]
    index = pd.Index(categories, dtype=object if object_categories else None)
    return pd.Categorical.from_codes(codes, categories=index)


def record_columns(table: pa.Table) -> pd.DataFrame:
    """The records table ``pd.DataFrame(rows, columns=_RECORD_COLUMNS)`` gives for the block."""
    from jurybox.analysis.frame import _RECORD_COLUMNS  # noqa: PLC0415

    n = table.num_rows
    # Arrow -> pandas per column types each as a DataFrame of Python values would (str, float
    # with NaN for an integer column with nulls, object for booleans with nulls or all nulls),
    # without a Python object per cell.
    data: dict[str, Any] = {
        column: _column(table, name).to_pandas()
        for column, name in zip(_RECORD_COLUMNS, _PLAIN, strict=False)
    }
    positions = _fields(table, "positions")
    counts = np.zeros(n, dtype=np.int64)
    for array in positions.values():
        counts += array.is_valid().to_numpy(zero_copy_only=False)
    nulls = pa.nulls(n)
    first = positions.get("A", nulls)
    data["first_arm"] = _text(first)
    data["second_arm"] = _text(positions.get("B", nulls))
    data["n_positions"] = counts
    alone = pa.array(counts == 1)
    data["target_arm"] = _text(pc.if_else(alone, first, pa.scalar(None, first.type)))
    ranking = _column(table, "ranking")
    data["ranking"] = (
        [None] * n
        if ranking.null_count == n
        else [tuple(r) if r else None for r in ranking.to_pylist()]
    )
    data["positions_shown"] = _flags(_column(table, "positions_shown"))
    return pd.DataFrame(data, columns=list(_RECORD_COLUMNS))


def _text(values: pa.Array) -> Any:
    """A text column (Arrow strings, or nulls) as a DataFrame of its Python values types it:
    Arrow strings converted in C++ (missing values NaN), or, where every value is missing,
    a list of None (which pandas keeps as objects). Not a Python object per row."""
    if values.null_count == len(values):
        return [None] * len(values)
    return values.to_pandas()


def _flags(values: pa.Array) -> Any:
    """A boolean column as a DataFrame of its Python values types it (numpy booleans where
    none is missing; else the Python values, None included)."""
    if values.null_count or not pa.types.is_boolean(values.type):
        return values.to_pylist()
    return values.to_numpy(zero_copy_only=False)


def block_facts(table: pa.Table, first: int) -> tuple[set[Any], list[tuple[int, str, str]]]:
    """The arms the block's records were shown, and (line, judge, family) where one is named."""
    arms: set[Any] = set()
    for array in _fields(table, "positions").values():
        arms.update(a for a in pc.unique(array).to_pylist() if a is not None)
    named: list[tuple[int, str, str]] = []
    family = _column(table, "judge_family")
    if not pa.types.is_null(family.type):
        rows = np.flatnonzero(pc.fill_null(pc.not_equal(family, ""), False).to_numpy())
        judges, families = _objects(table.column("judge_name")), _objects(family)
        named = [(first + int(r), str(judges[r]), str(families[r])) for r in rows]
    return arms, named


def _letters(table: pa.Table) -> tuple[list[str], dict[str, np.ndarray[Any, Any]]]:
    """The letters, and arm -> the letter it was shown at per row, as a position among the
    letters (the last letter naming it, as a dict inverted in the record path); -1 where the
    arm was not shown."""
    fields = _fields(table, "positions")
    arms = {a for array in fields.values() for a in pc.unique(array).to_pylist() if a is not None}
    out: dict[str, np.ndarray[Any, Any]] = {}
    for arm in arms:
        letter = np.full(table.num_rows, -1, dtype=np.int32)
        for k, array in enumerate(fields.values()):
            if not pa.types.is_null(array.type):
                letter[pc.fill_null(pc.equal(array, arm), False).to_numpy(zero_copy_only=False)] = k
        out[arm] = letter
    return list(fields), out


def score_columns(table: pa.Table, first: int) -> pd.DataFrame | None:
    """The score rows ``frame._score_rows`` gives the block's records (``rec`` from
    ``first``), typed as ``frame._score_frame`` types them; None when there are none."""
    n = table.num_rows
    status = _objects(table.column("status"))
    fallback = _column(table, "holistic_fallback").to_numpy(zero_copy_only=False)
    ok = (status == Status.OK.value) & ~fallback.astype(bool)
    rec = np.arange(first, first + n, dtype=np.int64)
    letter_names, letters = _letters(table)
    nowhere = np.full(n, -1, dtype=np.int32)
    confidences = {arm: _fields_of(array) for arm, array in _fields(table, "confidences").items()}
    parts: list[tuple[Any, ...]] = []
    for arm, dims in _fields(table, "scores").items():
        for dim, values in _fields_of(dims).items():
            conf = confidences.get(arm, {}).get(dim)
            keep = ok & values.is_valid().to_numpy(zero_copy_only=False)
            parts.append((keep, arm, letters.get(arm, nowhere), dim, values, conf, None))
    gates = table.column("gate_failures") if "gate_failures" in table.schema.names else None
    gate_fields = _fields(table, "gate_failures")
    for arm, totals in _fields(table, "overall").items():
        keep = ok & totals.is_valid().to_numpy(zero_copy_only=False)
        failed = np.full(n, np.nan)
        if gates is not None and not pa.types.is_null(gates.type):
            listed = gate_fields.get(arm)
            said = gates.is_valid().to_numpy(zero_copy_only=False)
            lengths = (
                np.zeros(n)
                if listed is None
                else pc.fill_null(pc.list_value_length(listed), 0).to_numpy(zero_copy_only=False)
            )
            failed = np.where(said, (lengths > 0).astype(float), np.nan)
        parts.append((keep, arm, letters.get(arm, nowhere), TOTAL, totals, None, failed))
    if not any(part[0].any() for part in parts):
        return None
    return _score_table(parts, rec, letter_names)


def _fields_of(array: pa.Array) -> dict[str, pa.Array]:
    if not pa.types.is_struct(array.type):
        return {}
    return {field.name: a for field, a in zip(array.type, array.flatten(), strict=True)}


def _floats(array: pa.Array | None, n: int) -> np.ndarray[Any, Any]:
    if array is None or pa.types.is_null(array.type):
        return np.full(n, np.nan)
    return np.asarray(pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False), dtype=float)


def _score_table(
    parts: Sequence[tuple[Any, ...]], rec: np.ndarray[Any, Any], letter_names: list[str]
) -> pd.DataFrame:
    """The score rows of the parts, record by record. The text columns (arm, position,
    dimension) are gathered as codes and made Arrow strings in C++ (``_labelled``): typed as
    ``pd.Series(<their Python values>).infer_objects()`` types them, without an object per row."""
    n = len(rec)
    arm_names: dict[str, int] = {}
    dim_names: dict[str, int] = {}
    recs, arms, positions, dims, scores, confs, gates = [], [], [], [], [], [], []
    for keep, arm, letter, dim, values, conf, failed in parts:
        count = int(keep.sum())
        recs.append(rec[keep])
        arms.append(np.full(count, arm_names.setdefault(arm, len(arm_names)), dtype=np.int32))
        positions.append(letter[keep])
        dims.append(np.full(count, dim_names.setdefault(dim, len(dim_names)), dtype=np.int32))
        scores.append(_floats(values, n)[keep])
        confs.append(_floats(conf, n)[keep])
        gates.append(np.full(n, np.nan)[keep] if failed is None else failed[keep])
    all_recs = np.concatenate(recs)
    order = np.argsort(all_recs, kind="stable")  # record by record; parts in record order
    frame = pd.DataFrame(
        {
            "rec": all_recs[order],
            "arm": _labelled(np.concatenate(arms)[order], list(arm_names)),
            "position": _labelled(np.concatenate(positions)[order], letter_names),
            "dimension": _labelled(np.concatenate(dims)[order], list(dim_names)),
            "score": np.concatenate(scores)[order],
            "confidence": np.concatenate(confs)[order],
            "gate_failed": np.concatenate(gates)[order],
        }
    )
    return frame


def _labelled(codes: np.ndarray[Any, Any], labels: list[str]) -> pd.Series:
    """``pd.Series(<labels[c] for each code, None for -1>).infer_objects()``: Arrow strings
    (NaN where missing), or objects where every value is missing."""
    missing = codes < 0
    if missing.all():
        return pd.Series(np.full(len(codes), None, dtype=object)).infer_objects()
    indices = pa.array(codes, type=pa.int32(), mask=missing if missing.any() else None)
    text = pa.DictionaryArray.from_arrays(indices, pa.array(labels, type=pa.string()))
    return pd.Series(text.cast(pa.string()).to_pandas())
