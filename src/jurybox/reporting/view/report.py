"""The one door from the analysis's output to the typed ``Report`` every reader takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.analysis.model import Report


def as_report(report: Report | Mapping[str, Any]) -> Report:
    """``report`` as a ``Report``; a report dict (what the analysis returns until it builds the
    model itself) is validated into one. Transitional: public entry points call it once."""
    return report if isinstance(report, Report) else Report.model_validate(report)
