"""Helpers shared by the plot-data modules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.reporting.plots.specs import BarSeries
from jurybox.reporting.view.tables import get, skip_reason

Json = Mapping[str, Any]


def value_of(metric: Any, key: str = "value") -> float | None:
    """A number from a report metric, None when absent or not a number."""
    value = get(metric, key)
    return float(value) if isinstance(value, int | float) else None


def why(node: Any, default: str) -> str:
    """The skip reason of a report node, or ``default``."""
    return skip_reason(node) or default


def interval_series(
    label: str,
    metrics: Sequence[Any],
    *,
    key: str = "value",
    annotations: Sequence[str] | None = None,
) -> BarSeries:
    """One bar series of report metrics, each bar with its ``ci_low``–``ci_high`` interval."""
    return BarSeries(
        label,
        [value_of(m, key) for m in metrics],
        [value_of(m, "ci_low") for m in metrics],
        [value_of(m, "ci_high") for m in metrics],
        annotations,
    )
