"""``batches.jsonl``: the run folder's durable record of every provider batch.

One JSON event per line, appended and fsync'd before the process goes on, so that a kill -9 at
any moment leaves a log a resume can trust:

* ``submitting`` (written *before* the upload): the batch's local label, its judge and vendor,
  each request's ``custom_id`` -> work-unit keys, and the attempt number. A resume that finds
  it without a ``submitted`` event asks the vendor whether a batch with that label exists before
  it sends the requests again.
* ``submitted``: the vendor's batch id and the submission time; from here on a resume polls the
  batch instead of submitting its requests again.
* ``collected``: every result was read and written as records; the batch is never fetched again.
* ``abandoned``: the submission failed for good (its units were recorded or handed on).

A line is appended with a single ``write`` of at most a few MB and fsync'd; a kill can tear only
the last line, which ``read_log`` ignores (its event never took effect).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jurybox.pipeline.recording import utc_now
from jurybox.redaction import holds_known, redact_value

BATCH_LOG_FILE = "batches.jsonl"


@dataclass(frozen=True)
class BatchEntry:
    """What the log says about one batch, all events folded."""

    label: str  # ours, unique in the run; sent to the vendor where it keeps one (metadata)
    judge: str
    vendor: str
    requests: Mapping[str, Sequence[str]]  # custom_id -> work-unit keys
    attempt: int = 1
    batch_id: str | None = None
    intent_at: str | None = None  # when the ``submitting`` event was logged
    submitted_at: str | None = None
    collected: bool = False
    abandoned: bool = False
    status: str | None = None  # the vendor's last word, when it was collected or cancelled
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        """Submitted (or possibly submitted) and its results not yet written."""
        return not (self.collected or self.abandoned)

    @property
    def keys(self) -> list[str]:
        return [key for keys in self.requests.values() for key in keys]


class BatchLog:
    """Append-only, fsync'd event log of a run's batches; ``entries`` is the folded state."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, BatchEntry] = read_log(path)

    def next_label(self, judge: str) -> str:
        return f"jurybox-{len(self.entries):05d}-{_safe(judge)}"

    def submitting(self, entry: BatchEntry) -> None:
        at = utc_now()
        self._append(
            {
                "event": "submitting",
                "label": entry.label,
                "judge": entry.judge,
                "vendor": entry.vendor,
                "attempt": entry.attempt,
                "requests": {cid: list(keys) for cid, keys in entry.requests.items()},
                "at": at,
            }
        )
        self.entries[entry.label] = replace(entry, intent_at=at)

    def submitted(self, label: str, batch_id: str) -> None:
        at = utc_now()
        self._append({"event": "submitted", "label": label, "batch_id": batch_id, "at": at})
        self.entries[label] = replace(self.entries[label], batch_id=batch_id, submitted_at=at)

    def collected(self, label: str, status: str) -> None:
        self._append({"event": "collected", "label": label, "status": status})
        self.entries[label] = replace(self.entries[label], collected=True, status=status)

    def abandoned(self, label: str, reason: str) -> None:
        self._append({"event": "abandoned", "label": label, "reason": reason})
        self.entries[label] = replace(self.entries[label], abandoned=True, status=reason)

    def open_entries(self, judge: str | None = None) -> list[BatchEntry]:
        return [e for e in self.entries.values() if e.open and judge in (None, e.judge)]

    def _append(self, event: dict[str, Any]) -> None:
        event.setdefault("at", utc_now())
        text = json.dumps(event, ensure_ascii=False)
        if holds_known(text):  # known secrets only: labels and ids must read back as written
            text = json.dumps(redact_value(event, shapes=False), ensure_ascii=False)
        line = (text + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _repair_tail(fd, self.path)
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:32]


def _repair_tail(fd: int, path: Path) -> None:
    """A torn last line (a kill mid-write) gets its newline, so the next event starts clean."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    with path.open("rb") as handle:
        handle.seek(size - 1)
        if handle.read(1) != b"\n":
            os.write(fd, b"\n")


def read_log(path: Path) -> dict[str, BatchEntry]:
    """Fold the log's events into one entry per batch; unreadable (torn) lines are skipped."""
    if not path.exists():
        return {}
    entries: dict[str, BatchEntry] = {}
    for event in _events(path.read_bytes().splitlines()):
        _apply(entries, event)
    return entries


def _events(lines: Iterable[bytes]) -> Iterable[dict[str, Any]]:
    for raw in lines:
        try:
            event = json.loads(raw)
        except ValueError:
            continue  # a line torn by a kill: its event never happened
        if isinstance(event, dict):
            yield event


def _apply(entries: dict[str, BatchEntry], event: Mapping[str, Any]) -> None:
    label, kind = str(event.get("label")), event.get("event")
    if kind == "submitting":
        entries[label] = BatchEntry(
            label=label,
            judge=str(event["judge"]),
            vendor=str(event["vendor"]),
            requests={str(k): tuple(v) for k, v in event["requests"].items()},
            attempt=int(event.get("attempt", 1)),
            intent_at=event.get("at"),
        )
        return
    entry = entries.get(label)
    if entry is None:
        return
    if kind == "submitted":
        entries[label] = replace(entry, batch_id=event["batch_id"], submitted_at=event.get("at"))
    elif kind == "collected":
        entries[label] = replace(entry, collected=True, status=event.get("status"))
    elif kind == "abandoned":
        entries[label] = replace(entry, abandoned=True, status=event.get("reason"))
