"""Why judgments failed, tallied one record at a time while a run writes them: ``FailureTally``.

Apart from ``jurybox.pipeline.summary`` (which re-exports these names) so that a run's path to its
first request does not build the summary's dataclasses (start-up, issue #19).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from jurybox.records import JudgeRecord, Status

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


@dataclass(frozen=True, slots=True)
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
        reasons = ", ".join(f"{reason_label(r)} {n}" for r, n in self.by_reason.items() if n)
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


def reason_label(reason: str) -> str:
    """A reason as printed: `rate_limit` -> `rate limit`."""
    return reason.replace("_", " ")
