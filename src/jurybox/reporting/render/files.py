"""Every report file for an already computed report, written atomically into one folder.

``analysis_report.json`` (validated against the published schema first), ``summary_tables.md``,
``plots/<name>.png`` + ``plots/<name>.svg`` for every plot that applies, and ``report.html``;
past ``PAGED_OVER`` items the explorer's rows in ``report_items/`` and, past ``MAX_FAILURES``
failed records, every one of them in ``failed_records.jsonl`` (docs/report-scale.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.model import Report
from jurybox.io.atomic import write_bytes_atomic, write_text_atomic
from jurybox.records import Item, JudgeRecord
from jurybox.reporting.plots import PLOT_NAMES, build_plot_specs
from jurybox.reporting.plots.draw import render
from jurybox.reporting.plots.specs import PlotSpec, RenderedPlot
from jurybox.reporting.render.html import HTML_FILE, render_html
from jurybox.reporting.render.json_report import write_json_report
from jurybox.reporting.render.markdown import MARKDOWN_FILE, render_markdown
from jurybox.reporting.render.records_pass import RecordsPass
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
    records_pass: RecordsPass | None = None,
) -> ReportPaths:
    """Write the JSON report (schema-validated first), the Markdown tables, the plots and the
    HTML page into ``out_dir``. ``plots``: all families (True), none (False, no image written)
    or the named ones (``PLOT_NAMES``). ``records`` feed the HTML appendix of failed judgments
    and, with ``items`` (questions and responses), the item explorer; or ``records_pass``, the
    pass over them into ``out_dir`` already started beside the analysis (``records`` and
    ``items`` are then its own)."""
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
    owned = records_pass is None
    if records_pass is None:
        records_pass = RecordsPass(records, items, out_dir)
    elif records_pass.out_dir != out_dir:
        raise ValueError(f"the records pass writes into {records_pass.out_dir}, not {out_dir}")
    try:
        written = records_pass.written(frame)
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
        if owned:
            records_pass.close()
    html_path = write_text_atomic(out_dir / HTML_FILE, page)
    return ReportPaths(json=json_path, markdown=md_path, html=html_path, plots_dir=plots_dir)
