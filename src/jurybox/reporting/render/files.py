"""Every report file for an already computed report, written atomically into one folder.

``analysis_report.json`` (validated against the published schema first), ``summary_tables.md``,
``plots/*.png`` and ``report.html``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.model import Report
from jurybox.records import Item, JudgeRecord
from jurybox.reporting.explorer import build_explorer
from jurybox.reporting.plots import PLOT_NAMES, build_plot_specs
from jurybox.reporting.plots.draw import render_png
from jurybox.reporting.plots.specs import RenderedPlot
from jurybox.reporting.render.html import HTML_FILE, failed_records, render_html
from jurybox.reporting.render.json_report import (
    write_bytes_atomic,
    write_json_report,
    write_text_atomic,
)
from jurybox.reporting.render.markdown import MARKDOWN_FILE, render_markdown
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
        if self.plots_dir is None:
            return ()
        found = (self.plots_dir / f"{name}.png" for name in PLOT_NAMES)
        return tuple(path for path in found if path.exists())


def render_plots(
    report: Report | Mapping[str, Any], frame: AnalysisFrame | None
) -> list[RenderedPlot]:
    """Every figure as PNG bytes (nothing written)."""
    return [RenderedPlot(spec, render_png(spec)) for spec in build_plot_specs(report, frame)]


def write_reports(
    report: Report | Mapping[str, Any],
    frame: AnalysisFrame | None,
    out_dir: Path,
    *,
    plots: bool = True,
    records: Sequence[JudgeRecord] = (),
    source: str = "judgments.jsonl",
    items: Sequence[Item] | None = None,
) -> ReportPaths:
    """Write the JSON report (schema-validated first), the Markdown tables, the plots and the
    HTML page into ``out_dir``. ``records`` feed the HTML appendix of failed judgments and, with
    ``items`` (questions and responses), the item explorer."""
    out_dir = Path(out_dir)
    json_path = write_json_report(report, out_dir)
    report = as_report(report)
    rendered = render_plots(report, frame) if plots else []
    plots_dir = out_dir / PLOTS_DIR if plots else None
    if plots_dir is not None:
        for plot in rendered:
            write_bytes_atomic(plots_dir / plot.spec.filename, plot.png)
    specs = [plot.spec for plot in rendered]
    markdown = render_markdown(report, plots=specs, source=source)
    md_path = write_text_atomic(out_dir / MARKDOWN_FILE, markdown)
    explorer = build_explorer(frame, records, items) if frame is not None and records else None
    page = render_html(
        report,
        plots=rendered,
        failed=failed_records(records),
        source=source,
        explorer=explorer,
    )
    html_path = write_text_atomic(out_dir / HTML_FILE, page)
    return ReportPaths(json=json_path, markdown=md_path, html=html_path, plots_dir=plots_dir)
