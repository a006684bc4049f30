"""The report's records pass: the failure appendix and the item explorer from one pass over the
records, and, at scale, that pass run in a second process while the analysis and the plots run.

``write_pass`` reads every record once and writes the side files (``failed_records.jsonl``, the
explorer's pages under ``report_items/``) under temporary names; ``Written.install`` puts them in
place, so that an error anywhere before report.html leaves the previous report whole.

``RecordsPass`` runs it in a forked process beside the analysis and the plots: at a million
records the pass is most of a minute of CPU, which the second core spends beside them instead
of after them. ``jurybox analyze`` forks it before the records are even read (``start_early``,
a large judgments file): the pages need the frame's flags and labels only when they are written,
so the child spools its guess of the records (every line of the file, what they are unless a
key repeats) while the parent reads them, taking each block's columns from the parent's parse
of it (``block_parsed``) rather than parsing it again, checks the guess against the records
the parent kept, and is sent the frame's marks once the frame exists. Otherwise it is forked
as soon as the frame exists (``start``). The child writes the temporary files and sends back what
report.html embeds (the appendix's records, the explorer's index); only the parent puts files
in place (docs/report-scale.md).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import tempfile
import threading
import traceback
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pyarrow as pa  # type: ignore[import-untyped]

from jurybox.analysis import AnalysisFrame
from jurybox.io.atomic import AtomicFile
from jurybox.io.judgments import BLOCK_BYTES, LineBlock, StoredLines, StoredRecords, file_lines
from jurybox.records import Item, JudgeRecord
from jurybox.reporting.explorer import ExplorerData, build_explorer, paged
from jurybox.reporting.explorer.data import ItemMarks, item_marks
from jurybox.reporting.explorer.paged import (
    PagedExplorer,
    PageWriter,
    explorer_size,
    install_pages,
    remove_pages,
)
from jurybox.reporting.explorer.stored import (
    SeenBlock,
    seen_blocks,
    seen_line_blocks,
    shown_columns,
)
from jurybox.reporting.render.html import FULL_CHARS, FailedRecord, FailureDigest, is_failed
from jurybox.reporting.render.sidefiles import FAILURES_FILE, failure_line

if TYPE_CHECKING:
    import pandas as pd

# Records from which the pass runs in a second process (below, it takes a second or less).
CONCURRENT_OVER = 20_000
# A judgments file from this size forks that process before it is read (``start_early``): some
# 20,000 records of a few hundred bytes to a few kB each.
EARLY_OVER_BYTES = 20_000_000
# How much the second process yields to the command's own (``os.nice``): the reading, the
# analysis and the plots are the command's path, the pass runs on the core they leave idle. At a
# million records on 2 cores: 45-46 s with 5 or 10, 48 s with 0 (the pass's threads slow the
# parent's reading and analysis, which then ends last; BENCHMARKS.md).
NICENESS = 5


@dataclass
class Written:
    """What the pass found and wrote: the appendix's digest, the explorer (rows or index),
    and its side files still under temporary names (None: this report has none)."""

    digest: FailureDigest
    explorer: ExplorerData | PagedExplorer | None
    failures: Path | None = None  # the complete failures file, to rename over FAILURES_FILE
    pages: Path | None = None  # the pager's folder holding the complete report_items/

    def install(self, out_dir: Path) -> None:
        """Put the side files in place; remove those of an earlier report that this one has
        not."""
        target = out_dir / FAILURES_FILE
        if self.failures is not None:
            self.failures.replace(target)
            self.failures = None
        else:
            target.unlink(missing_ok=True)
        if self.pages is not None:
            install_pages(self.pages, out_dir)
            self.pages = None
        else:
            remove_pages(out_dir)

    def discard(self) -> None:
        """Remove the temporary side files (nothing is put in place)."""
        if self.failures is not None:
            self.failures.unlink(missing_ok=True)
        if self.pages is not None:
            paged.discard_work(self.pages)


@contextmanager
def alive_left_alone() -> Iterator[None]:
    """The objects alive now (the frame, the items: millions at a million records) left out of
    the cyclic GC's passes until the block ends (``gc.freeze``). The records pass makes some
    twenty short-lived objects a record, which set off full collections that walked all of
    them again and again: ~12% of the pass's CPU at 100,000 records (issue #19). Where
    something is frozen already (``jurybox run`` freezes what it imported), it stays so."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class Paging:
    """What the paged explorer's pages need of the analysis frame: how many items the
    explorer has (or a guess: it only groups the spooled judgments), and the items' flags and
    labels with the frame's judges (asked for once the records are spooled: a pass
    started before the frame exists waits for them there)."""

    size: int
    marks: Callable[[], tuple[ItemMarks, tuple[str, ...]]]


def paging(
    frame: AnalysisFrame | None, records: Sequence[JudgeRecord], items: Sequence[Item] | None
) -> Paging | None:
    """The explorer's ``Paging`` when it is paged (past ``PAGED_OVER`` items), else None."""
    if frame is None or not records:
        return None
    size = explorer_size(frame.records, items)
    if size <= paged.PAGED_OVER:
        return None
    marks = item_marks(frame), frame.judges
    return Paging(size, lambda: marks)


def write_pass(
    frame: AnalysisFrame | None,
    records: Sequence[JudgeRecord],
    items: Sequence[Item] | None,
    out_dir: Path,
    *,
    pages: Paging | None = None,
    blocks: Iterator[SeenBlock] | None = None,
    release: bool = False,
) -> Written:
    """The failure appendix and the item explorer, from one pass over the records when the
    explorer is paged (a million records are read once, not twice); their side files (every
    failure past ``MAX_FAILURES``, the explorer's pages) written complete under temporary
    names. ``pages``: ``paging``'s answer, when already asked; ``blocks``: the records as the
    explorer shows them, when on their way already (with ``pages``); ``release``: the items
    are let go as their pages are written (``PageWriter``; the forked pass)."""
    if pages is None:
        pages = paging(frame, records, items)
    pager = None
    if pages is not None:
        pager = PageWriter(items, out_dir, size=pages.size, marks=pages.marks, release=release)
    written = Written(FailureDigest(), None)
    try:
        with AtomicFile(out_dir / FAILURES_FILE) as side:
            _read_records(records, pager, written.digest, side, blocks)
            if written.digest.total > len(written.digest.listed):
                written.digest.side_file = FAILURES_FILE
                written.failures = side.finish()
        if pager is not None:
            written.explorer = pager.finish()
            written.pages = pager.work
            return written
    except BaseException:
        if pager is not None:
            pager.discard()
        written.discard()
        raise
    if frame is not None and records:
        written.explorer = build_explorer(frame, records, items)
    return written


def _read_records(
    records: Sequence[JudgeRecord],
    pager: PageWriter | None,
    digest: FailureDigest,
    side: AtomicFile,
    blocks: Iterator[SeenBlock] | None = None,
) -> None:
    """Every record once: a failed one to the appendix and the failures file, each to the
    explorer's pages. Records left on disk are read by pyarrow, only what the pass shows
    (``seen_blocks``: the same as each record's, a fifth of the CPU of parsing each line),
    unless ``blocks`` has them already."""
    if pager is not None and blocks is None and isinstance(records, StoredRecords):
        blocks = seen_blocks(records)
    if pager is not None and blocks is not None:
        for block in blocks:
            for row, record in block.failed:
                line = block.first + row + 1
                digest.add(FailedRecord(line, record))
                side.write(failure_line(line, record, text_chars=FULL_CHARS))
            pager.add_block(block)
        return
    for line, record in enumerate(records, start=1):
        if is_failed(record):
            digest.add(FailedRecord(line, record))
            side.write(failure_line(line, record, text_chars=FULL_CHARS))
        if pager is not None:
            pager.add(record)


class RecordsPass:
    """The records pass of one report, started in a forked process before the records are read
    (``start_early``, then ``records_read`` and ``start``) or once the analysis frame exists
    (``start``), or run in this one when ``written`` is asked for (few records, or no ``fork``
    on this platform). Use it as a context manager: leaving the block ends a child still
    running and removes what it wrote but nobody installed."""

    def __init__(
        self,
        records: Sequence[JudgeRecord],
        items: Sequence[Item] | None,
        out_dir: Path,
        *,
        held: int = 0,
    ) -> None:
        """``held``: records left on disk (``StoredRecords``) up to this many are read into a
        list when the pass runs (each parsed once, for both the appendix and the explorer)."""
        self._records = records
        self._held = held
        self.items = items
        self.out_dir = out_dir
        self._frame: AnalysisFrame | None = None
        self._answer: _Answer | None = None
        self._written: Written | None = None
        self._orders: _Sender | None = None  # to a child forked early (``start_early``)
        self._tables: _TableSpool | None = None  # the blocks' tables, shared with that child

    @property
    def records(self) -> Sequence[JudgeRecord]:
        """The records as the pass reads them: a list up to ``held`` records on disk."""
        records = self._records
        if isinstance(records, StoredRecords) and len(records) <= self._held:
            return list(records)
        return records

    def start_early(self, judgments: Path) -> None:
        """Fork the pass now, before the records are read (from a judgments file of
        ``EARLY_OVER_BYTES``): the child spools every line of the file while this process
        reads the records, checks its guess against them once they are read (``records_read``:
        they are those lines unless a key repeats) and waits for the frame's marks (``start``)
        only to write the pages. At a million records its pass starts some 20 s sooner than
        one forked over the frame, on the core this process's reading leaves idle, and it
        shares none of this process's tables (they do not exist yet)."""
        if self._answer is not None or not _forks():
            return
        if judgments.stat().st_size < EARLY_OVER_BYTES:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        context = multiprocessing.get_context("fork")
        orders, parents_end = context.Pipe(duplex=False)
        self._tables = _TableSpool(self.out_dir)
        guess = _Guess(judgments, orders, self._tables)
        self._fork(_early_child, parents_end, self, guess)
        orders.close()
        self._orders = _Sender(parents_end)

    def block_parsed(self, block: LineBlock, table: pa.Table | None) -> None:
        """A block of the judgments as the reading parsed it (``record_tables``' ``parsed``,
        called in its reading thread): shared with the child forked early, which then need
        not parse it again (a fifth of its CPU at a million records)."""
        if self._orders is None or self._tables is None or not block.offsets:
            return
        self._orders.tell(("table", *self._tables.write(block, table)))

    def records_read(self, records: Sequence[JudgeRecord], table: pd.DataFrame) -> None:
        """The records, read (``table``: their records table, with ``query_id``). A child
        forked early is sent them when the pass is worth a process and its explorer is paged;
        else it is ended, and ``start`` forks over the frame (the embedded explorer's rows need
        the frame)."""
        self._records = records
        if self._orders is None:
            return
        if len(records) < CONCURRENT_OVER or explorer_size(table, self.items) <= paged.PAGED_OVER:
            self._end_early()
            return
        self._orders.tell(("records", records))
        if self._tables is not None:  # every block is written: the child holds the file open
            self._tables.close()

    def start(self, frame: AnalysisFrame) -> None:
        """Fork the pass over ``frame`` (when worth it): it runs beside what this process
        does next. Nothing the parent does to the frame afterwards reaches the child. A child
        forked early is sent the frame's marks and judges instead."""
        if self._frame is not None:
            return
        if self._orders is not None:
            self._orders.tell(("marks", item_marks(frame), frame.judges))
            self._frame = frame
            return
        if not _forks() or len(self._records) < CONCURRENT_OVER:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        # Here, not in the child: the tables they read (order pairs, consolidated verdicts)
        # are the analysis's own, kept in the frame; the child would build its own copies.
        pages = paging(frame, self._records, self.items)
        self._fork(_child_pass, frame, self, pages)
        self._frame = frame

    def _fork(self, target: Callable[..., None], *args: Any) -> None:
        """Start ``target(answer pipe, *args)`` in a forked child; its answer taken by a
        thread of this process."""
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        sys.stdout.flush()  # a forked child flushes what it inherited: nothing, so
        sys.stderr.flush()
        child = context.Process(
            target=target, args=(send, *args), name="jurybox-records-pass", daemon=True
        )
        child.start()
        send.close()
        self._answer = _Answer(receive, child)

    def _end_early(self) -> None:
        """End the child forked early (it has written nothing that stays)."""
        if self._tables is not None:
            self._tables.close()
            self._tables = None
        if self._orders is None:
            return
        if self._answer is not None:
            self._answer.cancel()  # the child ended: a message still on its way fails
            self._answer = None
        self._orders.close()
        self._orders = None

    def written(self, frame: AnalysisFrame | None) -> Written:
        """The pass's result over ``frame``: the child's, when it was started over this frame,
        else computed here and now."""
        if self._answer is None or frame is not self._frame:
            self.close()
            with alive_left_alone():
                self._written = write_pass(frame, self.records, self.items, self.out_dir)
            return self._written
        answer, self._answer = self._answer, None
        self._written = answer.result()
        return self._written

    @property
    def forked(self) -> bool:
        """Whether the pass runs in a child process (started, its answer not yet taken)."""
        return self._answer is not None

    def wait(self, timeout: float | None = None) -> bool:
        """Wait (up to ``timeout`` seconds) until the child has answered; whether it has."""
        return self._answer is not None and self._answer.ready(timeout)

    def close(self) -> None:
        """End a child still running (it removes what it wrote), remove the files of one that
        had finished, and side files written but not installed."""
        self._end_early()
        if self._answer is not None:
            self._answer.cancel()
            self._answer = None
        if self._written is not None:
            self._written.discard()
            self._written = None

    def __enter__(self) -> RecordsPass:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class _Answer:
    """The child's answer, taken by a thread of the parent as soon as it is sent: the child
    then ends and its memory is freed while the parent still analyses or draws, instead of
    being held until the parent asks for the answer."""

    def __init__(self, pipe: Connection, child: Any) -> None:
        self._pipe, self._child = pipe, child
        self._got: tuple[str, Any] | None = None
        self._thread = threading.Thread(target=self._take, name="jurybox-records-answer")
        self._thread.daemon = True
        self._thread.start()

    def _take(self) -> None:
        try:
            self._got = self._pipe.recv()
        except Exception:
            pass
        finally:
            self._pipe.close()
            self._child.join()

    def ready(self, timeout: float | None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def result(self) -> Written:
        """The child's ``Written``; its error raised here."""
        self._thread.join()
        if self._got is None:
            raise RuntimeError(
                "the report's records pass (a second process) ended without an answer, "
                f"exit code {self._child.exitcode}"
            )
        kind, value = self._got
        if kind == "error":
            raise value
        written: Written = value
        return written

    def cancel(self) -> None:
        """End the child if it has not answered (it removes its files on the way out); remove
        the files of an answer nobody takes."""
        if self._thread.is_alive():
            self._child.terminate()
        self._thread.join()
        if self._got is not None and self._got[0] == "done":
            self._got[1].discard()
        self._got = None


class _Sender:
    """Messages to the child forked early, sent in order by a thread of their own: the child
    reads the blocks' tables as it gets to them and the frame's marks only when it writes the
    pages, and neither the reading nor the analysis waits for it meanwhile. Where the child
    has ended, its answer (an error) is what ``written`` raises."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._send_all, name="jurybox-records-orders", daemon=True
        )
        self._thread.start()

    def tell(self, message: tuple[Any, ...]) -> None:
        self._queue.put(message)

    def _send_all(self) -> None:
        while (message := self._queue.get()) is not None:
            with contextlib.suppress(OSError):  # the child has ended
                self._connection.send_bytes(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        """Send what is queued (or fail to: end the child first where it may not read it)."""
        self._queue.put(None)
        self._thread.join()
        self._connection.close()


class _TableSpool:
    """The blocks' tables as the parent's reading parsed them (the columns the pass reads),
    one Arrow IPC stream after another in a file without a name beside the report, for the
    child forked early to read instead of parsing each block again. A file, not the pipe:
    the child may be many blocks behind the reading, and the page cache then holds them,
    not either process. Where a table cannot be written (a full disk), the child parses
    that block itself."""

    def __init__(self, out_dir: Path) -> None:
        # Nameless (or unlinked at once): nothing is left behind, whatever ends the command.
        self._file = tempfile.TemporaryFile(dir=out_dir)  # noqa: SIM115  (open across a fork)
        self._fd = self._file.fileno()  # the child's inherited copy reads from it
        self._end = 0
        self._failed = False

    def write(self, block: LineBlock, table: pa.Table | None) -> tuple[int, int, int, int]:
        """The block's first line offset and its lines, and where its table lies in the file
        (offset, length; a length of 0: none)."""
        key = (block.offsets[0], len(block.offsets))
        if table is None or self._failed:
            return (*key, 0, 0)
        try:
            length = self._append(shown_columns(table))
        except (OSError, pa.ArrowException):
            self._failed = True  # the analysis goes on; the child parses what is not here
            return (*key, 0, 0)
        at, self._end = self._end, self._end + length
        return (*key, at, length)

    def _append(self, table: pa.Table) -> int:
        """Write the table's IPC stream at the file's end; its length."""
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        data = memoryview(sink.getvalue())
        done = 0
        while done < len(data):
            done += os.pwrite(self._fd, data[done:], self._end + done)
        return done

    def read(self, at: int, length: int) -> pa.Table:
        return pa.ipc.open_stream(pa.py_buffer(os.pread(self._fd, length, at))).read_all()

    def close(self) -> None:
        """This process's end closed (the child keeps its own until it exits)."""
        self._file.close()


def _forks() -> bool:
    """Whether a child can be forked safely: Linux (macOS's fork is unsafe with threads)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _child_pass(
    answer: Connection,
    frame: AnalysisFrame | None,
    records_pass: RecordsPass,
    pages: Paging | None,
    guess: _Guess | None = None,
) -> None:
    """The forked process: the pass, its result (or its error) sent back to the parent."""
    # Everything inherited is left out of the GC's passes for good: walking it would also copy
    # the parent's memory page by page into this process.
    gc.freeze()
    os.nice(NICENESS)
    # Ended by the parent (its own error): unwind, so that the temporary files go too.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        written = _pass_of(frame, records_pass, pages, guess)
    except SystemExit:
        raise
    except BaseException as error:  # sent to the parent, which raises it
        with contextlib.suppress(OSError):
            answer.send(("error", _sendable(error)))
        raise SystemExit(1) from None
    try:
        answer.send(("done", written))
    except BaseException:  # the parent is gone, or ended this process: nobody installs them
        written.discard()
        raise
    answer.close()


def _pass_of(
    frame: AnalysisFrame | None,
    records_pass: RecordsPass,
    pages: Paging | None,
    guess: _Guess | None,
) -> Written:
    """``write_pass`` of the records, or of the guessed ones (again from the parent's where
    the guess was wrong)."""
    # This process ends with the pass: its items are let go as their pages are written.
    items, out_dir = records_pass.items, records_pass.out_dir
    if guess is None:
        return write_pass(frame, records_pass.records, items, out_dir, pages=pages, release=True)
    try:
        blocks = guess.blocks()
        return write_pass(None, (), items, out_dir, pages=pages, blocks=blocks, release=True)
    except _GuessedWrong:  # raised before any page is written: the items are all here
        return write_pass(None, guess.records(), items, out_dir, pages=pages, release=True)


def _early_child(
    answer: Connection, parents_end: Connection, records_pass: RecordsPass, guess: _Guess
) -> None:
    """The child forked before the records were read: the pass over its guess of them, the
    frame's marks and judges asked for when it writes the pages."""
    parents_end.close()  # the parent's end, inherited: closed, the parent's exit reads as EOF
    # The dataset's size, a guess: it only groups the judgments spooled for the pages.
    pages = Paging(len(records_pass.items or ()), guess.marks)
    _child_pass(answer, None, records_pass, pages, guess)


class _GuessedWrong(Exception):
    """A line spooled is not the record at its place (a key repeats): the pass starts again
    from the parent's records."""


class _Guess:
    """The records guessed before the parent has read them: every line of the judgments file
    that is not blank, in order (what the records are when no key repeats). Each block's
    table is the one the parent's reading parsed, where the parent sent it. The parent's
    records come once it has read every block; the pass goes on from them after the lines
    spooled, where those lines are the first records (a repeated key near the end costs a
    block or two), else it starts again."""

    def __init__(
        self,
        judgments: Path,
        orders: Connection,
        tables: _TableSpool | None = None,
        *,
        block_bytes: int = BLOCK_BYTES,
    ) -> None:
        self._path, self._orders, self._block_bytes = judgments, orders, block_bytes
        self._tables = tables
        self._next: tuple[Any, ...] | None = None  # the parent's next message, when read
        self._records: StoredRecords | None = None
        self._key: tuple[int, int] = (-1, 0)  # the block being parsed: first offset, lines

    def records(self) -> StoredRecords:
        """The parent's records (waiting for them; tables no longer asked for skipped)."""
        while self._records is None:
            kind, *found = self._message()
            if kind == "records":
                self._records = found[0]
        return self._records

    def marks(self) -> tuple[ItemMarks, tuple[str, ...]]:
        """The frame's marks and judges (waiting for them)."""
        self.records()
        kind, marks, judges = self._message()
        assert kind == "marks" and isinstance(marks, ItemMarks)
        return marks, judges

    def _message(self) -> tuple[Any, ...]:
        message, self._next = self._next, None
        return message if message is not None else _order(self._orders)

    def blocks(self) -> Iterator[SeenBlock]:
        """The records as the explorer shows them, block by block (``_GuessedWrong`` where a
        block given was not the records')."""
        offsets: array[int] = array("q")
        done = 0
        parsed = seen_line_blocks(self._lines(offsets), self._parents_table)
        with contextlib.closing(parsed) as guessed:
            for block in guessed:
                yield block
                done = block.first + len(block.query_ids)
                if self._next is not None and self._next[0] != "table":
                    break  # the records, sooner than the file's end: go on from them
        if self._tables is not None:  # read: its disk space goes once the parent's end is shut
            self._tables.close()
        records = self.records()
        if records.offsets[:done] != offsets[:done]:
            raise _GuessedWrong
        for block in seen_blocks(records[done:]):
            block.first += done
            yield block

    def _lines(self, offsets: array[int]) -> Iterator[StoredLines]:
        for lines, line_offsets in file_lines(self._path, self._block_bytes):
            offsets.extend(line_offsets)
            self._key = (line_offsets[0], len(line_offsets))
            yield lines

    def _parents_table(self, lines: StoredLines) -> pa.Table | None:
        """The parent's table of the block ``_lines`` gave last, else None (parsed here): in
        the worker thread that asks for the blocks, one at a time and in order."""
        if self._tables is None or self._next is not None:
            return None
        message = _order(self._orders)
        if message[0] != "table":  # the parent has read every block it shares
            self._next = message
            return None
        _, first, count, at, length = message
        if (first, count) != self._key or not length:  # a block of its own, or none sent
            return None
        return self._tables.read(at, length)


def _order(orders: Connection) -> tuple[Any, ...]:
    """The parent's next message; the parent gone: this process ends (unwinding, so that what
    it wrote goes)."""
    try:
        message: tuple[Any, ...] = orders.recv()
    except EOFError:
        raise SystemExit(1) from None
    return message


def _exit_on_signal(number: int, frame: Any) -> None:
    raise SystemExit(128 + number)


def _sendable(error: BaseException) -> BaseException:
    """The error itself where it pickles, else a RuntimeError with its traceback."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # whatever fails to pickle is described instead
        text = "".join(traceback.format_exception(error))
        return RuntimeError(f"the report's records pass failed:\n{text}")
    return error
