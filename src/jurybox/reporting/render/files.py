"""Every report file for an already computed report, written atomically into one folder.

``analysis_report.json`` (validated against the published schema first), ``summary_tables.md``,
``plots/<name>.png`` + ``plots/<name>.svg`` for every plot that applies, and ``report.html``;
past ``PAGED_OVER`` items the explorer's rows in ``report_items/`` and, past ``MAX_FAILURES``
failed records, every one of them in ``failed_records.jsonl`` (docs/report-scale.md).
"""

from __future__ import annotations

import gc
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.model import Report
from jurybox.io.judgments import StoredRecords
from jurybox.records import Item, JudgeRecord
from jurybox.reporting.explorer import ExplorerData, build_explorer, paged
from jurybox.reporting.explorer.paged import (
    PagedExplorer,
    PageWriter,
    explorer_size,
    remove_pages,
)
from jurybox.reporting.explorer.stored import seen_records
from jurybox.reporting.plots import PLOT_NAMES, build_plot_specs
from jurybox.reporting.plots.draw import render
from jurybox.reporting.plots.specs import PlotSpec, RenderedPlot
from jurybox.reporting.render.html import (
    FULL_CHARS,
    HTML_FILE,
    FailedRecord,
    FailureDigest,
    is_failed,
    render_html,
)
from jurybox.reporting.render.json_report import (
    write_bytes_atomic,
    write_json_report,
    write_text_atomic,
)
from jurybox.reporting.render.markdown import MARKDOWN_FILE, render_markdown
from jurybox.reporting.render.sidefiles import FAILURES_FILE, AtomicLines, failure_line
from jurybox.reporting.view.report import as_report

PLOTS_DIR = "plots"


@dataclass(frozen=True)
class ReportPaths:
    """Where the report files were written."""

    json: Path
    markdown: Path
    html: Path
    plots_dir: Path | None

    @property
    def plots(self) -> tuple[Path, ...]:
        """The PNG files, in the report's order (empty when plots were not requested)."""
        return self._files("png")

    @property
    def svgs(self) -> tuple[Path, ...]:
        """The SVG files beside the PNGs, in the same order."""
        return self._files("svg")

    def _files(self, suffix: str) -> tuple[Path, ...]:
        if self.plots_dir is None:
            return ()
        found = (self.plots_dir / f"{name}.{suffix}" for name in PLOT_NAMES)
        return tuple(path for path in found if path.exists())


def plot_names(plots: bool | Collection[str]) -> tuple[str, ...]:
    """The plot families asked for: all (True), none (False) or the named ones, in report
    order; an unknown name is an error that lists the known ones."""
    if isinstance(plots, bool):
        return PLOT_NAMES if plots else ()
    unknown = sorted(set(plots) - set(PLOT_NAMES))
    if unknown:
        raise ValueError(f"unknown plot {', '.join(unknown)}; known: {', '.join(PLOT_NAMES)}")
    return tuple(name for name in PLOT_NAMES if name in plots)


def plot_specs(
    report: Report | Mapping[str, Any],
    frame: AnalysisFrame | None,
    plots: bool | Collection[str] = True,
) -> list[PlotSpec]:
    """The specs of the plots asked for, drawn or not (a spec that does not apply says why)."""
    names = plot_names(plots)
    if not names:
        return []
    return [spec for spec in build_plot_specs(report, frame) if spec.name in names]


def render_plots(
    report: Report | Mapping[str, Any],
    frame: AnalysisFrame | None,
    plots: bool | Collection[str] = True,
) -> list[RenderedPlot]:
    """Every figure that applies, as PNG bytes and SVG text (nothing written)."""
    return [render(spec) for spec in plot_specs(report, frame, plots) if spec.drawn]


def _write_plots(plots_dir: Path, rendered: Sequence[RenderedPlot]) -> None:
    """Write each figure as PNG and SVG; remove the files of plots that no longer apply, so the
    folder never shows a figure the new report does not."""
    for plot in rendered:
        write_bytes_atomic(plots_dir / plot.spec.filename, plot.png)
        write_bytes_atomic(plots_dir / plot.spec.svg_filename, plot.svg.encode("utf-8"))
    drawn = {plot.spec.name for plot in rendered}
    for name in set(PLOT_NAMES) - drawn:
        for suffix in ("png", "svg"):
            (plots_dir / f"{name}.{suffix}").unlink(missing_ok=True)


def write_reports(
    report: Report | Mapping[str, Any],
    frame: AnalysisFrame | None,
    out_dir: Path,
    *,
    plots: bool | Collection[str] = True,
    records: Sequence[JudgeRecord] = (),
    source: str = "judgments.jsonl",
    items: Sequence[Item] | None = None,
) -> ReportPaths:
    """Write the JSON report (schema-validated first), the Markdown tables, the plots and the
    HTML page into ``out_dir``. ``plots``: all families (True), none (False, no image written)
    or the named ones (``PLOT_NAMES``). ``records`` feed the HTML appendix of failed judgments
    and, with ``items`` (questions and responses), the item explorer."""
    out_dir = Path(out_dir)
    names = plot_names(plots)  # an unknown name fails before anything is written
    json_path = write_json_report(report, out_dir)
    report = as_report(report)
    specs = plot_specs(report, frame, names)
    rendered = [render(spec) for spec in specs if spec.drawn]
    plots_dir = out_dir / PLOTS_DIR if names else None
    if plots_dir is not None:
        _write_plots(plots_dir, rendered)
    markdown = render_markdown(report, plots=specs, source=source)
    md_path = write_text_atomic(out_dir / MARKDOWN_FILE, markdown)
    with _alive_left_alone():
        failures, explorer = _records_pass(frame, records, items, out_dir)
    skipped = [spec for spec in specs if not spec.drawn]
    page = render_html(
        report,
        plots=rendered,
        skipped_plots=skipped,
        failed=failures,
        source=source,
        explorer=explorer,
    )
    html_path = write_text_atomic(out_dir / HTML_FILE, page)
    return ReportPaths(json=json_path, markdown=md_path, html=html_path, plots_dir=plots_dir)


@contextmanager
def _alive_left_alone() -> Iterator[None]:
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


def _records_pass(
    frame: AnalysisFrame | None,
    records: Sequence[JudgeRecord],
    items: Sequence[Item] | None,
    out_dir: Path,
) -> tuple[FailureDigest, ExplorerData | PagedExplorer | None]:
    """The failure appendix and the item explorer, from one pass over the records when the
    explorer is paged (a million records are read once, not twice). Their side files (every
    failure past ``MAX_FAILURES``, the explorer's pages) are put in place only when complete;
    side files of an earlier report that this one has not are removed."""
    pager = None
    if frame is not None and records and explorer_size(frame, items) > paged.PAGED_OVER:
        pager = PageWriter(frame, items, out_dir)
    digest = FailureDigest()
    try:
        with AtomicLines(out_dir / FAILURES_FILE) as side:
            _read_records(records, pager, digest, side)
            if digest.total > len(digest.listed):
                digest.side_file = side.commit().name
            else:
                (out_dir / FAILURES_FILE).unlink(missing_ok=True)
        if pager is not None:
            explorer: ExplorerData | PagedExplorer | None = pager.finish()
            pager.install()
            return digest, explorer
    except BaseException:
        if pager is not None:
            pager.discard()
        raise
    remove_pages(out_dir)
    explorer = build_explorer(frame, records, items) if frame is not None and records else None
    return digest, explorer


def _read_records(
    records: Sequence[JudgeRecord],
    pager: PageWriter | None,
    digest: FailureDigest,
    side: AtomicLines,
) -> None:
    """Every record once: a failed one to the appendix and the failures file, each to the
    explorer's pages. Records left on disk are read by pyarrow, only what the pass shows
    (``seen_records``: the same as each record's, a fifth of the CPU of parsing each line)."""
    if pager is not None and isinstance(records, StoredRecords):
        for line, seen in enumerate(seen_records(records), start=1):
            if seen.failed is not None:
                digest.add(FailedRecord(line, seen.failed))
                side.write(failure_line(line, seen.failed, text_chars=FULL_CHARS))
            pager.add_shown(seen.query_id, seen.judge, seen.shown)
        return
    for line, record in enumerate(records, start=1):
        if is_failed(record):
            digest.add(FailedRecord(line, record))
            side.write(failure_line(line, record, text_chars=FULL_CHARS))
        if pager is not None:
            pager.add(record)
