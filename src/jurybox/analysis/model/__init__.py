"""The analysis report as typed, frozen pydantic models: one module per family.

``Report`` composes them; ``report_schema()`` is its generated JSON Schema. A metric model per
``jurybox.stats`` result lives in ``metrics``; the key-order rules that keep
``analysis_report.json`` byte-compatible live in ``_base``.
"""

from __future__ import annotations

from jurybox.analysis.model._base import Metric, Model, Section, Skipped
from jurybox.analysis.model.report import GeneratedBy, Options, Report, report_schema

__all__ = [
    "GeneratedBy",
    "Metric",
    "Model",
    "Options",
    "Report",
    "Section",
    "Skipped",
    "report_schema",
]
