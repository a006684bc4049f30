"""Reports people read: analysis_report.json, summary_tables.md, plots/ and report.html.

Public API:

- ``write_reports(report, frame, out_dir, *, plots=True, records=(), source=..., items=None)``:
  the files for an already computed report (records and items fill report.html's explorer).
- ``report_folder(out_dir)``: a folder to write a whole report into, swapped in for ``out_dir``
  when complete (``is_report_folder`` says which folders it may replace).
- ``render_markdown`` / ``render_html`` / ``render_plots``: the same, as text or PNG bytes.
- ``validate_report`` / ``report_schema``: the published JSON Schema check.
- ``print_summary``: the terminal summary ``jurybox analyze`` prints.

Sub-packages: ``view`` (formatting and the tables every renderer draws), ``sections`` (one
module per report family, listed once in ``sections.FAMILIES``), ``explorer`` (report.html's
item explorer: rows, deep links ``items_href``, the inline script), ``plots`` (plot data, specs and
the matplotlib drawing) and ``render`` (HTML, Markdown, terminal, JSON and the files).

This package only formats: numbers are rounded here (``view.format``) and nowhere else, and every
statistic comes from ``jurybox.analysis``.
"""

from __future__ import annotations

from jurybox.reporting.plots import PLOT_NAMES
from jurybox.reporting.render.files import (
    ReportPaths,
    is_report_folder,
    render_plots,
    report_folder,
    write_reports,
)
from jurybox.reporting.render.html import render_html
from jurybox.reporting.render.json_report import ReportSchemaError, report_schema, validate_report
from jurybox.reporting.render.markdown import render_markdown
from jurybox.reporting.render.terminal import print_summary

__all__ = [
    "PLOT_NAMES",
    "ReportPaths",
    "ReportSchemaError",
    "is_report_folder",
    "print_summary",
    "render_html",
    "render_markdown",
    "render_plots",
    "report_folder",
    "report_schema",
    "validate_report",
    "write_reports",
]
