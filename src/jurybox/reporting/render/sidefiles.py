"""Files written beside report.html line by line, and put in place only when complete.

``AtomicLines`` streams into a temporary file next to its target and ``commit`` flushes it to
disk and renames it over the target (as ``write_bytes_atomic`` does for a whole text, with the
same temporary name, ``temp_beside``), so a crash never leaves half a file under the real
name. ``failure_line`` is one line of ``failed_records.jsonl``: every failed record, when there
are more than the appendix lists.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import IO

from jurybox.records import JudgeRecord
from jurybox.reporting.render.json_report import temp_beside

FAILURES_FILE = "failed_records.jsonl"


class AtomicLines:
    """A text file written line by line under a temporary name, then committed or discarded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._temp = temp_beside(path)
        self._handle: IO[str] | None = self._temp.open("x", encoding="utf-8")

    def write(self, line: str) -> None:
        if self._handle is None:
            raise ValueError(f"{self.path} is already committed or discarded")
        self._handle.write(line)

    def commit(self) -> Path:
        """Flush to disk and rename over the target."""
        if self._handle is not None:
            os.replace(self.finish(), self.path)
        return self.path

    def finish(self) -> Path:
        """Flush to disk and close, under the temporary name (returned): the caller renames it
        over the target when the rest of its report is written, or removes it."""
        if self._handle is None:
            raise ValueError(f"{self.path} is already committed or discarded")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        self._handle = None
        return self._temp

    def discard(self) -> None:
        """Drop what was written (the target, if any, is left as it was)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self._temp.unlink(missing_ok=True)

    def __enter__(self) -> AtomicLines:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.discard()  # after commit this does nothing; on an error nothing is left


def failure_line(line: int, record: JudgeRecord, *, text_chars: int) -> str:
    """One failed record as a JSON line: where it is in judgments.jsonl and what went wrong."""
    raw = record.raw_response
    entry = {
        "line": line,
        "key": record.key,
        "judge": record.judge_name,
        "query_id": record.query_id,
        "status": record.status.value,
        "holistic_fallback": record.holistic_fallback,
        "order": record.presentation_order,
        "error": record.error,
        "raw_response": None if raw is None else raw[:text_chars],
        "raw_chars": None if raw is None else len(raw),
    }
    return json.dumps(entry, ensure_ascii=False) + "\n"
