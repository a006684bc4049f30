"""What a run returns and prints: ``RunSummary``, its failure tally and the dry-run estimate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybox.records import JudgeRecord, Status

if TYPE_CHECKING:
    from rich.console import Console

# Start-up (issue #19): rich's markup and tables are imported by the functions that print, so a
# run's path to its first request does not load them.

# Why a judgment produced no verdict, most actionable first; "other" catches the rest.
FAILURE_REASONS = ("auth", "rate_limit", "timeout", "parse", "refused", "truncated", "other")
_STATUS_REASONS = {
    Status.UNPARSED: "parse",
    Status.REFUSED: "refused",
    Status.TRUNCATED: "truncated",
}
# ``recording.error_text`` starts a provider_error's text with the ProviderError class name.
_ERROR_REASONS = (("AuthError", "auth"), ("RateLimitError", "rate_limit"))


def failure_reason(record: JudgeRecord) -> str | None:
    """The failure bucket of one record (``FAILURE_REASONS``), or None when it is no failure."""
    if record.status in (Status.OK, Status.SKIPPED):
        return None
    if record.status != Status.PROVIDER_ERROR:
        return _STATUS_REASONS.get(record.status, "other")
    error = record.error or ""
    for prefix, reason in _ERROR_REASONS:
        if error.startswith(prefix):
            return reason
    lowered = error.lower()
    if "timed out" in lowered or "timeout" in lowered:
        return "timeout"
    return "other"


@dataclass(frozen=True)
class JudgeFailures:
    """One judge's records in the judgments file and why the failed ones failed."""

    judge: str
    records: int  # skipped records excluded: they were never asked for
    failed: int
    by_reason: Mapping[str, int] = field(default_factory=dict)
    first_error: str | None = None  # the first failure's recorded text, key already scrubbed

    @property
    def all_failed(self) -> bool:
        return self.records > 0 and self.failed == self.records

    def reason_line(self) -> str:
        """One line saying how this judge failed, e.g. for the exit-1 message."""
        reasons = ", ".join(f"{_label(r)} {n}" for r, n in self.by_reason.items() if n)
        line = f"judge '{self.judge}': {self.failed} of {self.records} calls failed ({reasons})"
        return f"{line}: {self.first_error}" if self.first_error else line


class FailureTally:
    """Failures per judge and reason, kept one record at a time like ``RunningTotals``."""

    def __init__(self) -> None:
        self._records: dict[str, int] = {}
        self._failed: dict[str, dict[str, int]] = {}
        self._first: dict[str, str] = {}

    def add(self, record: JudgeRecord) -> None:
        if record.status == Status.SKIPPED:
            return
        judge = record.judge_name
        self._records[judge] = self._records.get(judge, 0) + 1
        reasons = self._failed.setdefault(judge, {})
        reason = failure_reason(record)
        if reason is None:
            return
        reasons[reason] = reasons.get(reason, 0) + 1
        if record.error and judge not in self._first:
            self._first[judge] = record.error

    def judges(self) -> dict[str, JudgeFailures]:
        """Per judge, reasons in ``FAILURE_REASONS`` order."""
        out = {}
        for judge, records in self._records.items():
            reasons = self._failed.get(judge, {})
            ordered = {r: reasons[r] for r in FAILURE_REASONS if reasons.get(r)}
            failed = sum(ordered.values())
            out[judge] = JudgeFailures(judge, records, failed, ordered, self._first.get(judge))
        return out


def failures_by_reason(judges: Mapping[str, JudgeFailures]) -> dict[str, int]:
    """Every reason in ``FAILURE_REASONS`` with its count over all judges (zeros kept)."""
    return {
        reason: sum(j.by_reason.get(reason, 0) for j in judges.values())
        for reason in FAILURE_REASONS
    }


def _label(reason: str) -> str:
    return reason.replace("_", " ")


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
    failures: Mapping[str, JudgeFailures] = field(default_factory=dict)  # per judge, whole file
    batch_records: int = 0  # records answered by a provider batch (whole file)
    batch_saved_usd: float = 0.0  # batch price vs synchronous price, over every session

    @property
    def failures_by_reason(self) -> dict[str, int]:
        """Failed records per reason (``FAILURE_REASONS``, zeros kept) over the whole file."""
        return failures_by_reason(self.failures)

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
            cache_hits=totals["cache_hits"],
            cache_input_share=totals["cache_input_share"],
            local_judge=totals["local_judge_used"],
            batch_records=totals.get("batch_records", 0),
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
    if summary.batch_records:
        console.print(
            f"provider batches answered {summary.batch_records} records, synchronous calls "
            f"{records - summary.batch_records}; saved {_money(summary.batch_saved_usd)} "
            "against synchronous prices"
        )
    print_failures(console, summary)
    if summary.local_judge:
        console.print(
            "judged by the bundled local model: a weak judge, read its biases in the report"
        )


def print_failures(console: Console, summary: RunSummary) -> None:
    """Failures by reason over the whole file, then one line per judge that had any."""
    counts = summary.failures_by_reason
    total = sum(counts.values())
    if not total:
        console.print("failures: none")
        return
    records = sum(j.records for j in summary.failures.values())
    from rich.markup import escape  # noqa: PLC0415 - start-up: see the imports

    reasons = ", ".join(f"{_label(r)} {n}" for r, n in counts.items() if n)
    console.print(f"failures: {total} of {records} records ({reasons})")
    for judge in summary.failures.values():
        if judge.failed:
            # escape: error texts hold [brackets] that rich would read as markup
            console.print(f"  {escape(judge.reason_line())}", soft_wrap=True)


def print_estimates(console: Console, estimates: Sequence[JudgeEstimate]) -> None:
    """The dry-run table: work units, calls, tokens and cost per judge."""
    from rich.table import Table  # noqa: PLC0415 - start-up: see the imports

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
