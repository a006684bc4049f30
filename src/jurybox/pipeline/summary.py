"""What a run returns and prints: ``RunSummary``, its failure tally and the dry-run estimate.

The failure tally lives in ``jurybox.pipeline.failures`` (re-exported here): a run keeps it from
its first record, while this module is imported when the run ends (start-up, issue #19).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybox.pipeline.failures import (
    FailureTally,
    JudgeFailures,
    describe_kinds,
    failure_kind,
    failures_by_kind,
)
from jurybox.pricing import format_cost, format_usd

if TYPE_CHECKING:
    from rich.console import Console

# Start-up (issue #19): rich's markup and tables are imported by the functions that print, so a
# run's path to its first request does not load them.

__all__ = [
    "FailureTally",
    "JudgeEstimate",
    "JudgeFailures",
    "RunSummary",
    "failure_kind",
    "failures_by_kind",
    "print_failures",
    "print_summary",
]


@dataclass(frozen=True)
class JudgeEstimate:
    """Dry-run estimate for one judge: prompts are built, nothing is sent (``pipeline.dryrun``)."""

    judge: str
    units: int
    calls: int
    input_tokens: int  # characters of the built prompts / 4
    output_tokens: int  # units x the mode's typical output per judgment: the estimate
    max_output_tokens: int  # calls x max_tokens: an upper bound
    cost_usd: float | None  # at the typical output, the judge's prices; None when unpriced
    max_cost_usd: float | None = None  # at max_tokens: the most the run can cost
    prices: str = ""  # where the judge's prices come from, or why it has none

    @property
    def priced(self) -> bool:
        return self.cost_usd is not None


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
    unpriced_judges: Sequence[str] = ()  # judges whose answers have no cost: no price
    cache_hits: int = 0
    cache_input_share: float | None = None
    local_judge: bool = False
    elapsed_s: float = 0.0
    dry_run: bool = False
    units_per_judge: Mapping[str, int] = field(default_factory=dict)
    estimates: Sequence[JudgeEstimate] = ()
    failures: Mapping[str, JudgeFailures] = field(default_factory=dict)  # per judge, whole file
    batch_records: int = 0  # records answered by a provider batch (whole file)
    batch_saved_usd: float = 0.0  # batch price vs synchronous price, over every session
    resume_command: str | None = None  # carries the run on (``pipeline.options``)
    schedule: Mapping[str, Any] | None = None  # a scheduled run's manifest entry (--until ...)

    @property
    def cost(self) -> str:
        """The whole file's cost as every output writes it (``pricing.format_cost``)."""
        return format_cost(self.cost_usd, self.unpriced_judges)

    @property
    def failures_by_kind(self) -> dict[str, int]:
        """Failed records per kind (``pipeline.failures``) over the whole file."""
        return failures_by_kind(self.failures)

    @property
    def failed_judges(self) -> tuple[JudgeFailures, ...]:
        """Judges none of whose calls produced a verdict: the run exits 1 when there are any."""
        return tuple(j for j in self.failures.values() if j.all_failed)

    @classmethod
    def from_totals(cls, totals: Mapping[str, Any], **fields: Any) -> RunSummary:
        return cls(
            status_counts=dict(totals["status_counts"]),
            parse_failures=totals["parse_failures"],
            input_tokens=totals["input_tokens"],
            output_tokens=totals["output_tokens"],
            cost_usd=totals["cost_usd"],
            unpriced_judges=tuple(totals.get("unpriced_judges", ())),
            cache_hits=totals["cache_hits"],
            cache_input_share=totals["cache_input_share"],
            local_judge=totals["local_judge_used"],
            batch_records=totals.get("batch_records", 0),
            **fields,
        )


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
        f"out {summary.output_tokens:,} · cost {summary.cost} · cache served "
        f"{'-' if share is None else f'{share:.0%}'} of input tokens ({summary.cache_hits} hits)",
        markup=False,  # judge names in the cost are text, not markup
    )
    if summary.batch_records:
        console.print(
            f"provider batches answered {summary.batch_records} records, synchronous calls "
            f"{records - summary.batch_records}; saved {format_usd(summary.batch_saved_usd)} "
            "against synchronous prices"
        )
    print_failures(console, summary)
    if summary.local_judge:
        console.print(
            "judged by the bundled local model: a weak judge, read its biases in the report"
        )


def print_failures(console: Console, summary: RunSummary) -> None:
    """Failures by kind over the whole file, then one line per judge that had any."""
    counts = summary.failures_by_kind
    total = sum(counts.values())
    if not total:
        console.print("failures: none")
        return
    records = sum(j.records for j in summary.failures.values())
    from rich.markup import escape  # noqa: PLC0415 - start-up: see the imports

    console.print(f"failures: {total} of {records} records ({describe_kinds(counts)})")
    for judge in summary.failures.values():
        if judge.failed:
            # escape: error texts hold [brackets] that rich would read as markup
            console.print(f"  {escape(judge.reason_line())}", soft_wrap=True)
