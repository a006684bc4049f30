"""Every report file for an already computed report, written atomically into one folder.

``analysis_report.json`` (validated against the published schema first), ``summary_tables.md``,
``plots/<name>.png`` + ``plots/<name>.svg`` for every plot that applies, and ``report.html``;
past ``PAGED_OVER`` items the explorer's rows in ``report_items/`` and, past ``MAX_FAILURES``
failed records, every one of them in ``failed_records.jsonl`` (docs/report-scale.md).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.model import Report
from jurybox.errors import InputError
from jurybox.io.atomic import swap_folder, temp_beside, write_bytes_atomic, write_text_atomic
from jurybox.io.record_table import Judgments, records_table
from jurybox.records import Item, JudgeRecord
from jurybox.reporting.explorer.paged import PAGES_DIR
from jurybox.reporting.plots import PLOT_NAMES, build_plot_specs
from jurybox.reporting.plots.draw import render
from jurybox.reporting.plots.specs import PlotSpec, RenderedPlot
from jurybox.reporting.render.failures import FAILURES_FILE
from jurybox.reporting.render.html import HTML_FILE, render_html
from jurybox.reporting.render.json_report import REPORT_FILE, write_json_report
from jurybox.reporting.render.markdown import MARKDOWN_FILE, render_markdown
from jurybox.reporting.render.records_pass import Written, write_pass
from jurybox.reporting.view.report import as_report

PLOTS_DIR = "plots"
# The files of a report folder (besides PLOTS_DIR and PAGES_DIR): what ``is_report_folder``
# accepts in one, so that ``analyze`` may replace it whole.
REPORT_FILES = (REPORT_FILE, MARKDOWN_FILE, HTML_FILE, FAILURES_FILE)
_PAGE = re.compile(r"page-\d{4,}\.js")


@dataclass(frozen=True)
class ReportPaths:
    """Where the report files were written."""

    json: Path
    markdown: Path
    html: Path
    plots_dir: Path | None

    def under(self, folder: Path) -> ReportPaths:
        """The same files in ``folder`` (where a report written elsewhere was moved)."""
        return ReportPaths(
            json=folder / self.json.name,
            markdown=folder / self.markdown.name,
            html=folder / self.html.name,
            plots_dir=None if self.plots_dir is None else folder / self.plots_dir.name,
        )

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


def is_report_folder(folder: Path) -> bool:
    """Whether ``folder`` is a jurybox report folder, which ``report_folder`` replaces whole: an
    empty folder, or one holding ``analysis_report.json`` and nothing but what a report is made
    of — ``summary_tables.md``, ``report.html``, ``failed_records.jsonl``, ``plots/`` (only
    ``<plot>.png`` / ``.svg``), ``report_items/`` (only ``page-NNNN.js``) — and the hidden
    temporary names jurybox gives those while writing them. A symlink, or any other file,
    makes it someone else's folder."""
    entries = list(folder.iterdir())
    if not entries:
        return True
    if not (folder / REPORT_FILE).is_file():
        return False
    return all(_is_report_entry(entry) for entry in entries)


def _is_report_entry(entry: Path) -> bool:
    name = entry.name
    if entry.is_symlink():
        return False
    if _is_temporary(name, (*REPORT_FILES, PLOTS_DIR, PAGES_DIR)):
        return True
    if entry.is_file():
        return name in REPORT_FILES
    return entry.is_dir() and name in (PLOTS_DIR, PAGES_DIR) and _is_report_subfolder(entry)


def _is_report_subfolder(folder: Path) -> bool:
    """``plots/`` holding plot images only, ``report_items/`` explorer pages only."""
    plot_files = {f"{plot}.{suffix}" for plot in PLOT_NAMES for suffix in ("png", "svg")}
    for child in folder.iterdir():
        if child.is_symlink() or not child.is_file():
            return False
        if folder.name == PLOTS_DIR:
            known = child.name in plot_files
        else:
            known = _PAGE.fullmatch(child.name) is not None
        if not known and not _is_temporary(child.name, tuple(plot_files)):
            return False
    return True


def _is_temporary(name: str, of: Sequence[str]) -> bool:
    """A hidden name jurybox writes ``of`` one of these under (``.report.html.<hex>.tmp``)."""
    return name.startswith(".") and any(name[1:].startswith(f"{known}.") for known in of)


@contextlib.contextmanager
def report_folder(out_dir: Path) -> Iterator[Path]:
    """A new folder beside ``out_dir`` to write a whole report into; when the block ends
    without an error it takes ``out_dir``'s place in one rename (``io.atomic.swap_folder``) and
    the old report is removed, so a reader (or a killed ``analyze``) finds the old report or
    the new one, never a mix. On an error it is removed and ``out_dir`` is left as it was.

    Raises:
        InputError: ``out_dir`` is a file, or a folder that is not a report folder
            (``is_report_folder``): it is never replaced or removed.
    """
    target = Path(os.path.realpath(out_dir))  # a symlink to the folder stays one
    _check_report_folder(target, out_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        if _STAGING.fullmatch(stale.name.removeprefix(f".{target.name}")) and stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)  # left by a killed analyze
    staging = temp_beside(target)
    staging.mkdir()
    try:
        yield staging
        _check_report_folder(target, out_dir)  # nothing foreign came in meanwhile
        swap_folder(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # after the swap: the old report


_STAGING = re.compile(r"\.[0-9a-f]{12}\.tmp")


def _check_report_folder(target: Path, given: Path) -> None:
    if target.exists() and not target.is_dir():
        raise InputError("is a file, not a folder", path=str(given), field="--out")
    if target.is_dir() and not is_report_folder(target):
        raise InputError(
            "holds files that are not part of a jurybox report; a report is written into a new "
            "or empty folder, or over an earlier report, which it replaces whole: choose "
            "another folder (e.g. a `report` folder inside it)",
            path=str(given),
            field="--out",
        )


def write_reports(
    report: Report | Mapping[str, Any],
    frame: AnalysisFrame | None,
    out_dir: Path,
    *,
    plots: bool | Collection[str] = True,
    records: Judgments | Sequence[JudgeRecord] = (),
    source: str = "judgments.jsonl",
    items: Sequence[Item] | None = None,
    written: Written | None = None,
) -> ReportPaths:
    """Write the JSON report (schema-validated first), the Markdown tables, the plots and the
    HTML page into ``out_dir``. ``plots``: all families (True), none (False, no image written)
    or the named ones (``PLOT_NAMES``). ``records`` (a judgments file as ``read_judgments``
    read it, or records held in memory) feed the HTML appendix of failed judgments and, with
    ``items`` (questions and responses), the item explorer; or ``written``, that pass over
    them into ``out_dir`` made already (``write_pass``)."""
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
    if written is None:
        judgments = records if isinstance(records, Judgments) else records_table(records)
        written = write_pass(frame, judgments, items, out_dir)
    try:
        page = render_html(
            report,
            plots=rendered,
            skipped_plots=[spec for spec in specs if not spec.drawn],
            failed=written.digest,
            source=source,
            explorer=written.explorer,
        )
        written.install(out_dir)  # the side files, complete, then report.html
    finally:
        written.discard()  # what was not installed
    html_path = write_text_atomic(out_dir / HTML_FILE, page)
    return ReportPaths(json=json_path, markdown=md_path, html=html_path, plots_dir=plots_dir)
