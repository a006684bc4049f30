"""Reports people read: analysis_report.json, summary_tables.md, plots/ and report.html.

Public API:

- ``write_reports(report, frame, out_dir, *, plots=True, records=(), source=...)``: the files
  for an already computed report.
- ``render_markdown`` / ``render_html`` / ``render_plots``: the same, as text or PNG bytes.
- ``validate_report`` / ``report_schema``: the published JSON Schema check.

This package only formats: numbers are rounded here (``_format``) and nowhere else, and every
statistic comes from ``jurybox.analysis``.
"""

from __future__ import annotations

from jurybox.reporting.files import ReportPaths, render_plots, write_reports
from jurybox.reporting.html import render_html
from jurybox.reporting.json_report import ReportSchemaError, report_schema, validate_report
from jurybox.reporting.markdown import render_markdown
from jurybox.reporting.plot_data import PLOT_NAMES

__all__ = [
    "PLOT_NAMES",
    "ReportPaths",
    "ReportSchemaError",
    "render_html",
    "render_markdown",
    "render_plots",
    "report_schema",
    "validate_report",
    "write_reports",
]
