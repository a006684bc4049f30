"""The record table (``io/record_table.py``) cut into the frame's records and scores tables,
column by column: no Python object per record, so a million records take seconds.

A mapping column is an Arrow map: its entries (record, key, value) come out in each record's key
order, so a record's score rows are its ``scores`` (arm by arm, dimension by dimension) and then
its ``overall`` totals, as the records list them.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from jurybox.analysis._common import TOTAL
from jurybox.io.record_table import MapEntries
from jurybox.records import Status

# The records table's columns and the record field each comes from (then the derived ones).
RECORD_SOURCES = {
    "key": "key",
    "query_id": "query_id",
    "judge": "judge_name",
    "model": "judge_model",
    "vendor": "judge_vendor",
    "mode": "mode",
    "order": "presentation_order",
    "status": "status",
    "repeat": "repeat",
    "retest": "retest",
    "criterion": "criterion",
    "preference": "preference",
    "preferred_arm": "preferred_arm",
    "confidence": "confidence",
    "verdict": "verdict",
    "holistic_fallback": "holistic_fallback",
    "local_judge": "local_judge",
    "batch_id": "batch_id",
    "cost_usd": "cost_usd",
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cached_input_tokens": "cached_input_tokens",
}
RECORD_COLUMNS = (
    *RECORD_SOURCES,
    "first_arm",
    "second_arm",
    "n_positions",
    "target_arm",
    "ranking",
    "positions_shown",
)
SCORE_COLUMNS = ("rec", "arm", "position", "dimension", "score", "confidence", "gate_failed")
# The record fields the frame reads.
FRAME_FIELDS = (
    *RECORD_SOURCES.values(),
    "positions",
    "ranking",
    "positions_shown",
    "scores",
    "confidences",
    "overall",
    "gate_failures",
    "judge_family",
)


def _column(values: pa.Array | pa.ChunkedArray) -> Any:
    """A column as a DataFrame of its Python values types it: Arrow strings (missing values
    NaN), numbers (an integer column with a missing value as floats), or, where every value is
    missing, a list of None (kept as objects)."""
    if values.null_count == len(values):
        return [None] * len(values)
    return values.to_pandas()


def _lookup(keys: np.ndarray[Any, Any], found: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """For each of ``keys``, the position of the last equal one among ``found`` (-1: none)."""
    result = np.full(len(keys), -1, dtype=np.int64)
    if not len(found):
        return result
    order = np.argsort(found, kind="stable")  # equal keys stay in their order: the last wins
    ordered = found[order]
    at = np.searchsorted(ordered, keys, side="right") - 1
    hit = at >= 0
    hit[hit] = ordered[at[hit]] == keys[hit]
    result[hit] = order[at[hit]]
    return result


def _codes(*arrays: pa.Array) -> tuple[list[np.ndarray[Any, Any]], pa.Array]:
    """Each text array as codes into one shared dictionary (nulls: -1)."""
    joined = pa.chunked_array([a.cast(pa.string()) for a in arrays], type=pa.string())
    encoded = joined.combine_chunks().dictionary_encode()
    codes = np.asarray(pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False))
    bounds = np.cumsum([0, *(len(a) for a in arrays)])
    return [codes[a:b] for a, b in itertools.pairwise(bounds)], encoded.dictionary


def record_columns(table: pa.Table) -> pd.DataFrame:
    """The records table, one row per record (``frame`` module docstring), before labels."""
    n = table.num_rows
    data: dict[str, Any] = {}
    for column, name in RECORD_SOURCES.items():
        data[column] = _column(table.column(name))
    positions = MapEntries(table.column("positions"))
    first = _value_at(positions, "A", n)
    data["first_arm"] = _column(first)
    data["second_arm"] = _column(_value_at(positions, "B", n))
    data["n_positions"] = positions.lengths
    alone = pa.array(positions.lengths == 1)
    data["target_arm"] = _column(pc.if_else(alone, first, pa.scalar(None, pa.string())))
    ranking = table.column("ranking")
    data["ranking"] = (
        [None] * n
        if ranking.null_count == n
        else [tuple(r) if r else None for r in ranking.to_pylist()]
    )
    data["positions_shown"] = table.column("positions_shown").to_numpy()
    return pd.DataFrame(data, columns=list(RECORD_COLUMNS))


def _value_at(entries: MapEntries, key: str, n: int) -> pa.Array:
    """Each record's value under ``key`` (null where it has none)."""
    hits = np.flatnonzero(np.asarray(pc.equal(entries.keys, key).to_numpy(zero_copy_only=False)))
    where = np.full(n, -1, dtype=np.int64)
    where[entries.rec[hits]] = hits
    return _taken(where, entries.items)


# Records cut into score rows at once: the rows' arrays of a part are some ten times its
# records, so parts keep them small beside the table.
PART_RECORDS = 100_000


def score_columns(table: pa.Table) -> pd.DataFrame:
    """The score rows of the ok records that are not holistic fallbacks (``frame`` module
    docstring; rows whose score is NaN or infinite kept, for the frame to set apart and name),
    record by record: numbers typed as a DataFrame of their Python values types them, the
    texts (``arm``, ``position``, ``dimension``) as the sorted categoricals the frame keeps."""
    parts = [
        _score_part(table.slice(first, PART_RECORDS), first)
        for first in range(0, table.num_rows, PART_RECORDS)
    ]
    parts = [part for part in parts if len(part["rec"])]
    if not parts:  # as a DataFrame of no rows types it
        empty = pd.DataFrame([], columns=list(SCORE_COLUMNS))
        return empty.astype(dict.fromkeys(("score", "confidence", "gate_failed"), float))
    columns: dict[str, Any] = {}
    for name in SCORE_COLUMNS:
        values = [part.pop(name) for part in parts]
        if isinstance(values[0], np.ndarray):
            columns[name] = np.concatenate(values)
        else:
            columns[name] = _categorical(pa.chunked_array(values))
    return pd.DataFrame(columns)


def _score_part(table: pa.Table, first: int) -> dict[str, Any]:
    """The score rows of a part of the records (``rec`` counted from ``first``): numbers as
    numpy arrays, texts dictionary encoded (a few distinct ones over ten times the records)."""
    ok = pc.and_(
        pc.equal(table.column("status"), Status.OK.value),
        pc.invert(table.column("holistic_fallback")),
    )
    ok = np.asarray(ok.to_numpy(zero_copy_only=False), dtype=bool)
    arms = MapEntries(table.column("scores"))
    dims = MapEntries(arms.items)
    totals = MapEntries(table.column("overall"))
    positions = MapEntries(table.column("positions"))
    gates = MapEntries(table.column("gate_failures"))
    (arm_codes, total_codes, shown_codes, gate_codes), names = _codes(
        arms.keys, totals.keys, positions.items, gates.keys
    )
    span = max(len(names), 1)
    rec = np.concatenate((arms.rec[dims.rec], totals.rec))
    arm = np.concatenate((arm_codes[dims.rec], total_codes))
    scores = np.concatenate((_floats(dims.items), _floats(totals.items)))
    rows = np.flatnonzero(ok[rec])
    rows = rows[np.argsort(rec[rows], kind="stable")]  # by record: dimensions, then totals
    letters = _lookup(rec[rows] * span + arm[rows], positions.rec * span + shown_codes)
    dimensions = pa.concat_arrays([dims.keys, pa.repeat(pa.scalar(TOTAL), len(totals.rec))])
    gated = _gates(gates, gate_codes, totals, total_codes, span)
    taken = pa.array(rows)
    return {
        "rec": rec[rows] + first,
        "arm": pc.dictionary_encode(_named(arm[rows], names)),
        "position": pc.dictionary_encode(_taken(letters, positions.keys)),
        "dimension": pc.dictionary_encode(dimensions.take(taken)),
        "score": scores[rows],
        "confidence": _confidences(table, arms, dims, len(totals.rec))[rows],
        "gate_failed": np.concatenate((np.full(len(dims.rec), np.nan), gated))[rows],
    }


def _floats(values: pa.Array) -> np.ndarray[Any, Any]:
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=float)


def _taken(at: np.ndarray[Any, Any], texts: pa.Array) -> pa.Array:
    """``texts[at]``, null where ``at`` is -1."""
    if not len(texts):
        return pa.nulls(len(at), pa.string())
    taken = texts.take(pa.array(np.maximum(at, 0)))
    return pc.if_else(pa.array(at >= 0), taken, pa.scalar(None, pa.string()))


def _named(codes: np.ndarray[Any, Any], names: pa.Array) -> pa.Array:
    """Codes into ``names`` as texts (null for -1)."""
    indices = pa.array(codes, type=pa.int32(), mask=codes < 0)
    return pa.DictionaryArray.from_arrays(indices, names).cast(pa.string())


def _categorical(values: pa.ChunkedArray) -> Any:
    """Texts given as dictionary codes (a part's own dictionary each) as the sorted
    categorical the frame keeps of them (``sorted_categorical``), never a text per row: a
    million records' score rows are six million. Where every value is missing: objects, as
    ``pd.Series(<their Python values>).infer_objects()`` types them."""
    if values.null_count == len(values):
        return pd.Series(np.full(len(values), None, dtype=object)).infer_objects()
    return sorted_categorical(values.unify_dictionaries())


def sorted_categorical(
    encoded: pa.ChunkedArray, *, object_categories: bool = False
) -> pd.Categorical:
    """``pd.Categorical(<the texts>, categories=sorted(<distinct texts>))`` of dictionary
    encoded texts (one dictionary for every chunk, each value in it occurring): codes
    remapped, no text per row. ``object_categories``: categories held as Python strings."""
    distinct = encoded.chunk(0).dictionary.to_pylist() if encoded.num_chunks else []
    categories = sorted(distinct)
    position = {value: i for i, value in enumerate(categories)}
    remap = np.array([position[v] for v in distinct] + [-1], dtype=np.int64)  # null: -1
    indices = [pc.fill_null(chunk.indices, -1) for chunk in encoded.chunks]
    joined = pa.chunked_array(indices, type=pa.int32()) if indices else pa.array([], pa.int32())
    codes = remap[np.asarray(joined.to_numpy(), dtype=np.int64)]
    index = pd.Index(categories, dtype=object if object_categories else None)
    return pd.Categorical.from_codes(codes, categories=index)


def _confidences(table: pa.Table, arms: MapEntries, dims: MapEntries, n_totals: int) -> Any:
    """The confidence of each dimension row (NaN for a total, or where none is given)."""
    found = np.full(len(dims.rec) + n_totals, np.nan)
    conf_arms = MapEntries(table.column("confidences"))
    conf_dims = MapEntries(conf_arms.items)
    if not len(conf_dims.rec):
        return found
    (score_arms, conf_arm_codes, score_dims, conf_dim_codes), names = _codes(
        arms.keys, conf_arms.keys, dims.keys, conf_dims.keys
    )
    span = max(len(names), 1)

    def unit(rec: Any, arm: Any, dim: Any) -> Any:
        return (rec * span + arm) * span + dim

    at = _lookup(
        unit(arms.rec[dims.rec], score_arms[dims.rec], score_dims),
        unit(conf_arms.rec[conf_dims.rec], conf_arm_codes[conf_dims.rec], conf_dim_codes),
    )
    values = _floats(conf_dims.items)
    found[: len(dims.rec)] = np.where(at >= 0, values[np.maximum(at, 0)], np.nan)
    return found


def _gates(
    gates: MapEntries,
    gate_codes: np.ndarray[Any, Any],
    totals: MapEntries,
    total_codes: np.ndarray[Any, Any],
    span: int,
) -> np.ndarray[Any, Any]:
    """Per total: 1.0 where its record lists gate failures for its arm, 0.0 where it lists
    none, NaN where the record says nothing of gates (no ``gate_failures``)."""
    listed = np.asarray(pc.list_value_length(gates.items).to_numpy(zero_copy_only=False)) > 0
    at = _lookup(totals.rec * span + total_codes, gates.rec * span + gate_codes)
    failed = np.where(at >= 0, listed[np.maximum(at, 0)] if len(listed) else False, False)
    return np.where(gates.valid[totals.rec], failed.astype(float), np.nan)
