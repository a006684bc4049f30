"""The batch planner (vendor limits, pairs kept together) and the durable batch log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurybox.pipeline.batch.log import BatchEntry, BatchLog, read_log
from jurybox.pipeline.batch.plan import plan_batches
from jurybox.providers.batch.base import BatchLimits, line_bytes
from jurybox.records import WorkUnit


def _calls(items: int) -> list[list[WorkUnit]]:
    """Both presentation orders of each item, one call each (as pairwise plans them)."""
    orders = (("control", "treatment"), ("treatment", "control"))
    return [
        [WorkUnit(f"q{i:03d}", "j", "_".join(order) + "_first", order)]
        for i in range(items)
        for order in orders
    ]


def _line(custom_id: str, call: list[WorkUnit]) -> dict[str, object]:
    return {"custom_id": custom_id, "body": "x" * 100, "key": call[0].key}


@pytest.mark.parametrize(
    "limits", [BatchLimits(max_requests=7, max_bytes=10**9), BatchLimits(10**6, 1000)]
)
def test_batches_respect_the_limits_and_keep_both_orders_of_a_pair_together(
    limits: BatchLimits,
) -> None:
    planned = plan_batches(_calls(20), _line, limits)
    assert len(planned) > 1
    seen: list[str] = []
    for batch in planned:
        assert len(batch.lines) <= limits.max_requests
        assert sum(line_bytes(line) for line in batch.lines) <= limits.max_bytes
        items = [call[0].item_id for call in batch.calls.values()]
        assert all(items.count(item) == 2 for item in items)  # no pair split over two batches
        assert len(set(batch.calls)) == len(batch.calls)  # custom ids unique in a batch
        seen.extend(key for keys in batch.requests.values() for key in keys)
    assert sorted(seen) == sorted(call[0].key for call in _calls(20))  # each unit once


def test_a_request_larger_than_a_whole_batch_is_refused() -> None:
    with pytest.raises(ValueError, match="exceeds the batch limit"):
        plan_batches(_calls(1), _line, BatchLimits(max_requests=10, max_bytes=50))


def test_the_log_folds_events_and_ignores_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "batches.jsonl"
    log = BatchLog(path)
    entry = BatchEntry(log.next_label("j"), "j", "openai", {"r0": ("k1", "k2")})
    log.submitting(entry)
    log.submitted(entry.label, "batch_1")
    second = BatchEntry(log.next_label("j"), "j", "openai", {"r0": ("k3",)}, attempt=2)
    log.submitting(second)
    with path.open("ab") as handle:  # a kill in the middle of writing the next event
        handle.write(b'{"event": "collected", "label": "' + second.label.encode())
    entries = read_log(path)
    assert entries[entry.label].batch_id == "batch_1" and entries[entry.label].open
    assert entries[second.label].batch_id is None and entries[second.label].attempt == 2
    BatchLog(path).collected(entry.label, "completed")  # the next append starts a fresh line
    folded = read_log(path)
    assert folded[entry.label].collected and not folded[entry.label].open
    assert [json.loads(x)["event"] for x in path.read_text().splitlines()[-1:]] == ["collected"]
