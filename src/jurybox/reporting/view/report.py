"""The one door to the typed ``Report`` every reader takes.

The renderers' public entry points accept the ``Report`` the analysis returns, or the same report
as plain JSON data (``json.load`` of an ``analysis_report.json``), which is validated into the
model here, so a saved report can be rendered again without re-running the analysis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.analysis.model import Report


def as_report(report: Report | Mapping[str, Any]) -> Report:
    """``report`` as a ``Report``; report JSON data is validated into one (``ValidationError``
    names the offending path). Public entry points call it once."""
    return report if isinstance(report, Report) else Report.model_validate(report)
