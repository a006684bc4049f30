"""The rich summary ``jurybox analyze`` prints: the verdict and the headline figures only."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from jurybox.reporting.sections import LEVEL_TITLES
from jurybox.reporting.view.format import MISSING, fmt_count, fmt_p, fmt_rate, fmt_score
from jurybox.reporting.view.tables import get

if TYPE_CHECKING:
    from jurybox.reporting.render.files import ReportPaths

Json = Mapping[str, Any]
_STYLES = {
    "trusted": "bold green",
    "use_with_caution": "bold yellow",
    "not_trusted": "bold red",
    "insufficient_evidence": "bold",
}
MAX_REASONS = 6
_CAPTION = (
    "swap: same verdict in both orders; 1st pos.: share of decisive verdicts for the response "
    "shown first; accuracy: vs gold, pooled over orders; κ human: Cohen's κ with human "
    "preferences; win rate: treatment over control; Δ total: treatment − control mean total."
)


def _rate(metric: Any, k: str | None = None) -> str:
    value = get(metric, "value")
    if not isinstance(value, int | float):
        return MISSING
    counts = f" ({fmt_count(get(metric, k), get(metric, 'n'))})" if k else ""
    return fmt_rate(value) + counts


def _swap(r: Json, j: str) -> str:
    return _rate(get(r, "bias", "position", "judges", j, "swap_consistency"), "consistent")


def _first(r: Json, j: str) -> str:
    return _rate(get(r, "bias", "position", "judges", j, "first_position_rate"))


def _accuracy(r: Json, j: str) -> str:
    return _rate(get(r, "accuracy_vs_gold", "judges", j, "pooled"), "correct")


def _kappa(r: Json, j: str) -> str:
    return _rate(get(r, "human_calibration", "preferences", "judges", j, "pooled"))


def _win(r: Json, j: str) -> str:
    return _rate(get(r, "effects", "preferences", "judges", j))


def _delta(r: Json, j: str) -> str:
    return fmt_score(get(r, "effects", "scores", "per_judge", j, "mean_difference"))


# Headline columns: (title, getter(report, judge) -> formatted text); see _CAPTION.
_COLUMNS: tuple[tuple[str, Callable[[Json, str], str]], ...] = (
    ("swap", _swap),
    ("1st pos.", _first),
    ("accuracy", _accuracy),
    ("κ human", _kappa),
    ("win rate", _win),
    ("Δ total", _delta),
)


def verdict_panel(report: Json) -> Panel:
    verdict = report.get("verdict") or {}
    level = str(verdict.get("level", "insufficient_evidence"))
    reasons = list(verdict.get("reasons") or [])
    lines = [f"[{_STYLES.get(level, 'bold')}]{LEVEL_TITLES.get(level, level)}[/]"]
    lines += [f"• {r}" for r in reasons[:MAX_REASONS]]
    if len(reasons) > MAX_REASONS:
        lines.append(f"• … and {len(reasons) - MAX_REASONS} more (see report.html)")
    return Panel("\n".join(lines), title="Can these judges be trusted?", expand=False)


def judges_table(report: Json) -> Table:
    """One row per judge, only the headline columns that have a value for some judge."""
    judges = [str(j.get("name")) for j in get(report, "summary", "judges") or []]
    failures = get(report, "summary", "failures") or {}
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
        failed = get(failures, judge, "n_failed")
        total = get(failures, judge, "n_records")
        table.add_row(judge, fmt_count(failed, total), *[fn(report, judge) for _, fn in columns])
    return table


def headline_lines(report: Json) -> list[str]:
    lines = []
    alpha = get(report, "agreement", "preferences", "krippendorff_alpha", "value")
    if isinstance(alpha, int | float):
        lines.append(f"Agreement between judges (Krippendorff's α, preferences): {fmt_rate(alpha)}")
    total_alpha = get(report, "agreement", "scores", "dimensions", "total", "krippendorff_alpha")
    if isinstance(get(total_alpha, "value"), int | float):
        lines.append(f"Agreement between judges (α, total scores): {_rate(total_alpha)}")
    total = get(report, "effects", "scores", "overall", "dimensions", "total")
    if isinstance(get(total, "mean_difference"), int | float):
        lines.append(
            f"Treatment effect on the total: {fmt_score(total['mean_difference'])} points "
            f"(Wilcoxon p = {fmt_p(get(total, 'wilcoxon', 'p_value'))}, n = {total.get('n')} items)"
        )
    excluded = get(report, "summary", "excluded", "total")
    lines.append(f"Excluded from the metrics: {excluded} of {get(report, 'summary', 'n_records')}")
    return lines


def print_summary(report: Json, paths: ReportPaths, console: Console) -> None:
    """Verdict, per-judge headline figures, a few global figures and where the files are."""
    console.print(verdict_panel(report))
    console.print(judges_table(report))
    for line in headline_lines(report):
        console.print(line)
    console.print(f"Report: {paths.html}")
    console.print(f"Tables: {paths.markdown}   JSON: {paths.json}", highlight=False)
    if paths.plots_dir is not None:
        console.print(f"Plots: {paths.plots_dir}/ ({len(paths.plots)} PNG files)")
