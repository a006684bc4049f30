"""A batch whose creation answers late, looked up while the vendor's list call fails: one batch
is made and paid for, whatever the look-ups do (issue 31, item 1).

Through the real SDKs against the loopback wire server: the server makes the batch, then
answers the create call after the client's timeout; its list call (the look-up of a batch whose
creation was never answered) answers 500 a given number of times. A look-up that fails is
retried by the run's retry policy; one that cannot tell leaves the batch open for the next poll
or resume, and the requests are never sent again.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chaos.helpers import write_items
from jurybox.config import config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async
from jurybox.pipeline.batch import BATCH_LOG_FILE, read_log
from jurybox.records import Status

from .conftest import batch_config, judge
from .wire_batch import BatchWire

VENDORS = ("openai", "anthropic", "google")
TIMEOUT_S = 0.5  # the judge's timeout: the create call's answer comes after it
LATE_S = 1.5


def _late(tmp_path: Path, wire: BatchWire, vendor: str) -> dict[str, Any]:
    dataset = write_items(tmp_path / "items.jsonl", 5)
    slow = judge(wire, vendor, timeout_s=TIMEOUT_S)
    return batch_config(dataset, tmp_path / "out", {"j": slow})


def _run(config: dict[str, Any], *, resume: bool = False) -> None:
    out = config["paths"]["output_dir"]
    asyncio.run(run_async(config_from_mapping(config), output_dir=out, resume=resume))


def _statuses(out: Path) -> Counter[Status]:
    records = list(read_records(out / "judgments.jsonl"))
    assert len({record.key for record in records}) == len(records) == 10
    return Counter(record.status for record in records)


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_late_creation_found_after_failing_look_ups_is_the_one_batch(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    """The create call times out; the look-up fails three times, then finds the batch."""
    wire: BatchWire = batch_wire(create_late_s=LATE_S, list_faults=3)
    config = _late(tmp_path, wire, vendor)
    _run(config)
    assert wire.list_calls >= 4, "the look-up was never retried: the test proves nothing"
    assert wire.batch_count == 1 and wire.duplicates == 0
    assert _statuses(tmp_path / "out") == {Status.OK: 10}
    [entry] = read_log(tmp_path / "out" / BATCH_LOG_FILE).values()
    assert entry.collected and entry.batch_id is not None


@pytest.mark.parametrize("vendor", VENDORS)
def test_look_ups_that_never_answer_leave_the_batch_open_and_a_resume_collects_it(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    """Every look-up fails: the batch is neither abandoned nor sent again; its units are
    provider errors for now, and a resume (the list call working again) finds and collects it
    without a second batch."""
    wire: BatchWire = batch_wire(create_late_s=LATE_S, list_faults=10**9)
    config = _late(tmp_path, wire, vendor)
    _run(config)
    assert wire.batch_count == 1 and wire.duplicates == 0
    assert _statuses(tmp_path / "out") == {Status.PROVIDER_ERROR: 10}
    [entry] = read_log(tmp_path / "out" / BATCH_LOG_FILE).values()
    assert entry.open and entry.batch_id is None, "a batch that may exist was given up"

    wire.behaviour.list_faults = 0
    wire.behaviour.create_late_s = 0.0
    _run(config, resume=True)
    assert wire.batch_count == 1 and wire.duplicates == 0
    assert _statuses(tmp_path / "out") == {Status.OK: 10}
    [entry] = read_log(tmp_path / "out" / BATCH_LOG_FILE).values()
    assert entry.collected and (entry.batch_id or "").removeprefix("batches/") in wire.batches


def test_a_definite_not_found_sends_the_requests_again_once(
    tmp_path: Path, batch_wire: Any
) -> None:
    """The look-up answers and the batch is not there (the vendor lost it): the requests are
    sent once more, under the same intent, and that batch is the run's."""
    wire: BatchWire = batch_wire(create_late_s=LATE_S)
    config = _late(tmp_path, wire, "openai")
    made: list[str] = []
    original = wire._new_batch

    def loses_the_first(*args: Any, **kwargs: Any) -> Any:
        batch = original(*args, **kwargs)
        made.append(batch.id)
        if len(made) == 1:  # gone before anyone can list it: as if never made
            del wire.batches[batch.id]
            wire.submitted.clear()
        return batch

    wire._new_batch = loses_the_first  # type: ignore[method-assign]
    _run(config)
    assert len(made) == 2 and wire.batch_count == 1 and wire.duplicates == 0
    assert _statuses(tmp_path / "out") == {Status.OK: 10}
    [entry] = read_log(tmp_path / "out" / BATCH_LOG_FILE).values()
    assert entry.collected and entry.batch_id == made[1]
