"""The report's pass over the records: the failure appendix and the item explorer from one
reading of the record table, a slice at a time (``Judgments.slices``: a judgments file is read
again, its columns for these only, rather than held whole beside the analysis).

``write_pass`` writes the side files (``failed_records.jsonl`` past ``MAX_FAILURES`` failures,
the explorer's pages under ``report_items/`` past ``PAGED_OVER`` items) complete under
temporary names; ``Written.install`` puts them in place, so that an error anywhere before
report.html leaves the previous report whole (docs/report-scale.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jurybox.analysis import AnalysisFrame
from jurybox.io.atomic import AtomicFile
from jurybox.io.record_table import Judgments
from jurybox.records import Item
from jurybox.reporting.explorer import ExplorerData, paged
from jurybox.reporting.explorer.data import (
    EXPLORER_FIELDS,
    ExplorerRows,
    item_marks,
    shown_block,
)
from jurybox.reporting.explorer.paged import (
    PagedExplorer,
    PageWriter,
    explorer_size,
    install_pages,
    remove_pages,
)
from jurybox.reporting.render.failures import (
    FAILURE_FIELDS,
    FAILURES_FILE,
    FailureDigest,
    failure_line,
    failures_of,
)
from jurybox.reporting.render.html import FULL_CHARS

PASS_FIELDS = tuple(dict.fromkeys((*EXPLORER_FIELDS, *FAILURE_FIELDS)))


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
            self.failures = None
        if self.pages is not None:
            paged.discard_work(self.pages)
            self.pages = None


def write_pass(
    frame: AnalysisFrame | None,
    judgments: Judgments,
    items: Sequence[Item] | None,
    out_dir: Path,
) -> Written:
    """The failure appendix and the item explorer (none without a frame or records), from one
    pass over the records; their side files (every failure past ``MAX_FAILURES``, the
    explorer's pages) written complete under temporary names."""
    out_dir.mkdir(parents=True, exist_ok=True)
    explorer = _explorer(frame, judgments, items, out_dir)
    written = Written(FailureDigest(), None)
    try:
        with AtomicFile(out_dir / FAILURES_FILE) as side:
            first = 0
            for part in judgments.slices(PASS_FIELDS):
                for failed in failures_of(part, first):
                    written.digest.add(failed)
                    side.write(failure_line(failed, text_chars=FULL_CHARS))
                if explorer is not None:
                    explorer.add(shown_block(part))
                first += part.num_rows
            if written.digest.total > len(written.digest.listed):
                written.digest.side_file = FAILURES_FILE
                written.failures = side.finish()
        if isinstance(explorer, PageWriter):
            written.explorer = explorer.finish()
            written.pages = explorer.work
        elif explorer is not None and frame is not None:
            written.explorer = explorer.finish(frame)
    except BaseException:
        if isinstance(explorer, PageWriter):
            explorer.discard()
        written.discard()
        raise
    return written


def _explorer(
    frame: AnalysisFrame | None,
    judgments: Judgments,
    items: Sequence[Item] | None,
    out_dir: Path,
) -> PageWriter | ExplorerRows | None:
    """What the explorer is built with: its rows embedded in report.html, or past
    ``PAGED_OVER`` items its pages (the frame's marks worked out first)."""
    if frame is None or not len(judgments):
        return None
    size = explorer_size(frame.records, items)
    if size <= paged.PAGED_OVER:
        return ExplorerRows(items)
    return PageWriter(items, out_dir, size=size, marks=item_marks(frame), judges=frame.judges)
