"""The rich summary ``jurybox analyze`` prints: the per-judge answer first, then headline figures.

Every judge's line is shown (level and one-line reason), then the per-judge table: accuracy with
its interval (failures counted), swap consistency both ways, failure rate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from jurybox.analysis.model import Metric, Report, Skipped
from jurybox.analysis.model.bias import PositionJudge
from jurybox.analysis.model.effects import PairedTests
from jurybox.reporting.sections import LEVEL_TITLES, judge_verdict_table, non_finite_line
from jurybox.reporting.view.format import (
    MISSING,
    few_items,
    fmt_count,
    fmt_p,
    fmt_rate,
    fmt_score,
)
from jurybox.reporting.view.report import as_report
from jurybox.reporting.view.tables import TOTAL, metric_items, present

if TYPE_CHECKING:
    from jurybox.reporting.render.files import ReportPaths

_STYLES = {
    "trusted": "bold green",
    "use_with_caution": "bold yellow",
    "not_trusted": "bold red",
    "insufficient_evidence": "bold",
}
_CAPTION = (
    "swap: same verdict in both orders; 1st pos.: share of decisive verdicts for the response "
    "shown first; accuracy: vs gold, pooled over orders; κ human: Cohen's κ with human "
    "preferences; win rate: treatment over control; Δ total: treatment − control mean total."
)


def _rate(metric: Metric | Skipped | None, counted: Any = None, *, counts: bool = False) -> str:
    """A share; with ``counts``, followed by ``(counted/n)``; `` (<30 items)`` on few items."""
    if not isinstance(metric, Metric) or metric.value is None:
        return MISSING
    text = fmt_rate(metric.value)
    text = f"{text} ({fmt_count(counted, metric.n)})" if counts else text
    return text + few_items(metric_items(metric))


def _position(r: Report, j: str) -> PositionJudge | None:
    judges = r.bias.position.judges if r.bias.position else None
    return (judges or {}).get(j)


def _swap(r: Report, j: str) -> str:
    entry = _position(r, j)
    swap = present(entry.swap_consistency) if entry else None
    return _rate(swap, swap.consistent if swap else None, counts=True)


def _first(r: Report, j: str) -> str:
    entry = _position(r, j)
    return _rate(entry.first_position_rate if entry else None)


def _accuracy(r: Report, j: str) -> str:
    entry = (r.accuracy_vs_gold.judges or {}).get(j)
    pooled = entry.pooled if entry else None
    return _rate(pooled, pooled.correct if pooled else None, counts=True)


def _kappa(r: Report, j: str) -> str:
    prefs = r.human_calibration.preferences
    entry = (prefs.judges or {}).get(j) if prefs else None
    return _rate(entry.pooled if entry else None)


def _win(r: Report, j: str) -> str:
    prefs = r.effects.preferences
    return _rate((prefs.judges or {}).get(j) if prefs else None)


def _delta(r: Report, j: str) -> str:
    scores = r.effects.scores
    test = present((scores.per_judge or {}).get(j)) if scores else None
    return fmt_score(test.mean_difference if test else None)


# Headline columns: (title, getter(report, judge) -> formatted text); see _CAPTION.
_COLUMNS: tuple[tuple[str, Callable[[Report, str], str]], ...] = (
    ("swap", _swap),
    ("1st pos.", _first),
    ("accuracy", _accuracy),
    ("κ human", _kappa),
    ("win rate", _win),
    ("Δ total", _delta),
)


def verdict_panel(report: Report) -> Panel:
    """The panel's level, the derived panel line, and every judge's level and one-line reason."""
    verdict = report.verdict
    level = verdict.level
    lines = [f"[bold]{escape(verdict.line)}[/]"]
    lines.append(f"[{_STYLES.get(level, 'bold')}]{LEVEL_TITLES.get(level, level)}[/]")
    for judge, entry in verdict.judges.items():
        style = _STYLES.get(entry.level, "bold")
        said = entry.level.replace("_", " ")
        lines.append(f"• {escape(judge)}: [{style}]{said}[/] — {escape(entry.reason)}")
    return Panel("\n".join(lines), title="Can these judges be trusted?", expand=False)


# The per-judge table without its reason column (the panel above gives every judge's reason).
_TRUST_HEADERS = ("judge", "level", "accuracy [95% CI]", "parsed only", "swap", "failed")


def trust_table(report: Report) -> Table:
    """The per-judge answer (``sections.judge_verdict_table``) as a rich table."""
    source = judge_verdict_table(report)
    table = Table(
        title=source.title,
        caption="accuracy: vs gold, failed calls counted wrong; parsed only: over parsed "
        "verdicts; swap: same verdict in both orders, failures counted as inconsistent / over "
        "pairs parsed in both orders; failed: share of calls without a verdict.",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
        pad_edge=False,
    )
    rows = [[str(cell) for index, cell in enumerate(row) if index != 2] for row in source.rows]
    for index, header in enumerate(_TRUST_HEADERS):
        if index < 2:  # who and what level are never cut: the figures wrap instead
            widest = max([len(header), *(len(row[index]) for row in rows)])
            table.add_column(header, no_wrap=True, min_width=widest)
        else:
            table.add_column(header, justify="right", overflow="fold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table


def judges_table(report: Report) -> Table:
    """One row per judge, only the headline columns that have a value for some judge."""
    judges = [j.name for j in report.summary.judges]
    failures = report.summary.failures
    columns = [(t, fn) for t, fn in _COLUMNS if any(fn(report, j) != MISSING for j in judges)]
    table = Table(
        title="Headline figures per judge",
        caption=_CAPTION,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        pad_edge=False,
    )
    table.add_column("judge", no_wrap=True)
    table.add_column("failed", justify="right", no_wrap=True)
    for title, _ in columns:
        table.add_column(title, justify="right", no_wrap=True)
    for judge in judges:
        info = failures.get(judge)
        failed = fmt_count(info.n_failed, info.n_records) if info else MISSING
        table.add_row(judge, failed, *[fn(report, judge) for _, fn in columns])
    return table


def headline_lines(report: Report) -> list[str]:
    lines = []
    agreement = report.agreement
    alpha = agreement.preferences.krippendorff_alpha if agreement.preferences else None
    if alpha is not None and alpha.value is not None:
        lines.append(
            f"Agreement between judges (Krippendorff's α, preferences): {fmt_rate(alpha.value)}"
        )
    dims = (agreement.scores.dimensions if agreement.scores else None) or {}
    total_alpha = dims[TOTAL].krippendorff_alpha if TOTAL in dims else None
    if total_alpha is not None and total_alpha.value is not None:
        lines.append(f"Agreement between judges (α, total scores): {_rate(total_alpha)}")
    total = _total_effect(report)
    if total is not None and total.mean_difference is not None:
        lines.append(
            f"Treatment effect on the total: {fmt_score(total.mean_difference)} points "
            f"(Wilcoxon p = {fmt_p(total.wilcoxon.p_value)}, n = {total.n} items)"
            + few_items(total.n)
        )
    summary = report.summary
    excluded = f"Excluded from the metrics: {summary.excluded.total} of {summary.n_records} records"
    bad = non_finite_line(summary)
    lines.append(excluded if bad is None else f"{excluded}, and {bad}")
    return lines


def _total_effect(report: Report) -> PairedTests | None:
    scores = report.effects.scores
    overall = scores.overall if scores else None
    return present(overall.dimensions.get(TOTAL)) if overall else None


def print_summary(report: Report | Mapping[str, Any], paths: ReportPaths, console: Console) -> None:
    """Verdict, per-judge headline figures, a few global figures and where the files are."""
    report = as_report(report)
    console.print(verdict_panel(report))
    console.print(trust_table(report))
    console.print(judges_table(report))
    for line in headline_lines(report):
        console.print(line)
    console.print(f"Report: {paths.html}")
    console.print(f"Tables: {paths.markdown}   JSON: {paths.json}", highlight=False)
    if paths.plots_dir is not None:
        console.print(f"Plots: {paths.plots_dir}/ ({len(paths.plots)} figures, PNG and SVG)")
