"""Reports people read: analysis_report.json, summary_tables.md, plots/ and report.html.

Public API:

- ``analyze_to_dir(judgments, *, human, dataset, out_dir, console=None, plots=True)``: read the
  records, analyse them, write every file, print the headline figures; returns ``ReportPaths``.
- ``write_reports(report, frame, out_dir, *, plots=True, records=(), source=...)``: the files
  for an already computed report.
- ``render_markdown`` / ``render_html`` / ``render_plots``: the same, as text or PNG bytes.
- ``validate_report`` / ``report_schema``: the published JSON Schema check.

This package only formats: numbers are rounded here (``_format``) and nowhere else, and every
statistic comes from ``jurybox.analysis``.
"""

from __future__ import annotations

from jurybox.reporting.analyze import (
    ReportPaths,
    analyze_to_dir,
    build_report,
    render_plots,
    write_reports,
)
from jurybox.reporting.html import render_html
from jurybox.reporting.json_report import ReportSchemaError, report_schema, validate_report
from jurybox.reporting.markdown import render_markdown
from jurybox.reporting.plot_data import PLOT_NAMES

__all__ = [
    "PLOT_NAMES",
    "ReportPaths",
    "ReportSchemaError",
    "analyze_to_dir",
    "build_report",
    "render_html",
    "render_markdown",
    "render_plots",
    "report_schema",
    "validate_report",
    "write_reports",
]
