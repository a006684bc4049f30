"""One module per report section; ``FAMILIES`` lists the report families once, in reading order.

Every builder reads the report defensively: a missing value renders as an em dash, never as an
exception, so an older or partial report still renders. The verdict is rendered separately
(``verdict``), before the sections.
"""

from __future__ import annotations

from typing import Any

from jurybox.analysis.model import Report
from jurybox.reporting.sections.accuracy import ACCURACY
from jurybox.reporting.sections.agreement import AGREEMENT
from jurybox.reporting.sections.benchmarks import benchmarks_section
from jurybox.reporting.sections.bias import BIAS
from jurybox.reporting.sections.effects import EFFECTS
from jurybox.reporting.sections.family import Family, Row
from jurybox.reporting.sections.first_screen import FirstScreen, first_screen
from jurybox.reporting.sections.human import HUMAN_CALIBRATION
from jurybox.reporting.sections.overview import (
    failures_anchor,
    non_finite_line,
    overview_section,
    slug,
)
from jurybox.reporting.sections.panels import PANELS
from jurybox.reporting.sections.reliability import RELIABILITY
from jurybox.reporting.sections.verdict import LEVEL_TITLES, judge_verdict_table, verdict_table
from jurybox.reporting.view.tables import Section

FAMILIES: tuple[Family[Any], ...] = (
    AGREEMENT,
    BIAS,
    EFFECTS,
    RELIABILITY,
    HUMAN_CALIBRATION,
    ACCURACY,
    PANELS,
)
FAMILY_TITLES = {family.key: family.title for family in FAMILIES}


def build_sections(report: Report) -> list[Section]:
    """Every section of the report, in reading order (the verdict is rendered separately)."""
    sections = [overview_section(report), *(family.section(report) for family in FAMILIES)]
    benchmarks = benchmarks_section(report)
    return [*sections, benchmarks] if benchmarks is not None else sections


__all__ = [
    "FAMILIES",
    "FAMILY_TITLES",
    "LEVEL_TITLES",
    "Family",
    "FirstScreen",
    "Row",
    "build_sections",
    "failures_anchor",
    "first_screen",
    "judge_verdict_table",
    "non_finite_line",
    "slug",
    "verdict_table",
]
