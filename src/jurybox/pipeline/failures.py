"""Why judgments failed, by kind, tallied one record at a time while a run writes them.

A failure's *kind* names what went wrong in the same words in every output (the records, the
run summary, the report's failure tables): ``HTTP 500``, ``HTTP 429`` (any HTTP status),
``connection refused``, ``DNS failure``, ``connection reset``, ``connection failed``,
``timeout``, ``bad response`` (a 2xx body not in the wire format), ``auth`` (no key), ``parse``
(the judge's text could not be read), ``truncated``, ``judge refused`` and ``other``.

A ``provider_error`` record's ``error`` starts with its kind in brackets
(``recording.error_text``: ``[HTTP 500] TransientError after 6 attempts: ...``); records written
before that prefix existed are read by their error class and status code. Other failed statuses
are their own kind.

Apart from ``jurybox.pipeline.summary`` (which re-exports these names) so that a run's path to its
first request does not build the summary's dataclasses (start-up, issue #19).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from jurybox.records import JudgeRecord, Status

_STATUS_KINDS = {
    Status.UNPARSED: "parse",
    Status.REFUSED: "judge refused",
    Status.TRUNCATED: "truncated",
}
_PREFIX = re.compile(r"\[([^\]\n]{1,60})\] ")
# Error texts written before the kind prefix: "AuthError (HTTP 401) after 1 attempt: ..."
_LEGACY_STATUS = re.compile(r"^\w+ \(HTTP (\d{3})\)")
_LEGACY_CLASS = (("AuthError", "auth"), ("RateLimitError", "rate limit"))
# Most actionable first: no server at all, then credentials, pacing, the server's own errors.
_RANKS = (
    ("connection", 0),
    ("DNS", 0),
    ("auth", 1),
    ("HTTP 401", 1),
    ("HTTP 403", 1),
    ("HTTP 429", 2),
    ("rate limit", 2),
    ("HTTP 5", 3),
    ("HTTP", 4),
    ("bad request", 4),
    ("timeout", 5),
    ("bad response", 6),
    ("parse", 7),
    ("truncated", 8),
    ("judge refused", 9),
)


def error_kind(error: str | None) -> str:
    """The kind a ``provider_error`` record's error text names (``"other"`` when none)."""
    text = error or ""
    prefixed = _PREFIX.match(text)
    if prefixed:
        return prefixed.group(1)
    legacy = _LEGACY_STATUS.match(text)
    if legacy:
        return f"HTTP {legacy.group(1)}"
    for prefix, kind in _LEGACY_CLASS:
        if text.startswith(prefix):
            return kind
    lowered = text.lower()
    return "timeout" if "timed out" in lowered or "timeout" in lowered else "other"


def failure_kind(record: JudgeRecord) -> str | None:
    """The kind of one record's failure, or None when it is no failure."""
    return status_kind(record.status, record.error)


def status_kind(status: Status | str, error: str | None) -> str | None:
    """The kind of a failure with this status and error text (a record's, or a column of the
    record table's), or None when it is no failure."""
    status = Status(status)
    if status in (Status.OK, Status.SKIPPED):
        return None
    if status != Status.PROVIDER_ERROR:
        return _STATUS_KINDS.get(status, "other")
    return error_kind(error)


def kind_order(kinds: Iterable[str]) -> list[str]:
    """``kinds`` most actionable first (connection, auth, 429, 5xx, ... parse ..., other)."""
    return sorted(kinds, key=lambda kind: (_rank(kind), kind))


def _rank(kind: str) -> int:
    return next((rank for prefix, rank in _RANKS if kind.startswith(prefix)), len(_RANKS))


def describe_kinds(counts: Mapping[str, int]) -> str:
    """``"connection refused 12, HTTP 500 2"``: counts by kind, most actionable first."""
    return ", ".join(f"{kind} {counts[kind]}" for kind in kind_order(counts) if counts[kind])


@dataclass(frozen=True, slots=True)
class JudgeFailures:
    """One judge's records in the judgments file and why the failed ones failed."""

    judge: str
    records: int  # skipped records excluded: they were never asked for
    failed: int
    by_kind: Mapping[str, int] = field(default_factory=dict)
    first_error: str | None = None  # the first failure's recorded text, key already scrubbed

    @property
    def all_failed(self) -> bool:
        return self.records > 0 and self.failed == self.records

    def reason_line(self) -> str:
        """One line saying how this judge failed, e.g. for the exit-1 message."""
        kinds = describe_kinds(self.by_kind)
        line = f"judge '{self.judge}': {self.failed} of {self.records} calls failed ({kinds})"
        return f"{line}: {self.first_error}" if self.first_error else line


class FailureTally:
    """Failures per judge and kind, kept one record at a time like ``RunningTotals``."""

    def __init__(self) -> None:
        self._records: dict[str, int] = {}
        self._failed: dict[str, dict[str, int]] = {}
        self._first: dict[str, str] = {}

    def add(self, record: JudgeRecord) -> None:
        if record.status == Status.SKIPPED:
            return
        judge = record.judge_name
        self._records[judge] = self._records.get(judge, 0) + 1
        kinds = self._failed.setdefault(judge, {})
        kind = failure_kind(record)
        if kind is None:
            return
        kinds[kind] = kinds.get(kind, 0) + 1
        if record.error and judge not in self._first:
            self._first[judge] = record.error

    def judges(self) -> dict[str, JudgeFailures]:
        """Per judge, kinds most actionable first."""
        out = {}
        for judge, records in self._records.items():
            kinds = self._failed.get(judge, {})
            ordered = {kind: kinds[kind] for kind in kind_order(kinds)}
            failed = sum(ordered.values())
            out[judge] = JudgeFailures(judge, records, failed, ordered, self._first.get(judge))
        return out


def failures_by_kind(judges: Mapping[str, JudgeFailures]) -> dict[str, int]:
    """Failed records per kind over all judges, most actionable first."""
    totals: dict[str, int] = {}
    for judge in judges.values():
        for kind, count in judge.by_kind.items():
            totals[kind] = totals.get(kind, 0) + count
    return {kind: totals[kind] for kind in kind_order(totals)}
