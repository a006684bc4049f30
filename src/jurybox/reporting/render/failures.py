"""The failed records of a report: those excluded from the metrics (a status other than ok, or a
holistic fallback). report.html's appendix lists the first ``MAX_FAILURES`` of them in full and
counts them all by judge and status (``FailureDigest``); past that, ``failed_records.jsonl``
beside it lists every one (``failure_line``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from jurybox.io.record_table import Judgments, records_table
from jurybox.pipeline.failures import status_kind
from jurybox.records import JudgeRecord, Status

FAILURES_FILE = "failed_records.jsonl"
MAX_FAILURES = 500


# The record fields the failure appendix shows.
FAILURE_FIELDS = (
    "key", "judge_name", "query_id", "status", "holistic_fallback", "presentation_order",
    "error", "raw_response",
)  # fmt: skip


@dataclass(frozen=True)
class FailedRecord:
    """A record excluded from the metrics (its status is not ok, or it fell back to a holistic
    score): what the appendix and ``failed_records.jsonl`` show of it, and its place among the
    records (from 1)."""

    line: int
    key: str
    judge: str
    query_id: str
    status: str
    holistic_fallback: bool
    order: str
    error: str | None
    raw_response: str | None

    @property
    def kind(self) -> str | None:
        """What went wrong (``pipeline.failures``: HTTP 500, connection refused, parse...);
        None for an ok record that fell back to a holistic score."""
        return status_kind(self.status, self.error)


def failures_of(part: pa.Table, first: int = 0) -> list[FailedRecord]:
    """The failed records of ``part`` (a slice of the record table with ``FAILURE_FIELDS``
    whose first record is record ``first + 1``)."""
    failed = pc.or_(
        pc.not_equal(part.column("status"), Status.OK.value), part.column("holistic_fallback")
    )
    rows = np.flatnonzero(np.asarray(failed.to_numpy(zero_copy_only=False), dtype=bool))
    values = part.select(list(FAILURE_FIELDS)).take(pa.array(rows)).to_pylist()
    return [
        FailedRecord(first + int(row) + 1, *(value[name] for name in FAILURE_FIELDS))
        for row, value in zip(rows, values, strict=True)
    ]


def failed_records(records: Judgments | Sequence[JudgeRecord]) -> list[FailedRecord]:
    """Every record whose status is not ok, or that fell back to a holistic score."""
    judgments = records if isinstance(records, Judgments) else records_table(records)
    found: list[FailedRecord] = []
    first = 0
    for part in judgments.slices(FAILURE_FIELDS):
        found.extend(failures_of(part, first))
        first += part.num_rows
    return found


@dataclass
class FailureDigest:
    """What the appendix shows of the failed records, gathered in one pass over the records:
    the first ``MAX_FAILURES`` in full, and how many failed in all, by judge and status, and
    by judge and kind (``pipeline.failures``: HTTP 500, connection refused, timeout, parse...).
    ``side_file``: the file beside report.html listing every one, when they are more."""

    listed: list[FailedRecord] = field(default_factory=list)
    total: int = 0
    by_judge: dict[str, dict[str, int]] = field(default_factory=dict)
    side_file: str | None = None
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)  # per judge

    def add(self, failed: FailedRecord, *, limit: int | None = None) -> None:
        """Count one failed record; keep it whole while fewer than ``limit`` (by default
        ``MAX_FAILURES``) are."""
        limit = MAX_FAILURES if limit is None else limit
        self.total += 1
        counts = self.by_judge.setdefault(failed.judge, {})
        counts[failed.status] = counts.get(failed.status, 0) + 1
        kind = failed.kind
        if kind is not None:  # None: an ok record that fell back to a holistic score
            kinds = self.kinds.setdefault(failed.judge, {})
            kinds[kind] = kinds.get(kind, 0) + 1
        if len(self.listed) < limit:
            self.listed.append(failed)

    @classmethod
    def of(cls, failed: Iterable[FailedRecord]) -> FailureDigest:
        digest = cls()
        for entry in failed:
            digest.add(entry)
        return digest


def failure_line(failed: FailedRecord, *, text_chars: int) -> str:
    """One failed record as a JSON line: where it is among the records and what went wrong."""
    raw = failed.raw_response
    entry = {
        "line": failed.line,
        "key": failed.key,
        "judge": failed.judge,
        "query_id": failed.query_id,
        "status": failed.status,
        "holistic_fallback": failed.holistic_fallback,
        "order": failed.order,
        "error": failed.error,
        "raw_response": None if raw is None else raw[:text_chars],
        "raw_chars": None if raw is None else len(raw),
    }
    return json.dumps(entry, ensure_ascii=False) + "\n"
