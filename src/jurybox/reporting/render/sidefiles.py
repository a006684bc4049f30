"""The side files written beside report.html: ``failure_line`` is one line of
``failed_records.jsonl`` (every failed record, when there are more than the appendix lists),
streamed through ``io.atomic.AtomicFile`` and put in place only when complete.
"""

from __future__ import annotations

import json

from jurybox.records import JudgeRecord

FAILURES_FILE = "failed_records.jsonl"


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
