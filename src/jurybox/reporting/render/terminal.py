"""The rich summary ``jurybox analyze`` prints: the per-judge answer first, then headline figures.

Every judge's line is shown (level and one-line reason), then the per-judge table: accuracy with
its interval (failures counted), swap consistency both ways, failure rate. A table is drawn only
where it fits the terminal with no word cut (``fit_columns``); else, and off a terminal (a CI
log), each row is one line (``Grid.lines``), left for the viewer to wrap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, ConsoleOptions, JustifyMethod
from rich.markup import escape
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Column, Table

from jurybox.analysis.model import Metric, Report, Skipped
from jurybox.analysis.model.effects import PairedTests
from jurybox.reporting.sections import (
    LEVEL_TITLES,
    first_screen,
    judge_verdict_table,
    non_finite_line,
)
from jurybox.reporting.sections.first_screen import JudgeLine, position_of
from jurybox.reporting.view.format import (
    MISSING,
    few_items,
    fmt_count,
    fmt_p,
    fmt_rate,
    fmt_score,
)
from jurybox.reporting.view.report import as_report
from jurybox.reporting.view.tables import TOTAL, metric_items, of_judge, present

if TYPE_CHECKING:
    from jurybox.reporting.render.files import ReportPaths

_STYLES = {
    "trusted": "bold green",
    "use_with_caution": "bold yellow",
    "not_trusted": "bold red",
    "insufficient_evidence": "bold",
}
_CAPTION = (
    "swap: same verdict in both orders, over pairs parsed in both; 1st pos.: share of decisive "
    "verdicts for the response shown first; accuracy: vs gold, pooled over orders, over parsed "
    "verdicts (the table above also counts failures as wrong); κ human: Cohen's κ with human "
    "preferences; win rate: treatment over control; Δ total: treatment − control mean total."
)


def _rate(metric: Metric | Skipped | None, counted: Any = None, *, counts: bool = False) -> str:
    """A share; with ``counts``, followed by ``(counted/n)``; `` (<30 items)`` on few items."""
    if not isinstance(metric, Metric) or metric.value is None:
        return MISSING
    text = fmt_rate(metric.value)
    text = f"{text} ({fmt_count(counted, metric.n)})" if counts else text
    return text + few_items(metric_items(metric))


def _swap(r: Report, j: str) -> str:
    entry = position_of(r, j)
    swap = present(entry.swap_consistency) if entry else None
    return _rate(swap, swap.consistent if swap else None, counts=True)


def _first(r: Report, j: str) -> str:
    entry = position_of(r, j)
    return _rate(entry.first_position_rate if entry else None)


def _accuracy(r: Report, j: str) -> str:
    entry = of_judge(r.accuracy_vs_gold.judges, j)
    pooled = entry.pooled if entry else None
    return _rate(pooled, pooled.correct if pooled else None, counts=True)


def _kappa(r: Report, j: str) -> str:
    prefs = r.human_calibration.preferences
    entry = of_judge(prefs.judges, j) if prefs else None
    return _rate(entry.pooled if entry else None)


def _win(r: Report, j: str) -> str:
    prefs = r.effects.preferences
    return _rate(of_judge(prefs.judges, j) if prefs else None)


def _delta(r: Report, j: str) -> str:
    scores = r.effects.scores
    test = present(of_judge(scores.per_judge, j)) if scores else None
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
    """What was compared, the panel's level and line, the result, what the data lacks, and
    every judge's level with its defining finding first (``sections.first_screen``)."""
    verdict = report.verdict
    screen = first_screen(report)
    level = verdict.level
    lines = [escape(screen.compared), f"[bold]{escape(verdict.line)}[/]"]
    lines.append(f"[{_STYLES.get(level, 'bold')}]{LEVEL_TITLES.get(level, level)}[/]")
    lines.append(f"Result: {escape(' · '.join(screen.result))}")
    lines.extend(f"[bold yellow]![/] {escape(gap)}" for gap in screen.gaps)
    if screen.resume:
        lines.append(f"Resume: {escape(screen.resume)}")
    for line in screen.judges:
        style = _STYLES.get(line.level, "bold")
        said = line.level.replace("_", " ")
        lines.append(f"• {escape(line.judge)}: [{style}]{said}[/] — {escape(_judge_text(line))}")
    return Panel("\n".join(lines), title=_PANEL_TITLE, expand=False)


def _judge_text(line: JudgeLine) -> str:
    return line.finding + (f"; also: {'; '.join(line.also)}" if line.also else "")


_PANEL_TITLE = "Can these judges be trusted?"


def verdict_lines(report: Report) -> list[str]:
    """``verdict_panel`` as plain lines (for a log: no box, no colour)."""
    verdict = report.verdict
    screen = first_screen(report)
    lines = [
        screen.compared,
        f"{_PANEL_TITLE} {verdict.line}",
        LEVEL_TITLES.get(verdict.level, verdict.level),
        f"Result: {' · '.join(screen.result)}",
    ]
    lines.extend(f"! {gap}" for gap in screen.gaps)
    if screen.resume:
        lines.append(f"Resume: {screen.resume}")
    for line in screen.judges:
        lines.append(f"• {line.judge}: {line.level.replace('_', ' ')} — {_judge_text(line)}")
    return lines


@dataclass(frozen=True)
class Grid:
    """A table's text: drawn as a rich table where every word fits the console whole, else
    (a narrow terminal, or no terminal at all: a CI log) as one line per row."""

    title: str
    caption: str
    headers: tuple[str, ...]
    rows: list[list[str]]
    justify: tuple[JustifyMethod, ...]
    padding: int = 1

    def table(self) -> Table:
        table = Table(
            title=self.title,
            caption=self.caption,
            caption_justify="left",
            box=box.SIMPLE_HEAD,
            padding=(0, self.padding),
            pad_edge=False,
        )
        for header, justify in zip(self.headers, self.justify, strict=True):
            table.add_column(escape(header), justify=justify)
        for row in self.rows:
            table.add_row(*(escape(cell) for cell in row))
        return table

    def lines(self) -> list[str]:
        """``title``, then per row its first cell and each other cell named by its header
        (dashes left out), then the caption."""
        lines = [self.title]
        for first, *cells in self.rows:
            named = [
                f"{h}: {c}" for h, c in zip(self.headers[1:], cells, strict=True) if c != MISSING
            ]
            lines.append(f"{first} — {'; '.join(named)}")
        return [*lines, self.caption]


# Wide enough to measure a table's natural width.
_UNBOUNDED = 100_000


def fit_columns(table: Table, console: Console) -> bool:
    """Give each column of ``table`` a width that cuts no word: its natural width when the table
    fits the console, else its longest word and a share of the room left (rich's own layout
    squeezes a column below its longest word and cuts it). False, the widths left as they
    were, when the longest words alone are wider than the console."""
    wide = console.options.update_width(_UNBOUNDED)
    spans = [_span(column, console, wide) for column in table.columns]
    natural = sum(high for _, high in spans)
    room = console.width - (Measurement.get(console, wide, table).maximum - natural)
    if natural <= room:
        return True
    least = sum(low for low, _ in spans)
    if least > room:
        return False
    slack = natural - least
    for column, (low, high) in zip(table.columns, spans, strict=True):
        column.width = low + (room - least) * (high - low) // slack
    return True


def _span(column: Column, console: Console, options: ConsoleOptions) -> tuple[int, int]:
    """The column's content width: its longest word (whole text where it cannot wrap), and
    its longest cell."""
    measured = [Measurement.get(console, options, cell) for cell in (column.header, *column.cells)]
    low = max(m.maximum if column.no_wrap else m.minimum for m in measured)
    return low, max(m.maximum for m in measured)


def print_grid(grid: Grid, console: Console) -> None:
    """``grid`` as a table where it fits with every word whole, else as lines; off a terminal
    always as lines, each left whole (``soft_wrap``: a log viewer wraps them itself)."""
    if console.is_terminal:
        table = grid.table()
        if fit_columns(table, console):
            console.print(table)
            return
    for line in grid.lines():
        console.print(line, markup=False, highlight=False, soft_wrap=not console.is_terminal)


_RIGHT: tuple[JustifyMethod] = ("right",)

# The per-judge table without its reason column (the panel above gives every judge's reason).
_TRUST_HEADERS = ("judge", "level", "accuracy [95% CI]", "parsed only", "swap", "failed")


def trust_grid(report: Report) -> Grid:
    """The per-judge answer (``sections.judge_verdict_table``), without its reasons."""
    source = judge_verdict_table(report)
    rows = [[str(cell) for index, cell in enumerate(row) if index != 2] for row in source.rows]
    return Grid(
        title=source.title,
        caption="accuracy: vs gold, failed calls counted wrong; parsed only: over parsed "
        "verdicts; swap: same verdict in both orders, failures counted as inconsistent / over "
        "pairs parsed in both orders; failed: share of calls without a verdict.",
        headers=_TRUST_HEADERS,
        rows=rows,
        justify=("left", "left", "right", "right", "right", "right"),
    )


def judges_grid(report: Report) -> Grid:
    """One row per judge, only the headline columns that have a value for some judge."""
    judges = [j.name for j in report.summary.judges]
    failures = report.summary.failures
    columns = [(t, fn) for t, fn in _COLUMNS if any(fn(report, j) != MISSING for j in judges)]
    rows = []
    for judge in judges:
        info = failures.get(judge)
        failed = fmt_count(info.n_failed, info.n_records) if info else MISSING
        rows.append([judge, failed, *[fn(report, judge) for _, fn in columns]])
    return Grid(
        title="Headline figures per judge",
        caption=_CAPTION,
        headers=("judge", "failed", *(title for title, _ in columns)),
        rows=rows,
        justify=("left", *_RIGHT * (len(columns) + 1)),
        padding=0,
    )


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
    plain = not console.is_terminal  # a log: lines left whole, no box (print_grid)
    if plain:
        for line in verdict_lines(report):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    else:
        console.print(verdict_panel(report))
    print_grid(trust_grid(report), console)
    print_grid(judges_grid(report), console)
    for line in headline_lines(report):
        console.print(line, soft_wrap=plain)
    # Paths are never cut (a cut one cannot be pasted): a long one is left to the terminal.
    console.print(f"Report: {paths.html}", soft_wrap=True)
    console.print(f"Tables: {paths.markdown}   JSON: {paths.json}", highlight=False, soft_wrap=True)
    if paths.plots_dir is not None:
        console.print(
            f"Plots: {paths.plots_dir}/ ({len(paths.plots)} figures, PNG and SVG)", soft_wrap=True
        )
