"""The record table: judgments.jsonl (or the Parquet file ``jurybox export`` writes) read into one
Arrow table, the only reader that does. The frame, the explorer, ``export`` and ``compare`` read
the records through it.

Schema: ``record_schema()``, one column per ``JudgeRecord`` field, typed from the field's
annotation (``io/record_fields.py``): text, int64, float64, bool; a ``Mapping[str, X]`` is an
Arrow map (its keys in order), a ``list[X]`` a list. Reading follows that module's rules, and
a line that breaks one is a ``DatasetError`` naming the file, the line and the field.

How: the file is read in blocks of whole lines; ``pyarrow.json`` parses each block (C++, every
core) with the declared types for the plain fields, the mappings inferred as structs and turned
into maps. A block pyarrow refuses or cannot read as declared (a wrong type, an infinite
number, ``NaN`` outside a score, a required field null, a ``preferred_arm`` that is no arm
of its ``positions``, bytes that are not UTF-8, an escaped
lone surrogate, a record of schema version 1, a line of a thousand brackets, which could exhaust
pyarrow's stack) is read line by line by the same rules (``parse_line``: the bounded
``parse_json`` of every outside file, then ``checked_record``): that names the line at fault, or
reads what pyarrow cannot. (pyarrow's reading does not itself refuse what only those bounds
refuse, nesting of 101 to 999 levels or a float of over 100 characters: jurybox writes
neither.) Only the columns asked for are kept of each block; a second
reading of the same lines (``Judgments.slices``) parses only the plain columns it adds. A torn
last line (a kill mid-write) is left out.

One record per key: the last complete one (any status but ``provider_error``), else the last
one, in the file's order. Mapping keys read by pyarrow come in the order their block first names
them (every file jurybox writes names arms and dimensions in one order).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.json as pj  # type: ignore[import-untyped]

from jurybox.errors import DatasetError
from jurybox.io.record_fields import Kind, RecordField, checked_record, parse_line, record_fields
from jurybox.io.table import exported_records
from jurybox.records import RECORD_SCHEMA_VERSION, JudgeRecord, Status

BLOCK_BYTES = 16 << 20  # of whole lines, parsed at once
SLICE_ROWS = 20_000  # records per slice of a table held in memory
# pyarrow's parser recurses per level of nesting: past some ten thousand levels it overflows its
# thread's stack (a crash, not an error). A line with this many brackets is read by ``json``.
BRACKETS_GUARD = 1_000
_SCALARS = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
_READ = pj.ReadOptions(block_size=4 << 20)


def _arrow_type(kind: Kind) -> pa.DataType:
    if kind.base is dict:
        assert kind.item is not None
        return pa.map_(pa.string(), pa.field("value", _arrow_type(kind.item), nullable=False))
    if kind.base is list:
        assert kind.item is not None
        return pa.list_(pa.field("item", _arrow_type(kind.item), nullable=False))
    return _SCALARS.get(kind.base, pa.string())  # an enum: its value


@functools.cache
def record_schema() -> pa.Schema:
    """The record table's schema: every ``JudgeRecord`` field, typed from its annotation."""
    return pa.schema(
        pa.field(spec.name, _arrow_type(spec.kind), nullable=spec.nullable)
        for spec in record_fields()
    )


@functools.cache
def _parse_options() -> pj.ParseOptions:
    """The plain fields declared (nullable: a null is checked here, not by pyarrow), the
    mappings left for pyarrow to infer (their keys are data)."""
    declared = [
        pa.field(spec.name, _parse_type(spec.kind))
        for spec in record_fields()
        if spec.kind.base is not dict
    ]
    return pj.ParseOptions(explicit_schema=pa.schema(declared), unexpected_field_behavior="infer")


def _parse_type(kind: Kind) -> pa.DataType:
    if kind.base is list:
        assert kind.item is not None
        return pa.list_(_parse_type(kind.item))
    return _arrow_type(kind)


@dataclass(frozen=True)
class _Source:
    """Where the records of a table came from, to read more of their columns."""

    path: Path
    end: int  # bytes read (up to the end of the last complete line)
    kept: np.ndarray[Any, np.dtype[np.bool_]] | None  # per record read; None: every one
    keys: pa.ChunkedArray  # the kept records' keys, to check a second reading against


@dataclass(frozen=True)
class Judgments:
    """The records of a judgments file, one per key, as a table of the columns read; ``slices``
    gives other columns of the same records, reading the file again where needed."""

    table: pa.Table
    dropped: int = 0  # duplicate lines left out (same key as a kept record)
    source: _Source | None = None  # None: ``table`` has every column

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def slices(self, columns: Sequence[str], rows: int = SLICE_ROWS) -> Iterator[pa.Table]:
        """The records' ``columns``, in order, a part at a time (never the whole file's): those
        of ``table`` from it, the others read again from the file."""
        columns = list(columns)
        missing = [name for name in columns if name not in self.table.column_names]
        if self.source is None or not missing:
            for start in range(0, len(self), rows):
                yield self.table.select(columns).slice(start, rows)
            return
        done = 0
        for part in _again(self.source, missing):
            held = self.table.slice(done, part.num_rows)
            arrays = [(part if name in missing else held).column(name) for name in columns]
            yield pa.Table.from_arrays(arrays, schema=_schema_of(tuple(columns)))
            done += part.num_rows

    def released(self, keep: Sequence[str] = ()) -> Judgments:
        """The same records with only the columns ``keep`` in memory, the others let go
        (``slices`` reads them again)."""
        if self.source is None:
            return self
        return replace(
            self, table=self.table.select([n for n in self.table.column_names if n in keep])
        )

    def records(self, query_ids: Iterable[str] | None = None) -> list[JudgeRecord]:
        """The records (of these items only), as ``JudgeRecord`` objects."""
        wanted = None if query_ids is None else pa.array(sorted(set(query_ids)), pa.string())
        found = []
        for part in self.slices(record_schema().names):
            chosen = part
            if wanted is not None:
                chosen = part.filter(pc.is_in(part.column("query_id"), value_set=wanted))
            found.extend(table_records(chosen))
        return found


class MapEntries:
    """A map column's entries, for reading it column by column: ``rec`` (the row of each
    entry), ``keys``, ``items``; and per row, ``lengths`` and ``valid`` (not null)."""

    def __init__(self, column: pa.ChunkedArray | pa.Array) -> None:
        chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
        recs, keys, items, lengths = [], [], [], []
        first = 0
        for chunk in chunks:
            # offsets of a sliced map index its whole children: the entries are taken from them
            offsets = np.asarray(chunk.offsets, dtype=np.int64)
            counts = np.diff(offsets)
            recs.append(np.repeat(np.arange(first, first + len(chunk)), counts))
            keys.append(chunk.keys.slice(offsets[0], offsets[-1] - offsets[0]))
            items.append(chunk.items.slice(offsets[0], offsets[-1] - offsets[0]))
            lengths.append(counts)
            first += len(chunk)
        item_type = column.type.item_type
        self.rec = np.concatenate([np.zeros(0, dtype=np.int64), *recs])
        self.keys = pa.concat_arrays([pa.array([], pa.string()), *keys])
        self.items = pa.concat_arrays([pa.nulls(0, item_type).cast(item_type), *items])
        self.lengths = np.concatenate([np.zeros(0, dtype=np.int64), *lengths])
        self.valid = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def table_records(table: pa.Table) -> list[JudgeRecord]:
    """The rows of a record table (every column) as ``JudgeRecord`` objects."""
    return [JudgeRecord.from_dict(row) for row in table.to_pylist(maps_as_pydicts="strict")]


def records_table(records: Iterable[JudgeRecord | Mapping[str, Any]]) -> Judgments:
    """Records held in memory (or their ``to_dict()`` mappings) as a record table, checked by
    the rules a file's lines are (an error names the record, counted from 1, and the field)."""
    rows = []
    for number, record in enumerate(records, start=1):
        data = record.to_dict() if isinstance(record, JudgeRecord) else record
        try:
            rows.append(checked_record(data, None, None))
        except DatasetError as exc:
            raise DatasetError(f"record {number}: {exc.reason}", field=exc.field) from None
    return _unique(pa.Table.from_pylist(rows, schema=record_schema()), None)


def read_judgments(path: str | Path, columns: Sequence[str] | None = None) -> Judgments:
    """The records of a judgments.jsonl (or of a Parquet export), one per key, as a table of
    ``columns`` (default: all); ``DatasetError`` for a missing file or a bad record."""
    file = Path(path)
    if not file.is_file():
        raise DatasetError("judgments file not found", path=str(file))
    if file.suffix.lower() == ".parquet":  # every column: there is no second reading
        rows = [checked_record(row, str(file), n) for n, row in exported_records(file)]
        return _unique(pa.Table.from_pylist(rows, schema=record_schema()), None)
    wanted = _wanted(columns)
    parts, end = [], 0
    for block in _blocks(file):
        parts.append(block.table(wanted))
        end = block.end
    table = pa.concat_tables(parts) if parts else record_schema().empty_table().select(wanted)
    return _unique(table, _Source(file, end, None, table.column("key")))


def _wanted(columns: Sequence[str] | None) -> list[str]:
    """The columns asked for, with the two that pick the record kept of each key."""
    names = record_schema().names
    if columns is None:
        return list(names)
    unknown = sorted(set(columns) - set(names))
    if unknown:
        raise ValueError(f"not record fields: {', '.join(unknown)}")
    return [name for name in names if name in {*columns, "key", "status"}]


def _unique(table: pa.Table, source: _Source | None) -> Judgments:
    """One record per key (see the module's docstring)."""
    n = table.num_rows
    keys = table.column("key").combine_chunks().dictionary_encode().indices
    codes = np.asarray(keys.to_numpy(zero_copy_only=False), dtype=np.int64)
    complete = pc.not_equal(table.column("status"), Status.PROVIDER_ERROR.value)
    complete = np.asarray(complete.to_numpy(zero_copy_only=False), dtype=bool)
    rows = np.arange(n)
    last = np.full(int(codes.max(initial=-1)) + 1, -1)
    np.maximum.at(last, codes, rows)
    last_complete = np.full(len(last), -1)
    np.maximum.at(last_complete, codes[complete], rows[complete])
    kept = np.zeros(n, dtype=bool)
    kept[np.where(last_complete >= 0, last_complete, last)] = True
    if kept.all():
        return Judgments(table, 0, source)
    table = table.filter(pa.array(kept))
    if source is not None:
        source = replace(source, kept=kept, keys=table.column("key"))
    return Judgments(table, int(n - kept.sum()), source)


def _again(source: _Source, columns: list[str]) -> Iterator[pa.Table]:
    """``columns`` of the kept records, block by block, from a second reading of the file (its
    lines checked by the first: only these columns are parsed where they are plain fields)."""
    wanted = _wanted(columns)
    first, done = 0, 0
    for block in _blocks(source.path, source.end):
        table = block.table(wanted, checked=True)
        if source.kept is not None:
            table = table.filter(pa.array(source.kept[first : first + table.num_rows]))
            first += block.count
        expected = source.keys.slice(done, table.num_rows)
        if table.num_rows != len(expected) or not table.column("key").equals(expected):
            raise DatasetError("the file changed while it was read", path=str(source.path))
        done += table.num_rows
        yield table.select(columns)
    if done != len(source.keys):
        raise DatasetError("the file changed while it was read", path=str(source.path))


@dataclass(frozen=True)
class _Block:
    """Whole lines of the file: ``data``, its first line's number, and where it ends."""

    path: Path
    data: bytes
    first_line: int
    end: int  # the file offset just past ``data``

    @functools.cached_property
    def _lines(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """Each line's start and whether it holds anything, line ends found by numpy."""
        buf = np.frombuffer(self.data, dtype=np.uint8)
        ends = np.flatnonzero(buf == ord("\n"))
        starts = np.concatenate(([0], ends[:-1] + 1))
        blank = buf[starts] == ord("\n")  # empty; a line of spaces is checked below
        spaced = np.flatnonzero(~blank & np.isin(buf[starts], list(b" \t\r\x0b\x0c")))
        for line in spaced:
            blank[line] = not self.data[starts[line] : ends[line]].strip()
        return starts, ~blank

    @property
    def count(self) -> int:
        """Lines that hold a record (every one but blank ones)."""
        return int(self._lines[1].sum())

    def most_brackets(self) -> int:
        """The most ``[`` and ``{`` on one line (inside strings too: a bound on nesting)."""
        buf = np.frombuffer(self.data, dtype=np.uint8)
        opening = np.flatnonzero((buf == ord("{")) | (buf == ord("[")))
        line = np.searchsorted(self._lines[0], opening, side="right")
        return int(np.bincount(line).max(initial=0))

    def table(self, wanted: Sequence[str], *, checked: bool = False) -> pa.Table:
        """The block's records, the ``wanted`` columns (pyarrow, else line by line).
        ``checked``: lines read before, every field checked then (a second reading)."""
        parsed = None
        if self.most_brackets() < BRACKETS_GUARD:
            parsed = _plain_columns(self, wanted) if checked else None
            if parsed is None:
                parsed = _arrow_table(self, wanted)
        return parsed if parsed is not None else self._line_by_line().select(list(wanted))

    def _line_by_line(self) -> pa.Table:
        starts, holding = self._lines
        bounds = [*starts.tolist(), len(self.data)]
        path, rows = str(self.path), []
        for line in np.flatnonzero(holding).tolist():
            raw, number = self.data[bounds[line] : bounds[line + 1]], self.first_line + line
            rows.append(checked_record(parse_line(raw, path, number), path, number))
        return pa.Table.from_pylist(rows, schema=record_schema())


def _blocks(path: Path, end: int | None = None) -> Iterator[_Block]:
    """The file's complete lines in blocks of about ``BLOCK_BYTES`` (up to ``end``)."""
    offset, line = 0, 1
    with path.open("rb") as handle:
        carry = b""
        while chunk := handle.read(BLOCK_BYTES if end is None else min(BLOCK_BYTES, end - offset)):
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            carry = data[cut:]
            offset += len(chunk)
            if cut:
                yield _Block(path, data[:cut], line, offset - len(carry))
                line += data.count(b"\n", 0, cut)


def _plain_columns(block: _Block, wanted: Sequence[str]) -> pa.Table | None:
    """Only the ``wanted`` columns of a block read before, parsed by pyarrow (the rest of each
    line skipped: a few times faster than every column); None where some is a mapping, or
    pyarrow cannot read them as declared."""
    specs = [spec for spec in record_fields() if spec.name in wanted]
    if any(spec.kind.base is dict for spec in specs):
        return None
    schema = pa.schema([pa.field(spec.name, _parse_type(spec.kind)) for spec in specs])
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        parsed = pj.read_json(io.BytesIO(block.data), read_options=_READ, parse_options=options)
        if parsed.num_rows != block.count:
            return None
        parsed.validate(full=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    arrays = []
    for spec in specs:
        column = parsed.column(spec.name).combine_chunks()
        array = _declared(spec, column, parsed.num_rows)
        if array is None:
            return None
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=_schema_of(tuple(wanted)))


def _arrow_table(block: _Block, wanted: Sequence[str]) -> pa.Table | None:
    """The ``wanted`` columns of the block parsed by pyarrow, as declared (the others checked,
    not kept); None where the block must be read line by line."""
    try:
        parsed = pj.read_json(
            io.BytesIO(block.data), read_options=_READ, parse_options=_parse_options()
        )
        if parsed.num_rows != block.count:  # two objects on one line, say
            return None
        parsed.validate(full=True)  # pyarrow keeps bytes that are not UTF-8 as they are
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if not _arms_shown(parsed):
        return None
    arrays = []
    for spec in record_fields():
        column = parsed.column(spec.name) if spec.name in parsed.column_names else None
        build = spec.name in wanted
        if column is not None and (build or spec.kind.base in (dict, list)):
            column = column.combine_chunks()  # a column only checked is left in its chunks
        array = _declared(spec, column, parsed.num_rows, build=build)
        if array is None:
            return None
        if spec.name in wanted:
            arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=_schema_of(tuple(wanted)))


def _arms_shown(parsed: pa.Table) -> bool:
    """Whether every ``preferred_arm`` is null, a tie or an arm of its record's ``positions``
    (a struct as parsed); False: the line by line reading names the line that is not."""
    if "preferred_arm" not in parsed.column_names:
        return True
    preferred = parsed.column("preferred_arm")
    good = pc.or_kleene(pc.is_null(preferred), pc.equal(pc.utf8_lower(preferred), "tie"))
    shown = parsed.column("positions") if "positions" in parsed.column_names else None
    if shown is not None and pa.types.is_struct(shown.type):
        for field in range(shown.type.num_fields):
            arm = pc.struct_field(shown, [field])
            if pa.types.is_string(arm.type):  # another type: the line by line reading says
                good = pc.or_kleene(good, pc.fill_null(pc.equal(preferred, arm), False))
    return bool(pc.all(good).as_py())


@functools.cache
def _schema_of(columns: tuple[str, ...]) -> pa.Schema:
    schema = record_schema()
    return pa.schema([schema.field(name) for name in columns])


def _declared(
    spec: RecordField, column: pa.Array | pa.ChunkedArray | None, n: int, *, build: bool = True
) -> pa.Array | None:
    """A parsed column as its field declares it (defaults filled); None where it is not.
    ``build=False``: only checked (what is returned then is not the column)."""
    target = record_schema().field(spec.name).type
    if column is None or pa.types.is_null(column.type):
        if spec.required:
            return None
        return pa.nulls(n, target) if spec.default is None else pa.repeat(spec.default, n)
    if spec.required and column.null_count:
        return None  # the line says which (missing, or null)
    if spec.name == "schema_version":  # version 1 keys are rebuilt line by line
        oldest = pc.min(column).as_py()
        return None if oldest is not None and oldest < RECORD_SCHEMA_VERSION else _current(n)
    array = _values(column, spec.kind, build)
    if array is not None and spec.kind.base is float and pc.any(pc.is_nan(array)).as_py():
        array = None  # NaN only in a score (``record_fields``): the line says which
    if array is None or not build or spec.default is None or spec.nullable or not array.null_count:
        return array
    return pc.fill_null(array, pa.scalar(spec.default, target))


def _current(n: int) -> pa.Array:
    return pa.repeat(pa.scalar(RECORD_SCHEMA_VERSION, pa.int64()), n)


def _values(array: pa.Array, kind: Kind, build: bool = True) -> pa.Array | None:
    """``array`` (a parsed column, or a mapping's values) cast to ``kind``'s declared type;
    None where pyarrow read something else (the line-by-line reading then says what).
    ``build=False``: only checked, ``array`` returned as it is."""
    if kind.base is dict:
        return _map(array, kind, build) if _is(array.type, pa.types.is_struct) else None
    if kind.base is list:
        return _list(array, kind, build)
    if kind.base is float:
        return _floats(array)
    if kind.base not in _SCALARS:  # an enum: a known value
        values = pa.array([member.value for member in kind.base])  # type: ignore[attr-defined]
        if not pc.all(pc.is_in(array, value_set=values, skip_nulls=True)).as_py():
            return None
    expected = _arrow_type(kind)
    if not _is(array.type, lambda t: t == expected):
        return None
    return array.cast(expected) if build else array


def _list(array: pa.Array, kind: Kind, build: bool) -> pa.Array | None:
    assert kind.item is not None
    if not _is(array.type, pa.types.is_list):
        return None
    if not pa.types.is_null(array.type):
        values = _values(array.values, kind.item, build=False)
        if values is None or values.null_count:
            return None
    return array.cast(_arrow_type(kind)) if build else array


def _floats(array: pa.Array) -> pa.Array | None:
    if not _is(array.type, pa.types.is_integer, pa.types.is_floating):
        return None
    array = array.cast(pa.float64())
    return None if pc.any(pc.is_inf(array)).as_py() else array


def _is(kind: pa.DataType, *accepted: Any) -> bool:
    return bool(pa.types.is_null(kind) or any(check(kind) for check in accepted))


def _map(array: pa.Array, kind: Kind, build: bool) -> pa.Array | None:
    """A struct column (pyarrow's reading of a JSON object) as a map of its non-null fields,
    each row's keys in the struct's order; its values as ``kind`` declares them."""
    assert kind.item is not None
    target = _arrow_type(kind)
    n = len(array)
    if pa.types.is_null(array.type):
        return pa.nulls(n, target) if build else array
    fields = array.flatten()  # each with the struct's own nulls
    values = [_values(field, kind.item, build) for field in fields]
    if any(value is None for value in values):
        return None
    if not build:
        return array
    names = [field.name for field in array.type]
    valid = np.zeros((n, len(names)), dtype=bool)
    for column, field in enumerate(fields):
        valid[:, column] = np.asarray(field.is_valid().to_numpy(zero_copy_only=False))
    entries = np.flatnonzero(valid.ravel())  # row by row, each row's fields in order
    which, row = np.divmod(entries, max(len(names), 1))[::-1]
    offsets = np.concatenate(([0], np.cumsum(valid.sum(axis=1)))).astype(np.int32)
    keys = pa.array(np.asarray(names, dtype=object)[which], type=pa.string())
    items = pa.concat_arrays([*values, pa.nulls(0, target.item_type)])
    items = items.take(pa.array(which * n + row)).cast(target.item_type)
    mask = array.is_null()
    return pa.MapArray.from_arrays(
        pa.array(offsets), keys, items, type=target, mask=mask if mask.true_count else None
    )
