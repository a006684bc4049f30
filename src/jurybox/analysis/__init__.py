"""Judgments -> tidy frame -> every metric family -> one typed ``Report``.

Public API:

- ``analyze_records(records, *, human=None, items=None, options=None) -> Report``: the typed
  report (models in ``jurybox.analysis.model``; JSON Schema generated from them:
  ``report_schema()``; ``analysis_report.json`` is ``report.model_dump(mode="json")``).
- ``build_frame(...) -> AnalysisFrame`` and ``analyze_frame(frame, options) -> Report``: the
  same in two steps, for callers that also want the tidy tables (plots).
- ``import_verdicts(kind, path, out_path, mapping=None) -> int`` and ``load_imported(out_path)``:
  existing verdict files (LLMBar, PandaLM, JudgeBench, generic tables) as jurybox records plus
  a companion items file carrying the human gold.
- ``AnalysisOptions`` / ``TrustThresholds``: knobs and trust thresholds.
"""

from __future__ import annotations

from jurybox.analysis._common import TOTAL
from jurybox.analysis.frame import AnalysisFrame, build_frame
from jurybox.analysis.labels import HumanLabels
from jurybox.analysis.model import Report
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.report import (
    FAMILIES,
    REPORT_SCHEMA_VERSION,
    analyze_frame,
    analyze_records,
    report_schema,
)
from jurybox.io.verdicts import (
    KINDS,
    companion_items_path,
    import_verdicts,
    load_imported,
    read_items,
)
from jurybox.thresholds import TrustThresholds

__all__ = [
    "FAMILIES",
    "KINDS",
    "REPORT_SCHEMA_VERSION",
    "TOTAL",
    "AnalysisFrame",
    "AnalysisOptions",
    "HumanLabels",
    "Report",
    "TrustThresholds",
    "analyze_frame",
    "analyze_records",
    "build_frame",
    "companion_items_path",
    "import_verdicts",
    "load_imported",
    "read_items",
    "report_schema",
]
