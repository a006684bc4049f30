"""Helpers shared by the plot-data modules."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.model import Metric, Report, Skipped
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


# --- many judges: which ones a figure shows ---------------------------------------------------

MAX_JUDGES = 12
_LEAST_TRUSTED_FIRST = ("not_trusted", "use_with_caution", "insufficient_evidence", "trusted")
JUDGE_CRITERION = "least trusted first, then most judgments, then name"


def judge_order(report: Report) -> list[str]:
    """Every judge the report names, least trusted first, then most judgments, then by name.

    The order a capped figure keeps its judges in: the ones the verdict worries about most, and
    among equals the ones with the most evidence.
    """
    judgments = {j.name: j.n_ok for j in report.summary.judges}
    levels = {name: entry.level for name, entry in report.verdict.judges.items()}
    names = list(dict.fromkeys([*judgments, *levels]))

    def rank(name: str) -> tuple[int, int, str]:
        level = levels.get(name, "trusted")
        return (_LEAST_TRUSTED_FIRST.index(level), -judgments.get(name, 0), name)

    return sorted(names, key=rank)


def top_judges(report: Report, judges: Iterable[str]) -> tuple[list[str], str | None]:
    """At most ``MAX_JUDGES`` of ``judges`` in ``judge_order``, and a note when some are left out.

    Judges the report does not rank (e.g. "panel (majority)") keep their place at the end.
    """
    given = list(dict.fromkeys(judges))
    order = {name: i for i, name in enumerate(judge_order(report))}
    ranked = sorted(given, key=lambda name: order.get(name, len(order)))
    if len(ranked) <= MAX_JUDGES:
        return given, None
    kept = ranked[:MAX_JUDGES]
    note = (
        f"Showing {MAX_JUDGES} of {len(ranked)} judges ({JUDGE_CRITERION}); "
        f"{len(ranked) - MAX_JUDGES} left out: the tables list every judge."
    )
    return kept, note


# --- the instrument's scale -------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreScale:
    """The range a score axis spans, and where it came from (for captions)."""

    low: float
    high: float
    source: str

    @property
    def limits(self) -> tuple[float, float]:
        return (self.low, self.high)


def score_scale(report: Report, frame: AnalysisFrame | None) -> ScoreScale | None:
    """The rubric's declared scale (``options.score_scale``); without one, the whole-number span
    of every score given; None when there is neither."""
    declared = report.options.score_scale
    if declared is not None:
        low, high = declared
        return ScoreScale(float(low), float(high), f"the rubric's scale {low}–{high}")
    if frame is None or frame.scores.empty:
        return None
    span = frame.memo("plots|score_span", lambda: _observed_span(frame.scores["score"]))
    if span is None:
        return None
    low, high = span
    if low == high:
        high = low + 1
    return ScoreScale(
        float(low), float(high), f"the observed span {low}–{high} (no declared scale)"
    )


def _observed_span(scores: pd.Series) -> tuple[int, int] | None:
    """The whole numbers around every score given (None: no score); four figures ask."""
    given = scores.dropna().astype(float)
    if given.empty:
        return None
    return math.floor(given.min()), math.ceil(given.max())
