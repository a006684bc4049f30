"""Report + tidy frame -> ``PlotSpec`` for every figure (see the policy in ``plots.specs``).

Summary numbers (rates, intervals, means per arm) come from the report; raw points (one score
per response, one pair per item) come from the analysis frame through the analysis helpers, so
nothing here estimates anything. Numbers printed inside figures go through ``view.format``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.model import Report
from jurybox.reporting.plots.bias import (
    agreement_matrix,
    position_bias,
    vendor_bias,
    verbosity,
)
from jurybox.reporting.plots.effects import calibration, dimension_heatmap, treatment_effect
from jurybox.reporting.plots.specs import PlotSpec
from jurybox.reporting.view.report import as_report

PLOT_NAMES = (
    "position_bias",
    "verbosity_scatter",
    "vendor_bias",
    "treatment_effect",
    "dimension_heatmap",
    "agreement_matrix",
    "calibration",
)


def build_plot_specs(
    report: Report | Mapping[str, Any], frame: AnalysisFrame | None
) -> list[PlotSpec]:
    """Every figure of the report, in ``PLOT_NAMES`` order."""
    report = as_report(report)
    return [
        position_bias(report),
        verbosity(report, frame),
        vendor_bias(report, frame),
        treatment_effect(report, frame),
        dimension_heatmap(report, frame),
        agreement_matrix(report),
        calibration(report),
    ]
