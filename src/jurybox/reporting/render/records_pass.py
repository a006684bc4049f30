"""The report's records pass: the failure appendix and the item explorer from one pass over the
records, and, at scale, that pass run in a second process while the analysis and the plots run.

``write_pass`` reads every record once and writes the side files (``failed_records.jsonl``, the
explorer's pages under ``report_items/``) under temporary names; ``Written.install`` puts them in
place, so that an error anywhere before report.html leaves the previous report whole.

``RecordsPass`` runs it in a forked process as soon as the analysis frame exists (it needs the
frame's flags and labels only, not the analysis): at a million records the pass is a minute of
CPU, which the second core spends beside the analysis and the plots instead of after them. The
child writes the temporary files and sends back what report.html embeds (the appendix's records,
the explorer's index); only the parent puts files in place (docs/report-scale.md).
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import signal
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any

from jurybox.analysis import AnalysisFrame
from jurybox.io.judgments import StoredRecords
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
from jurybox.reporting.explorer.stored import seen_blocks
from jurybox.reporting.render.html import FULL_CHARS, FailedRecord, FailureDigest, is_failed
from jurybox.reporting.render.sidefiles import FAILURES_FILE, AtomicLines, failure_line

# Records from which the pass runs in a second process (below, it takes a second or less).
CONCURRENT_OVER = 20_000


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
    explorer has and their flags and labels."""

    size: int
    marks: ItemMarks


def paging(
    frame: AnalysisFrame | None, records: Sequence[JudgeRecord], items: Sequence[Item] | None
) -> Paging | None:
    """The explorer's ``Paging`` when it is paged (past ``PAGED_OVER`` items), else None."""
    if frame is None or not records:
        return None
    size = explorer_size(frame, items)
    return Paging(size, item_marks(frame)) if size > paged.PAGED_OVER else None


def write_pass(
    frame: AnalysisFrame | None,
    records: Sequence[JudgeRecord],
    items: Sequence[Item] | None,
    out_dir: Path,
    *,
    pages: Paging | None = None,
) -> Written:
    """The failure appendix and the item explorer, from one pass over the records when the
    explorer is paged (a million records are read once, not twice); their side files (every
    failure past ``MAX_FAILURES``, the explorer's pages) written complete under temporary
    names. ``pages``: ``paging``'s answer, when already asked."""
    if pages is None:
        pages = paging(frame, records, items)
    pager = None
    if frame is not None and pages is not None:
        pager = PageWriter(frame, items, out_dir, marks=pages.marks, size=pages.size)
    written = Written(FailureDigest(), None)
    try:
        with AtomicLines(out_dir / FAILURES_FILE) as side:
            _read_records(records, pager, written.digest, side)
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
    side: AtomicLines,
) -> None:
    """Every record once: a failed one to the appendix and the failures file, each to the
    explorer's pages. Records left on disk are read by pyarrow, only what the pass shows
    (``seen_blocks``: the same as each record's, a fifth of the CPU of parsing each line)."""
    if pager is not None and isinstance(records, StoredRecords):
        for block in seen_blocks(records):
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
    """The records pass of one report, started in a forked process once the analysis frame
    exists (``start``) or run in this one when ``written`` is asked for (few records, or no
    ``fork`` on this platform). Use it as a context manager: leaving the block ends a child
    still running and removes what it wrote but nobody installed."""

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

    @property
    def records(self) -> Sequence[JudgeRecord]:
        """The records as the pass reads them: a list up to ``held`` records on disk."""
        records = self._records
        if isinstance(records, StoredRecords) and len(records) <= self._held:
            return list(records)
        return records

    def start(self, frame: AnalysisFrame) -> None:
        """Fork the pass over ``frame`` (when worth it): it runs beside what this process
        does next. Nothing the parent does to the frame afterwards reaches the child."""
        if self._frame is not None or not _forks() or len(self._records) < CONCURRENT_OVER:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        # Here, not in the child: the tables they read (order pairs, consolidated verdicts)
        # are the analysis's own, kept in the frame; the child would build its own copies.
        pages = paging(frame, self._records, self.items)
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        sys.stdout.flush()  # a forked child flushes what it inherited: nothing, so
        sys.stderr.flush()
        child = context.Process(
            target=_child_pass,
            args=(send, frame, self, pages),
            name="jurybox-records-pass",
            daemon=True,
        )
        child.start()
        send.close()
        self._frame, self._answer = frame, _Answer(receive, child)

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


def _forks() -> bool:
    """Whether a child can be forked safely: Linux (macOS's fork is unsafe with threads)."""
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def _child_pass(
    answer: Connection, frame: AnalysisFrame, records_pass: RecordsPass, pages: Paging | None
) -> None:
    """The forked process: the pass, its result (or its error) sent back to the parent."""
    # Everything inherited is left out of the GC's passes for good: walking it would also copy
    # the parent's memory page by page into this process.
    gc.freeze()
    # Ended by the parent (its own error): unwind, so that the temporary files go too.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        written = write_pass(
            frame, records_pass.records, records_pass.items, records_pass.out_dir, pages=pages
        )
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


def _exit_on_signal(number: int, frame: Any) -> None:
    raise SystemExit(128 + number)


def _sendable(error: BaseException) -> BaseException:
    """The error itself where it pickles, else a RuntimeError with its traceback."""
    import pickle  # noqa: PLC0415  (only on an error)

    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # whatever fails to pickle is described instead
        text = "".join(traceback.format_exception(error))
        return RuntimeError(f"the report's records pass failed:\n{text}")
    return error
