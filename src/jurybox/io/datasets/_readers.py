"""File-format readers: each yields raw records with the place they came from."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from jurybox.errors import DatasetError
from jurybox.io.text import json_text_is_clean

_BATCH_ROWS = 1024


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a record came from; builds errors that point at it."""

    path: str
    line: int | None = None
    parquet: bool = False

    def error(self, message: str, field: str | None = None) -> DatasetError:
        if self.parquet and self.line is not None:
            message = f"{message} (Parquet row {self.line}, data rows counted from 1)"
        return DatasetError(message, path=self.path, line=self.line, field=field)


@dataclass(frozen=True, slots=True)
class _Record:
    """One raw record of a dataset file and where it came from."""

    where: _Where
    data: dict[str, Any]
    flat: bool  # CSV/Parquet cell values: JSON text and dotted columns stand for nesting
    # The text it was parsed from holds no (escaped) lone surrogate, so ``clean_value`` has
    # nothing to replace in it and is skipped (see ``json_text_is_clean``).
    clean: bool = False


def _records(path: Path) -> Iterator[_Record]:
    kind = _reader(path.suffix.lower())
    where = _Where(str(path))
    if kind is None:
        raise where.error(
            f"unsupported file type '{path.suffix}' (use .jsonl, .json, .csv or .parquet)"
        )
    if not path.is_file():
        raise where.error("file not found" if not path.exists() else "not a file")
    count = 0
    for record in kind(path):
        count += 1
        yield record
    if count == 0:
        raise where.error("empty file: no items")


def _decoded_lines(handle: IO[bytes], path: str) -> Iterator[tuple[int, str]]:
    # Decoding line by line keeps memory flat and pins an invalid byte to its line.
    for number, raw in enumerate(handle, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(
                f"invalid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                path=path,
                line=number,
            ) from None
        yield number, text.removeprefix("\ufeff") if number == 1 else text


def _read_jsonl(path: Path) -> Iterator[_Record]:
    with path.open("rb") as handle:
        for number, text in _decoded_lines(handle, str(path)):
            if not text.strip():
                continue
            where = _Where(str(path), number)
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise where.error(f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            if not isinstance(data, dict):
                raise where.error(f"expected a JSON object, got {_kind(data)}")
            yield _Record(where, data, flat=False, clean=json_text_is_clean(text))


def _read_json_list(path: Path) -> Iterator[_Record]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DatasetError("invalid UTF-8", path=str(path), line=line) from None
    del raw  # only the decoded text is kept
    clean = json_text_is_clean(text)
    decoder, line, counted, pos = json.JSONDecoder(), 1, 0, 0
    try:
        pos = _skip_space(text, 0)
        if not text.startswith("[", pos):
            raise DatasetError("expected a JSON list of objects", path=str(path), line=1)
        pos = _skip_space(text, pos + 1)
        while not text.startswith("]", pos):
            line, counted = line + text.count("\n", counted, pos), pos
            data, pos = decoder.raw_decode(text, pos)
            where = _Where(str(path), line)
            if not isinstance(data, dict):
                raise where.error(f"expected a JSON object, got {_kind(data)}")
            yield _Record(where, data, flat=False, clean=clean)
            pos = _skip_space(text, pos)
            if text.startswith(",", pos):
                pos = _skip_space(text, pos + 1)
            elif not text.startswith("]", pos):
                raise json.JSONDecodeError("expected ',' or ']'", text, pos)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _read_csv(path: Path) -> Iterator[_Record]:
    with path.open("rb") as handle:
        rows = _csv_rows((text for _, text in _decoded_lines(handle, str(path))), str(path))
        first = next(rows, None)
        if first is None:
            return
        header = [name.strip() for name in first[1]]
        for index, name in enumerate(header):
            if not name or name in header[:index]:
                problem = "empty" if not name else f"duplicate '{name}'"
                raise DatasetError(f"{problem} column name in header", path=str(path), line=1)
        for line, cells in rows:
            where = _Where(str(path), line)
            if len(cells) != len(header):
                raise where.error(f"{len(cells)} cells but the header has {len(header)}")
            clean = all(map(json_text_is_clean, cells))
            yield _Record(where, dict(zip(header, cells, strict=True)), flat=True, clean=clean)


def _csv_rows(lines: Iterable[str], path: str) -> Iterator[tuple[int, list[str]]]:
    reader = csv.reader(lines, strict=True)
    start = 1
    try:
        for cells in reader:
            if cells:  # a blank line is no record
                yield start, cells
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"malformed CSV: {exc}", path=path, line=reader.line_num) from None


def _read_parquet(path: Path) -> Iterator[_Record]:
    # Imported here so JSONL and CSV users never pay for pyarrow's import.
    import pyarrow as pa  # type: ignore[import-untyped]  # noqa: PLC0415
    import pyarrow.parquet as pq  # type: ignore[import-untyped]  # noqa: PLC0415

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"not a readable Parquet file: {exc}", path=str(path)) from None
    row = 0
    for batch in parquet.iter_batches(batch_size=_BATCH_ROWS):
        for data in batch.to_pylist():
            row += 1
            yield _Record(_Where(str(path), row, parquet=True), data, flat=True)


def _reader(suffix: str) -> Callable[[Path], Iterator[_Record]] | None:
    readers = {".jsonl": _read_jsonl, ".json": _read_json_list, ".csv": _read_csv}
    return _read_parquet if suffix == ".parquet" else readers.get(suffix)


# --- normalising flat and renamed records ------------------------------------------------------


def _kind(value: Any) -> str:
    """The JSON name of a value's type, for messages."""
    if isinstance(value, str):
        return "empty text" if not value.strip() else "text"
    if _is_number(value):
        return f"number ({value!r})"
    kinds = ((type(None), "null"), (bool, "boolean"), (Mapping, "a mapping"), (list, "a list"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
