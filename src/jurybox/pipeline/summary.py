"""What a run returns and prints: ``RunSummary`` and the dry-run ``JudgeEstimate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class JudgeEstimate:
    """Dry-run estimate for one judge: prompts are built, nothing is sent."""

    judge: str
    units: int
    calls: int
    input_tokens: int  # characters of the built prompts / 4
    max_output_tokens: int  # calls x max_tokens: an upper bound
    cost_usd: float | None  # upper bound from the judge's prices; None when unpriced


@dataclass(frozen=True)
class RunSummary:
    """Outcome of ``run_from_config`` / ``run_async``; counts cover the whole judgments file."""

    run_id: str | None
    output_dir: Path
    judgments_path: Path
    manifest_path: Path
    units_total: int
    units_skipped: int  # already done when a resumed session started
    units_run: int  # judged in this session (cache hits included)
    provider_calls: int  # calls actually sent in this session, retries included
    status_counts: Mapping[str, int] = field(default_factory=dict)
    parse_failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cache_hits: int = 0
    cache_input_share: float | None = None
    local_judge: bool = False
    elapsed_s: float = 0.0
    dry_run: bool = False
    units_per_judge: Mapping[str, int] = field(default_factory=dict)
    estimates: Sequence[JudgeEstimate] = ()

    @classmethod
    def from_totals(cls, totals: Mapping[str, Any], **fields: Any) -> RunSummary:
        return cls(
            status_counts=dict(totals["status_counts"]),
            parse_failures=totals["parse_failures"],
            input_tokens=totals["input_tokens"],
            output_tokens=totals["output_tokens"],
            cost_usd=totals["cost_usd"],
            cache_hits=totals["cache_hits"],
            cache_input_share=totals["cache_input_share"],
            local_judge=totals["local_judge_used"],
            **fields,
        )


def _money(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def print_summary(console: Console, summary: RunSummary) -> None:
    """Where the files are and what the run produced."""
    counts = ", ".join(f"{name} {n}" for name, n in summary.status_counts.items() if n)
    records = sum(summary.status_counts.values())
    share = summary.cache_input_share
    console.print(f"judgments: {summary.judgments_path}")
    console.print(f"manifest:  {summary.manifest_path}")
    console.print(
        f"run {summary.run_id}: {records} records ({counts or 'none'}); "
        f"{summary.units_run} judged now, {summary.units_skipped} already done; "
        f"{summary.provider_calls} provider calls in {summary.elapsed_s:.1f}s"
    )
    console.print(
        f"parse failures {summary.parse_failures} · tokens in {summary.input_tokens:,} / "
        f"out {summary.output_tokens:,} · cost {_money(summary.cost_usd)} · cache served "
        f"{'-' if share is None else f'{share:.0%}'} of input tokens ({summary.cache_hits} hits)"
    )
    if summary.local_judge:
        console.print(
            "judged by the bundled local model: a weak judge, read its biases in the report"
        )


def print_estimates(console: Console, estimates: Sequence[JudgeEstimate]) -> None:
    """The dry-run table: work units, calls, tokens and cost per judge."""
    table = Table(title="dry run: no calls made")
    for column in ("judge", "units", "calls", "input tok (est.)", "max output tok", "cost ≤"):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for est in estimates:
        table.add_row(
            est.judge,
            str(est.units),
            str(est.calls),
            f"{est.input_tokens:,}",
            f"{est.max_output_tokens:,}",
            _money(est.cost_usd),
        )
    console.print(table)
    total = sum(est.units for est in estimates)
    console.print(f"{total} work units in all")
