"""Renderers: report.html, summary_tables.md, the terminal summary and analysis_report.json."""
