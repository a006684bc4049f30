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
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

from jurybox.io.atomic import AtomicFile
from jurybox.io.record_fields import checked_record, parse_line
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
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return  # torn by a kill mid-write: the unit is redone on resume
            if raw.strip():
                yield number, parse_line(raw, str(path), number), raw


def read_records(path: str | Path) -> Iterator[JudgeRecord]:
    """Stream the records of a judgments file (or run directory), skipping a torn last line;
    each line read by the rules every reader of the file follows (``io/record_fields.py``).
    Every line, duplicate keys included (what a run's totals count); the analysis reads the
    file as a table, one record per key (``io/record_table.py``)."""
    file = judgments_path(path)
    for number, data, _ in _iter_lines(file):
        yield JudgeRecord.from_dict(checked_record(data, str(file), number))


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
