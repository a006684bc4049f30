"""File-format readers: each yields raw records with the place they came from."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import (
    json_kind,
    json_list,
    parse_json,
    read_csv_rows,
    read_utf8,
    utf8_lines,
)
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


def _read_jsonl(path: Path) -> Iterator[_Record]:
    for number, text in utf8_lines(path):
        if not text.strip():
            continue
        where = _Where(str(path), number)
        data = parse_json(text, path=str(path), line=number)
        if not isinstance(data, dict):
            raise where.error(f"expected a JSON object, got {json_kind(data)}")
        yield _Record(where, data, flat=False, clean=json_text_is_clean(text))


def _read_json_list(path: Path) -> Iterator[_Record]:
    text = read_utf8(path)
    clean = json_text_is_clean(text)
    for line, data in json_list(text, str(path)):
        where = _Where(str(path), line)
        if not isinstance(data, dict):
            raise where.error(f"expected a JSON object, got {json_kind(data)}")
        yield _Record(where, data, flat=False, clean=clean)


def _read_csv(path: Path) -> Iterator[_Record]:
    for line, row in read_csv_rows(path):
        clean = all(map(json_text_is_clean, row.values()))
        yield _Record(_Where(str(path), line), row, flat=True, clean=clean)


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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
