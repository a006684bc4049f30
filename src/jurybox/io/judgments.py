"""judgments.jsonl: append-only writer, streaming reader, resume repair.

One record is one ``write(2)`` of one line, made from the event loop only, so records never
interleave and a ``kill -9`` can at worst leave a torn last line (no newline). Readers skip such a
line; resume truncates it before appending. Durability against a killed *process* needs only
the write (the kernel keeps the page); ``fdatasync`` guards against power loss and is done at most
once per ``fsync_interval_s`` and on close, because per-record sync costs milliseconds each. The
periodic sync runs on the writer's own thread (it can take ~80 ms, which would stall the event
loop): a sync only flushes what ``write(2)`` already put in the page cache, so it cannot tear a
record, and ``close`` waits for it before the descriptor is closed (never reused under it).

A failed write (disk full, EFBIG past ``RLIMIT_FSIZE``) truncates the file back to the end of the
last complete record and raises an ``OSError`` that names the file, so the CLI's one-line error
says where, and the file stays strictly valid JSON Lines for ``--resume``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from array import array
from collections.abc import Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, overload

from jurybox.errors import DatasetError
from jurybox.io.atomic import AtomicFile
from jurybox.io.text import clean_value, is_encodable
from jurybox.records import JudgeRecord, Status, record_key
from jurybox.redaction import holds_known, redact_credentials, redact_value

JUDGMENTS_FILE = "judgments.jsonl"
_TAIL_BLOCK = 1 << 16


class JsonlWriter:
    """Appends one JSON line per record; synced periodically (off-thread) and on close."""

    def __init__(self, path: Path, *, fsync_interval_s: float = 1.0) -> None:
        self.path = path
        self.fsync_interval_s = fsync_interval_s
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._end = os.fstat(self._fd).st_size  # end of the last complete record
        self._last_sync = time.monotonic()
        self._dirty = False
        self._syncer: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._failed: OSError | None = None
        self.written = 0

    def write(self, record: JudgeRecord) -> None:
        if self._failed is not None:
            raise self._failed
        data = (record_json(record) + "\n").encode("utf-8")
        view = memoryview(data)
        try:
            while view:  # os.write may write less than asked (signals, huge lines)
                view = view[os.write(self._fd, view) :]
        except OSError as exc:
            raise self._fail(exc) from None
        self._end += len(data)
        self.written += 1
        self._dirty = True
        if time.monotonic() - self._last_sync >= self.fsync_interval_s:
            self.sync()

    def _fail(self, exc: OSError) -> OSError:
        """Cut a partly written record off and remember an error that names the file."""
        # If even this fails, readers and resume still skip a torn last line.
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._end)
        self._failed = OSError(exc.errno, exc.strerror or str(exc), str(self.path))
        return self._failed

    def sync(self) -> None:
        """Start a background ``fdatasync`` unless one is still running (it then covers it)."""
        self._last_sync = time.monotonic()
        if not self._dirty or (self._pending is not None and not self._pending.done()):
            return
        self._check_pending()
        if self._syncer is None:
            self._syncer = ThreadPoolExecutor(1, thread_name_prefix="jurybox-fsync")
        self._dirty = False
        self._pending = self._syncer.submit(_datasync, self._fd)

    def _check_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            error = pending.exception()  # waits if still running
            if isinstance(error, OSError):
                raise self._fail(error)

    def close(self) -> None:
        if self._fd < 0:
            return
        try:
            if self._syncer is not None:
                self._syncer.shutdown(wait=True)  # no sync may outlive the descriptor
            self._check_pending()
            if self._dirty and self._failed is None:
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    raise self._fail(exc) from None
                self._dirty = False
        finally:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def record_json(record: JudgeRecord) -> str:
    """The record's JSON line; unencodable code points replaced, counted in ``text_replaced``.

    Nothing a judge or a dataset says can then make a record unwritable (a lone surrogate used to
    raise ``UnicodeEncodeError`` here, on every resume again).
    """
    if record.error is not None:  # adapters scrub their messages; this is the last line
        record = _redacted_error(record)
    line = record.to_json()
    known = holds_known(line)  # an upstream that echoed a secret into its answer
    if is_encodable(line) and not known:
        return line
    data, replaced = clean_value(record.to_dict())
    data["text_replaced"] = record.text_replaced + replaced
    if known:  # replaced in the values, where no JSON escape can be cut in two
        data = redact_value(data, shapes=False)
    return json.dumps(data, ensure_ascii=False)


def _redacted_error(record: JudgeRecord) -> JudgeRecord:
    error = redact_credentials(record.error or "")
    return record if error == record.error else dataclasses.replace(record, error=error)


def _datasync(fd: int) -> None:
    sync = getattr(os, "fdatasync", os.fsync)  # fdatasync: Linux; macOS/Windows: fsync
    sync(fd)


def judgments_path(path: str | Path) -> Path:
    """``path`` itself, or ``path/judgments.jsonl`` when it is a run directory."""
    path = Path(path)
    return path / JUDGMENTS_FILE if path.is_dir() else path


def _iter_lines(path: Path) -> Iterator[tuple[int, dict[str, Any], bytes]]:
    """(line number, parsed object, raw line) of each complete line; a torn last one is skipped."""
    for number, _, data, raw in _iter_lines_at(path):
        yield number, data, raw


def _iter_lines_at(path: Path) -> Iterator[tuple[int, int, dict[str, Any], bytes]]:
    """``_iter_lines`` with each line's byte offset (line number, offset, object, raw line)."""
    offset = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return  # torn by a kill mid-write: the unit is redone on resume
            start, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            yield number, start, _parsed(raw, path, number), raw


def _parsed(raw: bytes, path: Path, number: int | None) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not valid JSON ({exc.msg})", path=str(path), line=number) from None
    if not isinstance(data, dict) or "key" not in data:
        raise DatasetError("not a judgment record", path=str(path), line=number)
    return data


def read_records(path: str | Path) -> Iterator[JudgeRecord]:
    """Stream the records of a judgments file (or run directory), skipping a torn last line."""
    file = judgments_path(path)
    for number, data, _ in _iter_lines(file):
        yield _record(data, file, number)


def _record(data: dict[str, Any], file: Path, number: int | None) -> JudgeRecord:
    try:
        return JudgeRecord.from_dict(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise DatasetError(f"invalid record: {exc}", path=str(file), line=number) from None


# What ``JudgeRecord.from_dict`` demands of a line: these fields, and a known status.
REQUIRED_FIELDS = frozenset(
    f.name
    for f in dataclasses.fields(JudgeRecord)
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
)
STATUSES = frozenset(status.value for status in Status)
CHUNK_LINES = 20_000


def _checked(data: dict[str, Any], file: Path, number: int) -> dict[str, Any]:
    """The line's object with its key migrated (``record_key``), if ``JudgeRecord.from_dict``
    would accept it; else the very error ``read_records`` gives. No record is built: a line
    that passes these checks is one ``from_dict`` accepts (it checks nothing else)."""
    status = data.get("status")
    if not (REQUIRED_FIELDS.issubset(data) and isinstance(status, str) and status in STATUSES):
        _record(data, file, number)  # raises the error read_records gives
    try:
        data["key"] = record_key(data)
    except (TypeError, ValueError, KeyError) as exc:
        raise DatasetError(f"invalid record: {exc}", path=str(file), line=number) from None
    return data


@dataclass(frozen=True, slots=True)
class RecordChunk:
    """Consecutive records of a judgments file as their parsed JSON objects (checked as
    ``read_records`` checks them, ``key`` migrated), and each one's byte offset in the file."""

    rows: list[dict[str, Any]]
    offsets: list[int]


def read_record_chunks(path: str | Path, size: int = CHUNK_LINES) -> Iterator[RecordChunk]:
    """``read_records`` without the records: the same lines, the same errors, in chunks of
    ``size`` plain objects, so that a columnar reader never holds a million ``JudgeRecord``s."""
    file = judgments_path(path)
    rows: list[dict[str, Any]] = []
    offsets: list[int] = []
    for number, offset, data, _ in _iter_lines_at(file):
        rows.append(_checked(data, file, number))
        offsets.append(offset)
        if len(rows) >= size:
            yield RecordChunk(rows, offsets)
            rows, offsets = [], []
    if rows:
        yield RecordChunk(rows, offsets)


BLOCK_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Consecutive complete lines of a judgments file, unparsed (for a columnar parser), with
    the line number and byte offset of each line that is not blank. ``records`` parses them
    as ``read_record_chunks`` does: the fallback, and the one source of errors."""

    path: Path
    data: bytes
    start: int  # byte offset of data[0] in the file
    numbers: array[int]
    offsets: array[int]

    def records(self) -> RecordChunk:
        """The lines' checked objects; a bad line raises what ``read_records`` raises."""
        rows = [self._checked(row) for row in range(len(self.offsets))]
        return RecordChunk(rows, list(self.offsets))

    def checked(self, rows: Sequence[int]) -> None:
        """Check these lines (0-based among the non-blank ones) as ``records`` would."""
        for row in rows:
            self._checked(row)

    def _checked(self, row: int) -> dict[str, Any]:
        start = self.offsets[row] - self.start
        raw = self.data[start : self.data.index(b"\n", start) + 1]
        number = self.numbers[row]
        return _checked(_parsed(raw, self.path, number), self.path, number)


def read_line_blocks(path: str | Path, size: int = BLOCK_BYTES) -> Iterator[LineBlock]:
    """The file's complete lines in blocks of about ``size`` bytes (whole lines; a torn last
    line is left out, as ``read_records`` leaves it), for ``pyarrow.json`` to parse."""
    file = judgments_path(path)
    number, offset = 0, 0
    with file.open("rb") as handle:
        carry = b""
        while chunk := handle.read(size):
            data = carry + chunk
            end = data.rfind(b"\n") + 1
            carry = data[end:]
            if end:
                block, number, offset = _block(file, data[:end], number, offset)
                yield block


_SPACE = b" \t\r\x0b\x0c\n"  # what bytes.strip() strips


def _block(file: Path, data: bytes, number: int, offset: int) -> tuple[LineBlock, int, int]:
    """The block of ``data`` (whole lines) that starts at line ``number + 1``, byte ``offset``;
    line ends found by numpy, not a Python loop over a million lines."""
    # Here, not at the top: the run path imports this module for its writer, and starts fast.
    import numpy as np  # noqa: PLC0415

    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate(([0], ends[:-1] + 1))
    first_bytes = buf[np.minimum(starts, len(buf) - 1)]
    kept = (starts < ends) & ~np.isin(first_bytes, np.frombuffer(_SPACE, dtype=np.uint8))
    for line in np.flatnonzero((starts < ends) & ~kept):  # starts with a space: look
        kept[line] = bool(data[starts[line] : ends[line]].strip())
    numbers = array("q", (number + 1 + np.flatnonzero(kept)).tolist())
    offsets = array("q", (offset + starts[kept]).tolist())
    block = LineBlock(file, data, offset, numbers, offsets)
    return block, number + len(ends), offset + len(data)


class StoredRecords(Sequence[JudgeRecord]):
    """Records of a judgments file left on disk: only each one's byte offset is held, and a
    record is parsed again when it is read. Iterating streams them, one at a time, in the
    order given (the order of ``read_unique_records`` when the offsets come from it)."""

    def __init__(self, path: Path, offsets: Collection[int]) -> None:
        self.path = path
        self._offsets = array("q", offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    @property
    def offsets(self) -> array[int]:
        """Each record's byte offset in the file, in the records' order."""
        return self._offsets

    @overload
    def __getitem__(self, index: int) -> JudgeRecord: ...
    @overload
    def __getitem__(self, index: slice) -> StoredRecords: ...
    def __getitem__(self, index: int | slice) -> JudgeRecord | StoredRecords:
        if isinstance(index, slice):
            return StoredRecords(self.path, self._offsets[index])
        with self.path.open("rb") as handle:
            return self._read(handle, self._offsets[index])

    def __iter__(self) -> Iterator[JudgeRecord]:
        with self.path.open("rb") as handle:
            for offset in self._offsets:
                yield self._read(handle, offset)

    def _read(self, handle: Any, offset: int) -> JudgeRecord:
        if handle.tell() != offset:
            handle.seek(offset)
        raw = handle.readline()  # checked when the offsets were taken; no line number kept
        return _record(_parsed(raw, self.path, None), self.path, None)

    def line_blocks(self, size: int = BLOCK_BYTES) -> Iterator[StoredLines]:
        """The records' lines, unparsed and in the records' order, in blocks of about ``size``
        bytes for a columnar parser. Records whose lines follow each other in the file are read
        with one ``read``; lines between them (dropped duplicates) are left out."""
        import numpy as np  # noqa: PLC0415  (see _block)

        offsets = np.frombuffer(self._offsets, dtype=np.int64) if self._offsets else None
        if offsets is None:
            return
        # A run ends where the next record's line is not further on in the file.
        run_ends = [*(np.flatnonzero(offsets[1:] <= offsets[:-1]) + 1).tolist(), len(offsets)]
        with self.path.open("rb") as handle:
            first = 0
            for run_end in run_ends:
                while first < run_end:
                    run = offsets[first:run_end]
                    last = first + max(1, int(np.searchsorted(run, run[0] + size)))
                    yield _stored_lines(handle, self.path, offsets[first:last], first)
                    first = last


@dataclass(frozen=True, slots=True)
class StoredLines:
    """The lines of consecutive stored records, each ending in a newline, one after the other
    in ``data``: record ``first + i`` is the line at ``starts[i]``."""

    path: Path
    data: bytes
    first: int
    starts: list[int]

    def line(self, row: int) -> bytes:
        """The ``row``-th line (0-based), its newline included."""
        start = self.starts[row]
        end = self.starts[row + 1] if row + 1 < len(self.starts) else len(self.data)
        return self.data[start:end]

    def record(self, row: int) -> JudgeRecord:
        """The ``row``-th line's record, read as ``StoredRecords`` reads it."""
        return _record(_parsed(self.line(row), self.path, None), self.path, None)


def file_lines(
    path: str | Path, size: int = BLOCK_BYTES
) -> Iterator[tuple[StoredLines, array[int]]]:
    """Every line of the file that is not blank, in blocks of about ``size`` bytes, with each
    line's byte offset: the records ``read_unique_records`` keeps when no key repeats (what a
    pass started before they are read takes, checking them against the kept ones later)."""
    first = 0
    for block in read_line_blocks(path, size):
        if block.offsets:
            starts = [offset - block.start for offset in block.offsets]
            yield StoredLines(block.path, block.data, first, starts), block.offsets
            first += len(starts)


def _stored_lines(handle: Any, path: Path, offsets: Any, first: int) -> StoredLines:
    """The lines at ``offsets`` (increasing numpy int64 offsets): one read from the first to
    the end of the last; joined without what lies between them when they are not adjacent."""
    import numpy as np  # noqa: PLC0415

    base = int(offsets[0])
    handle.seek(base)
    span = handle.read(int(offsets[-1]) - base) + handle.readline()
    ends = np.flatnonzero(np.frombuffer(span, dtype=np.uint8) == ord("\n")) + 1
    starts = offsets - base
    line_ends = ends[np.searchsorted(ends, starts, side="right")]
    if np.array_equal(starts[1:], line_ends[:-1]):  # adjacent: the span as read
        return StoredLines(path, span[: int(line_ends[-1])], first, starts.tolist())
    pieces = [span[s:e] for s, e in zip(starts.tolist(), line_ends.tolist(), strict=True)]
    joined = np.concatenate(([0], np.cumsum(line_ends - starts)[:-1])).tolist()
    return StoredLines(path, b"".join(pieces), first, joined)


@dataclass(frozen=True, slots=True)
class UniqueRecords:
    """The records of a judgments file, one per key, and how many duplicate lines were dropped."""

    records: list[JudgeRecord]
    dropped: int


def read_unique_records(
    path: str | Path, query_ids: Collection[str] | None = None
) -> UniqueRecords:
    """``read_records`` with one record per key: the last complete one (any status but
    ``provider_error``), else the last one. Analysis reads this: a file holding a judgment twice
    (two runs concatenated, a copy appended) would otherwise count it twice, silently.
    ``query_ids``: only the records of these items (a key names its item, so duplicates of a
    key are all kept or all left out)."""
    kept: dict[str, JudgeRecord] = {}
    total = 0
    for record in read_records(path):
        if query_ids is not None and record.query_id not in query_ids:
            continue
        total += 1
        previous = kept.get(record.key)
        complete = record.status != Status.PROVIDER_ERROR
        if previous is None or complete or previous.status == Status.PROVIDER_ERROR:
            kept[record.key] = record
    return UniqueRecords(list(kept.values()), total - len(kept))


def repair_tail(path: Path) -> int:
    """Truncate a torn last line (bytes after the last newline); returns the bytes removed."""
    if not path.exists():
        return 0
    with path.open("r+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - _TAIL_BLOCK)
            handle.seek(start)
            newline = handle.read(end - start).rfind(b"\n")
            if newline >= 0:
                keep = start + newline + 1
                break
            end = start
        else:
            keep = 0
        if keep < size:
            handle.truncate(keep)
            handle.flush()
            os.fsync(handle.fileno())
        return size - keep


def prepare_resume(path: Path) -> set[str]:
    """Make ``path`` ready to append to and return the keys that count as done.

    The torn tail is truncated. ``provider_error`` records are *not* done: they are removed (the
    file is rewritten atomically) so the redone unit leaves exactly one line per key. If the file
    somehow holds a key twice, the last line wins.
    """
    repair_tail(path)
    if not path.exists():
        return set()
    last_line: dict[str, int] = {}
    failed: set[str] = set()
    total = 0
    for number, data, _ in _iter_lines(path):
        total += 1
        key = record_key(data)  # a version-1 line gets its collision-free key
        last_line[key] = number
        if data.get("status") == Status.PROVIDER_ERROR.value:
            failed.add(key)
        else:
            failed.discard(key)
    keep = {number for key, number in last_line.items() if key not in failed}
    if len(keep) != total:
        _rewrite_keeping(path, keep)
    return set(last_line) - failed


def _rewrite_keeping(path: Path, keep: set[int]) -> None:
    """Atomically replace ``path`` by the lines whose numbers are in ``keep``."""
    with AtomicFile(path, binary=True) as out:
        for number, _, raw in _iter_lines(path):
            if number in keep:
                out.write(raw)
        out.commit()
