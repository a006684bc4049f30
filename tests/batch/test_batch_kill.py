"""kill -9 of a batch run through the real CLI (a subprocess), then ``--resume``: nothing is
submitted twice and every unit ends with exactly one record."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from chaos.helpers import kill_when, run_cli, write_config, write_items
from jurybox.io.judgments import read_records
from jurybox.pipeline.batch import BATCH_LOG_FILE, read_log
from jurybox.records import Status

from .conftest import batch_config, judge
from .stalled_cli import MARK_ENV
from .wire_batch import BatchWire

TESTS = Path(__file__).resolve().parents[1]
STALLED_CLI = [
    sys.executable,
    "-c",
    f"import sys; sys.path.insert(0, {str(TESTS)!r}); from batch.stalled_cli import main; main()",
]

pytestmark = pytest.mark.slow


def _setup(tmp_path: Path, wire: BatchWire, vendor: str) -> tuple[Path, Path]:
    dataset = write_items(tmp_path / "items.jsonl", 5)
    out = tmp_path / "out"
    config = batch_config(dataset, out, {"j": judge(wire, vendor)})
    return write_config(tmp_path / "config.yaml", config), out


def _submitted(out: Path) -> bool:
    entries = read_log(out / BATCH_LOG_FILE).values()
    return any(entry.batch_id is not None for entry in entries)


def _resume_and_check(config: Path, out: Path, wire: BatchWire, batches: int) -> None:
    done = run_cli(["run", str(config), "--resume", str(out)])
    assert done.returncode == 0, done.stderr[-3000:]
    assert wire.batch_count == batches, "a batch was submitted again"
    assert wire.duplicates == 0
    records = list(read_records(out / "judgments.jsonl"))
    counts = Counter(record.key for record in records)
    assert len(counts) == 10 and set(counts.values()) == {1}
    assert {record.status for record in records} == {Status.OK}


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "google"])
def test_kill_after_submission_then_resume_polls_the_same_batch(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire(polls_to_end=10**9)
    config, out = _setup(tmp_path, wire, vendor)
    kill_when(["run", str(config)], lambda: _submitted(out))
    assert wire.batch_count == 1
    wire.behaviour.polls_to_end = 0
    _resume_and_check(config, out, wire, batches=1)


# Gemini's inline results come with the batch itself: held on the read that first sees it ended.
@pytest.mark.parametrize("vendor", ["openai", "anthropic", "google"])
def test_kill_during_the_results_download_then_resume(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire(hold_results=True)
    config, out = _setup(tmp_path, wire, vendor)
    kill_when(["run", str(config)], lambda: wire.held > 0)
    wire.behaviour.hold_results = False
    wire.behaviour.release.set()
    _resume_and_check(config, out, wire, batches=1)


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "google"])
def test_kill_while_the_batch_is_being_created_then_resume_finds_it(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    """The vendor created the batch but its answer never arrived: the log holds only the
    intent; the resume finds the batch (by its label, or for Anthropic, which keeps none, by
    its size and creation time) instead of sending the requests again."""
    wire: BatchWire = batch_wire(hold_create=True)
    config, out = _setup(tmp_path, wire, vendor)
    kill_when(["run", str(config)], lambda: wire.held > 0)
    [entry] = read_log(out / BATCH_LOG_FILE).values()
    assert entry.batch_id is None and wire.batch_count == 1
    wire.behaviour.hold_create = False
    wire.behaviour.release.set()
    _resume_and_check(config, out, wire, batches=1)


def _killed_while_creating(tmp_path: Path, wire: BatchWire) -> tuple[Path, Path, str]:
    """An Anthropic run killed while its batch was being created; the vendor's id for it."""
    config, out = _setup(tmp_path, wire, "anthropic")
    kill_when(["run", str(config)], lambda: wire.held > 0)
    wire.behaviour.hold_create = False
    wire.behaviour.release.set()
    [ours] = wire.batches
    return config, out, ours


def _each_unit_once_and_ok(out: Path) -> None:
    records = list(read_records(out / "judgments.jsonl"))
    counts = Counter(record.key for record in records)
    assert len(counts) == 10 and set(counts.values()) == {1}
    assert {record.status for record in records} == {Status.OK}


def test_two_anthropic_batches_that_could_be_ours_are_not_guessed(
    tmp_path: Path, batch_wire: Any
) -> None:
    """Another client made a batch of the same size in the same minutes: which one is ours
    cannot be told, so the requests are sent again rather than a stranger's batch adopted."""
    wire: BatchWire = batch_wire(hold_create=True)
    config, out, ours = _killed_while_creating(tmp_path, wire)
    wire.add_stranger(like=ours)
    done = run_cli(["run", str(config), "--resume", str(out)])
    assert done.returncode == 0, done.stderr[-3000:]
    assert wire.batch_count == 3  # ours (left unread), the stranger's, the new one
    log = read_log(out / BATCH_LOG_FILE)
    assert [entry.status for entry in log.values()] == ["never submitted (sent again)", "ended"]
    _each_unit_once_and_ok(out)


def test_a_stranger_anthropic_batch_found_by_mistake_is_told_by_its_ids(
    tmp_path: Path, batch_wire: Any
) -> None:
    """Ours never reached the vendor, but another client's batch of the same size did: it is
    adopted, its results carry ids this run never sent, so none is written and the requests
    are sent again."""
    wire: BatchWire = batch_wire(hold_create=True)
    config, out, ours = _killed_while_creating(tmp_path, wire)
    stranger = wire.add_stranger(like=ours)
    del wire.batches[ours]
    done = run_cli(["run", str(config), "--resume", str(out)])
    assert done.returncode == 0, done.stderr[-3000:]
    adopted, again = read_log(out / BATCH_LOG_FILE).values()
    assert (adopted.batch_id, adopted.attempt, adopted.collected) == (stranger, 1, True)
    assert again.attempt == 2 and again.batch_id in wire.batches
    _each_unit_once_and_ok(out)


@pytest.mark.parametrize("vendor", ["openai", "anthropic", "google"])
def test_a_kill_during_submit_then_failing_look_ups_still_make_one_batch(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    """Killed while the vendor made the batch; the resume's look-ups all fail: nothing is sent
    again (the units are provider errors for now, the batch open); the next resume, the list
    call working, collects that one batch."""
    wire: BatchWire = batch_wire(hold_create=True)
    config, out = _setup(tmp_path, wire, vendor)
    kill_when(["run", str(config)], lambda: wire.held > 0)
    wire.behaviour.hold_create = False
    wire.behaviour.release.set()
    wire.behaviour.list_faults = 10**9
    blind = run_cli(["run", str(config), "--resume", str(out)])
    assert blind.returncode == 1, blind.stderr[-3000:]  # the judge has no verdict yet
    assert wire.batch_count == 1 and wire.list_calls > 1
    [entry] = read_log(out / BATCH_LOG_FILE).values()
    assert entry.open and entry.batch_id is None
    assert "provider_error records are redone by:" in blind.stderr
    wire.behaviour.list_faults = 0
    _resume_and_check(config, out, wire, batches=1)


def test_a_kill_before_any_provider_exists_still_resumes_as_a_batch_run(
    tmp_path: Path, batch_wire: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--batch`` on the command line only (the config says nothing of batches), killed while
    its first provider is being built: the manifest already records a batch run, so the resume,
    without ``--batch``, sends one batch and makes no synchronous (full-price) call."""
    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 5)
    out = tmp_path / "out"
    plain = batch_config(dataset, out, {"j": judge(wire, "openai")}, batch=False)
    config = write_config(tmp_path / "config.yaml", plain)
    mark = tmp_path / "held"
    monkeypatch.setenv(MARK_ENV, str(mark))
    kill_when(["run", str(config), "--batch"], mark.exists, command=STALLED_CLI)
    assert wire.requests == 0, "the kill must come before any request"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["batch"] is True and manifest["options"]["batch"] is True
    _resume_and_check(config, out, wire, batches=1)
    assert wire.sync_calls == 0
    assert all(r.batch_id for r in read_records(out / "judgments.jsonl"))
