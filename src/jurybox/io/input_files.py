"""Reading files from outside jurybox: strict UTF-8, bounded JSON, rectangular CSV.

``parse_json`` is the one parser every reader of outside JSON goes through (data sets, label
files, the importers, and the judgments reader's line-by-line reading, which alone accepts
``NaN``: jurybox writes it for a score without a number).

``json.loads`` alone turns a hostile file into a traceback or a silent change: 100,000 nested
brackets raise ``RecursionError``, a 5,000-digit number ``ValueError`` (Python's limit on int
conversion), invalid UTF-8 ``UnicodeDecodeError``, and ``NaN``, ``Infinity`` or ``1e999`` become
non-finite floats that every statistic downstream then carries. Here each is refused as a
``DatasetError`` naming the file, the line and (in the message) the column:

- nesting of arrays and objects deeper than ``MAX_DEPTH`` levels;
- a number longer than ``MAX_NUMBER_CHARS`` characters, or one too large for a float;
- ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON, though Python writes them);
- bytes that are not UTF-8 (a byte-order mark at the start of a file is skipped, and CRLF line
  ends are whitespace to JSON).

The value is otherwise exactly what ``json.loads`` gives (strings with lone surrogates included:
each reader says what it does with them). Type checks belong to each reader's schema; the
helpers at the end (``json_kind``, ``as_identifier``) give them one vocabulary for messages.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from jurybox.errors import DatasetError

MAX_DEPTH = 100  # a dataset item nests 4 levels deep, a record 3: 100 is far past any real file
MAX_NUMBER_CHARS = 100  # digits, sign, point and exponent of one number
_BOM = "\ufeff"


class _Refused(ValueError):
    """Raised inside the decoder's hooks; ``parse_json`` turns it into a located error."""

    def __init__(self, reason: str, token: str | None) -> None:
        super().__init__(reason)
        self.reason, self.token = reason, token


def _int(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(text):,} characters (at most {MAX_NUMBER_CHARS})", text)
    return int(text)


def _float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise _Refused(f"a number of {len(text):,} characters (at most {MAX_NUMBER_CHARS})", text)
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text} is too large", text)
    return value


def _constant(name: str) -> NoReturn:
    raise _Refused(f"{name} is not a JSON number", name)


def _nan_only(name: str) -> float:
    if name != "NaN":
        _constant(name)
    return math.nan


_DECODER = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_constant)
# jurybox's own judgments files: NaN is a score without a number (``io/record_fields.py``).
_NAN_DECODER = json.JSONDecoder(parse_int=_int, parse_float=_float, parse_constant=_nan_only)


def parse_json(
    text: str | bytes,
    *,
    path: str,
    line: int | None = None,
    field: str | None = None,
    nan: bool = False,
) -> Any:
    """The value of one JSON text (a JSONL line, a file, a CSV cell), within the limits above.

    Args:
        text: the JSON text; bytes are decoded as UTF-8 first.
        path: the file it came from, for errors.
        line: the line ``text`` starts on (None: a whole file, counted from line 1).
        field: the field ``text`` is the value of (a CSV cell holding JSON), for errors.
        nan: ``NaN`` is read as a float (``Infinity`` still refused): only for a format that
            writes it, judgments.jsonl.

    Raises:
        DatasetError: naming ``path``, the line and the column of the fault.
    """
    if isinstance(text, bytes):
        text = decode_utf8(text, path=path, line=line)
    return parse_json_at(text, 0, path=path, line=line, field=field, whole=True, nan=nan)[0]


def parse_json_at(
    text: str,
    pos: int,
    *,
    path: str,
    line: int | None = None,
    field: str | None = None,
    whole: bool = False,
    nan: bool = False,
) -> tuple[Any, int]:
    """``parse_json`` of the value starting at ``pos`` (after any whitespace), and where it ends:
    for reading the elements of a JSON list one by one. ``whole``: nothing but whitespace may
    follow it."""
    start = skip_space(text, pos)
    try:
        value, end = (_NAN_DECODER if nan else _DECODER).raw_decode(text, start)
        if whole and skip_space(text, end) < len(text):
            raise json.JSONDecodeError("Extra data", text, skip_space(text, end))
    except json.JSONDecodeError as exc:
        _fail(f"invalid JSON: {exc.msg}", text, exc.pos, path=path, line=line, field=field)
    except _Refused as exc:
        _fail(
            exc.reason, text, _find_token(text, start, exc.token), path=path, line=line, field=field
        )
    except RecursionError:
        _fail(_too_deep(), text, _deep_at(text, start), path=path, line=line, field=field)
    brackets = text.count("[", start, end) + text.count("{", start, end)
    if brackets > MAX_DEPTH and _depth(value) > MAX_DEPTH:  # fewer brackets cannot nest deeper
        _fail(_too_deep(), text, _deep_at(text, start), path=path, line=line, field=field)
    return value, end


def decode_utf8(raw: bytes, *, path: str, line: int | None = None) -> str:
    """``raw`` decoded as UTF-8; an invalid byte is an error naming its line and column
    (``line``: the line ``raw`` starts on, default 1)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise DatasetError(
            f"invalid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column})",
            path=path,
            line=(line or 1) + before.count(b"\n"),
        ) from None


def read_utf8(path: Path) -> str:
    """A whole file's text: UTF-8 only, a leading byte-order mark skipped."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError("file not found", path=str(path)) from None
    except IsADirectoryError:
        raise DatasetError("not a file", path=str(path)) from None
    return decode_utf8(raw, path=str(path), line=1).removeprefix(_BOM)


# What a JSON text is, by its first character (for "expected a JSON list, got ...").
_STARTS = {"{": "an object", '"': "text", "t": "a boolean", "f": "a boolean", "n": "null"}
_STARTS.update(dict.fromkeys("-0123456789", "a number"))


def read_json_list(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, element) of each element of a file holding one JSON list (see ``json_list``)."""
    return json_list(read_utf8(path), str(path))


def json_list(text: str, path: str) -> Iterator[tuple[int, Any]]:
    """(line, element) of each element of ``text``, one JSON list, parsed one element at a time
    so that each has the line it starts on (for errors about its fields)."""
    pos, line, counted = skip_space(text, 0), 1, 0
    if not text.startswith("[", pos):
        got = _STARTS.get(text[pos : pos + 1], "nothing" if pos >= len(text) else "no JSON")
        raise DatasetError(f"expected a JSON list, got {got}", path=path, line=1)
    pos = skip_space(text, pos + 1)
    while not text.startswith("]", pos):
        line, counted = line + text.count("\n", counted, pos), pos
        value, pos = parse_json_at(text, pos, path=path, line=1)  # lines from the top
        yield line, value
        pos = skip_space(text, pos)
        if text.startswith(",", pos):
            pos = skip_space(text, pos + 1)
        elif not text.startswith("]", pos):
            got = "the end of the file" if pos >= len(text) else repr(text[pos])
            message = f"invalid JSON: expected ',' or ']' after an element, got {got}"
            _fail(message, text, pos, path=path, line=1, field=None)
    if skip_space(text, pos + 1) < len(text):
        _fail("invalid JSON: more after the list", text, pos + 1, path=path, line=1, field=None)


def read_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each line of a JSONL file that is not blank; UTF-8 decoded line by
    line (memory stays flat; a bad byte is pinned to its line), a byte-order mark on line 1
    skipped."""
    for number, text in utf8_lines(path):
        if text.strip():
            yield number, parse_json(text, path=str(path), line=number)


def utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 text file, ends kept; see ``read_json_lines``."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise DatasetError("file not found", path=str(path)) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            text = decode_utf8(raw, path=str(path), line=number)
            yield number, text.removeprefix(_BOM) if number == 1 else text


def read_csv_rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, {column: cell}) of each record of a CSV file with a header row: UTF-8 as in
    ``utf8_lines``, quoting strict, blank lines skipped. A header name that is empty or given
    twice, or a record with more or fewer cells than the header, is an error naming its line:
    ``csv.DictReader`` would keep the last of two equal columns and pad or pile up the cells of a
    ragged row, silently. ``line``: where the record starts (a quoted cell may span lines)."""
    reader = csv.reader((text for _, text in utf8_lines(path)), strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            if not cells:  # a blank line is no record
                pass
            elif header is None:
                header = _header(cells, path, start)
            elif len(cells) != len(header):
                message = f"{len(cells)} cells but the header has {len(header)}"
                raise DatasetError(message, path=str(path), line=start)
            else:
                yield start, dict(zip(header, cells, strict=True))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"malformed CSV: {exc}", path=str(path), line=reader.line_num) from None


def _header(cells: list[str], path: Path, line: int) -> list[str]:
    header = [name.strip() for name in cells]
    seen: set[str] = set()  # a set: 100,000 columns compared pairwise took minutes
    for name in header:
        if not name or name in seen:
            problem = "empty" if not name else f"duplicate '{quoted(name)}'"
            raise DatasetError(f"{problem} column name in header", path=str(path), line=line)
        seen.add(name)
    return header


# --- where a fault is ----------------------------------------------------------------------------


def _fail(
    reason: str, text: str, pos: int, *, path: str, line: int | None, field: str | None
) -> NoReturn:
    row = text.count("\n", 0, pos)
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    where = (line if line is not None else 1) + row
    raise DatasetError(f"{reason} (column {column})", path=path, line=where, field=field)


def _too_deep() -> str:
    return f"nested deeper than {MAX_DEPTH} levels"


_SPACE = re.compile(r"[ \t\r\n]*")  # JSON's whitespace


def skip_space(text: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not JSON whitespace."""
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]  # "*" always matches


# Strings (skipped whole), brackets, and the bare words numbers and constants are made of.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|[-+.0-9A-Za-z]+')


def _find_token(text: str, start: int, token: str | None) -> int:
    """Where ``token`` (a number or constant the decoder refused) stands outside any string."""
    for match in _TOKENS.finditer(text, start):
        if match.group() == token:
            return match.start()
    return start


def _deep_at(text: str, start: int) -> int:
    """Where the nesting first goes past ``MAX_DEPTH`` (error path only: it loops in Python)."""
    depth = 0
    for match in _TOKENS.finditer(text, start):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif char in "]}":
            depth -= 1
    return start


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


# --- one vocabulary for type errors --------------------------------------------------------------


def json_kind(value: Any) -> str:
    """The JSON name of a value's type, for messages (``text``, ``number (3)``, ``null`` ...)."""
    if isinstance(value, str):
        return "empty text" if not value.strip() else "text"
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return f"number ({value!r})"
    kinds = ((type(None), "null"), (bool, "boolean"), (Mapping, "a mapping"), (list, "a list"))
    return next((name for kind, name in kinds if isinstance(value, kind)), type(value).__name__)


def quoted(value: Any, limit: int = 60) -> str:
    """``value`` as a message quotes it: text as it is, anything else as JSON, cut to ``limit``
    characters (an id or a cell may be megabytes long)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate: \ud800


def as_identifier(value: Any) -> str | None:
    """An id as text: a non-empty string, or an integer written in decimal; None for anything
    else (null, a boolean, a float, an object, blank text), which no reader may turn into an id
    such as ``"None"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None
