"""Helpers shared by the plot-data modules."""

from __future__ import annotations

from collections.abc import Sequence

from jurybox.analysis.model import Metric, Skipped
from jurybox.reporting.plots.specs import BarSeries
from jurybox.reporting.view.tables import interval_of, skip_reason


def number(value: object) -> float | None:
    """A report number as a float, None when absent."""
    return float(value) if isinstance(value, int | float) else None


def value_of(metric: Metric | Skipped | None) -> float | None:
    """A metric's headline value, None when absent, skipped or not computed."""
    return number(metric.value) if isinstance(metric, Metric) else None


def why(node: object, default: str) -> str:
    """The skip reason of a report node, or ``default``."""
    return skip_reason(node) or default


def interval_series(
    label: str,
    metrics: Sequence[Metric | Skipped | None],
    *,
    annotations: Sequence[str] | None = None,
) -> BarSeries:
    """One bar series of report metrics, each bar with its ``ci_low``–``ci_high`` interval."""
    ends = [interval_of(m) if isinstance(m, Metric) else (None, None) for m in metrics]
    return BarSeries(
        label,
        [value_of(m) for m in metrics],
        [number(low) for low, _ in ends],
        [number(high) for _, high in ends],
        annotations,
    )
