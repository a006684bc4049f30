"""Batch runs through the real openai, anthropic and google-genai SDKs against a loopback server
speaking their batch wire formats (tests/batch/wire_batch.py)."""

from __future__ import annotations

import asyncio
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from chaos.helpers import write_items
from jurybox.config import config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async
from jurybox.pipeline.batch import BATCH_LOG_FILE, read_log
from jurybox.pipeline.summary import RunSummary
from jurybox.pricing import completion_cost_usd
from jurybox.records import Completion, JudgeRecord, Status

from .conftest import batch_config, judge
from .wire_batch import BatchWire

VENDORS = ("openai", "anthropic", "google")


def _run(
    config: dict[str, Any], *, resume: bool = False, console: Console | None = None
) -> RunSummary:
    loaded = config_from_mapping(config)
    out = config["paths"]["output_dir"]
    return asyncio.run(run_async(loaded, output_dir=out, resume=resume, console=console))


def _records(out: Path) -> list[JudgeRecord]:
    return list(read_records(out / "judgments.jsonl"))


def _one_each(records: list[JudgeRecord], expected: int) -> None:
    counts = Counter(record.key for record in records)
    assert len(counts) == expected
    assert set(counts.values()) == {1}


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_batch_run_answers_every_unit_at_half_price(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 6)
    judges = {"batched": judge(wire, vendor), "scripted": {"provider": "fake"}}
    config = batch_config(dataset, tmp_path / "out", judges)
    summary = _run(config)
    records = _records(tmp_path / "out")
    _one_each(records, 24)
    batched = [r for r in records if r.judge_name == "batched"]
    assert {r.status for r in batched} == {Status.OK}
    expected_id = "batches/batch_0000" if vendor == "google" else "batch_0000"
    assert {r.batch_id for r in batched} == {expected_id}
    assert all(r.batch_id is None for r in records if r.judge_name == "scripted")
    assert wire.batch_count == 1 and wire.duplicates == 0
    # both presentation orders of every pair went in the one batch
    assert len(wire.batches["batch_0000"].requests) == 12
    full = config_from_mapping(config).judges["batched"]
    for record in batched:
        tokens = Completion(
            text="", model="", input_tokens=record.input_tokens, output_tokens=record.output_tokens
        )
        sync_cost = completion_cost_usd(full, tokens)
        assert sync_cost is not None and record.cost_usd == sync_cost / 2
    assert summary.batch_records == 12
    assert summary.batch_saved_usd == pytest.approx(sum(r.cost_usd or 0 for r in batched))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["batch"] is True


@pytest.mark.parametrize("vendor", VENDORS)
def test_errored_requests_are_resubmitted_in_a_new_batch(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire(error_share=0.1)
    dataset = write_items(tmp_path / "items.jsonl", 30)
    config = batch_config(dataset, tmp_path / "out", {"j": judge(wire, vendor)})
    _run(config)
    records = _records(tmp_path / "out")
    _one_each(records, 60)
    assert {r.status for r in records} == {Status.OK}
    redone = [r for r in records if r.attempts == 2]
    assert redone, "no request was errored: the test would prove nothing"
    assert wire.batch_count == 2
    assert sorted(wire.submitted.values()).count(2) == len(redone)
    first, second = sorted({r.batch_id or "" for r in records})
    assert all(r.batch_id == (second if r.attempts == 2 else first) for r in records)


@pytest.mark.parametrize("vendor", VENDORS)
def test_an_expired_batch_is_redone(vendor: str, tmp_path: Path, batch_wire: Any) -> None:
    wire: BatchWire = batch_wire(expire_first=1)
    dataset = write_items(tmp_path / "items.jsonl", 5)
    config = batch_config(dataset, tmp_path / "out", {"j": judge(wire, vendor)})
    _run(config)
    records = _records(tmp_path / "out")
    _one_each(records, 10)
    assert {r.status for r in records} == {Status.OK}
    assert wire.batch_count == 2
    assert Counter(r.attempts for r in records) == {1: 5, 2: 5}  # every other one expired
    log = read_log(tmp_path / "out" / BATCH_LOG_FILE)
    assert [e.collected for e in log.values()] == [True, True]


def test_status_endpoint_429_and_503_are_waited_out(tmp_path: Path, batch_wire: Any) -> None:
    wire: BatchWire = batch_wire(status_faults=3)
    dataset = write_items(tmp_path / "items.jsonl", 3)
    config = batch_config(dataset, tmp_path / "out", {"j": judge(wire, "openai")})
    shown = io.StringIO()
    _run(config, console=Console(file=shown, width=200))
    lines = shown.getvalue().splitlines()
    assert "batches: 1 submitted, 0 ended · waiting on the provider (up to 24 h)" in lines
    assert "batches: 1 submitted, 1 ended" in lines
    assert {r.status for r in _records(tmp_path / "out")} == {Status.OK}
    assert wire.batch_count == 1


def test_failures_past_the_retry_budget_are_provider_errors_with_the_vendor_reason(
    tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire(expire_first=1)
    dataset = write_items(tmp_path / "items.jsonl", 4)
    config = batch_config(dataset, tmp_path / "out", {"j": judge(wire, "openai")}, max_retries=0)
    _run(config)
    records = _records(tmp_path / "out")
    failed = [r for r in records if r.status == Status.PROVIDER_ERROR]
    assert len(failed) == 4 and wire.batch_count == 1
    assert all("batch_expired" in (r.error or "") for r in failed)


def test_sync_fallback_redoes_failures_synchronously(tmp_path: Path, batch_wire: Any) -> None:
    wire: BatchWire = batch_wire(expire_first=1)
    dataset = write_items(tmp_path / "items.jsonl", 4)
    config = batch_config(
        dataset, tmp_path / "out", {"j": judge(wire, "openai")}, batch_fallback="sync"
    )
    summary = _run(config)
    records = _records(tmp_path / "out")
    _one_each(records, 8)
    assert {r.status for r in records} == {Status.OK}
    assert wire.batch_count == 1 and wire.sync_calls == 4
    assert sum(r.batch_id is None for r in records) == 4 and summary.batch_records == 4


@pytest.mark.parametrize("vendor", VENDORS)
def test_a_finished_batch_run_resumed_makes_no_request(
    vendor: str, tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 3)
    config = batch_config(dataset, tmp_path / "out", {"j": judge(wire, vendor)})
    _run(config)
    before = wire.requests
    config["pipeline"]["batch"] = False  # a batch run stays one when resumed without --batch
    _run(config, resume=True)
    assert wire.requests == before
    _one_each(_records(tmp_path / "out"), 6)


@pytest.mark.slow
def test_2000_pairwise_units_over_two_vendors_submit_nothing_twice(
    tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 500)
    judges = {"oa": judge(wire, "openai"), "an": judge(wire, "anthropic")}
    config = batch_config(dataset, tmp_path / "out", judges)
    _run(config)
    records = _records(tmp_path / "out")
    _one_each(records, 2000)
    assert {r.status for r in records} == {Status.OK}
    assert sum(wire.submitted.values()) == 2000 and wire.duplicates == 0
    assert wire.batch_count == 2


def test_the_report_shows_batch_and_sync_counts_and_the_saving(
    tmp_path: Path, batch_wire: Any
) -> None:
    from jurybox.analysis import analyze_records
    from jurybox.reporting.sections.overview import overview_section

    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 4)
    judges = {"batched": judge(wire, "openai"), "scripted": {"provider": "fake"}}
    _run(batch_config(dataset, tmp_path / "out", judges))
    records = _records(tmp_path / "out")
    report = analyze_records(records)
    cost = report.summary.cost
    assert cost is not None
    assert (cost.n_batch_records, cost.n_sync_records) == (8, 8)
    batch_cost = sum(r.cost_usd or 0 for r in records if r.batch_id)
    assert cost.batch_cost_usd == pytest.approx(batch_cost)
    assert cost.batch_saving_usd == pytest.approx(batch_cost)
    assert cost.batch_saving_method == "assumed 50% discount"
    notes = " ".join(overview_section(report).notes)
    assert "assuming the vendors' 50% batch discount" in notes
    assert "Provider batches answered 8 records, synchronous calls 8" in notes


def test_the_report_prices_a_batch_saving_at_the_judges_own_batch_prices(
    tmp_path: Path, batch_wire: Any
) -> None:
    """A judge whose batch prices are not half its synchronous ones (``batch_price_*``): the
    report's saving is the run's own (synchronous tokens' cost less the batch cost), read from
    the manifest; without a manifest it falls back to the 50% assumption and says so."""
    from jurybox.analysis import analyze_records
    from jurybox.app import analyze_to_dir

    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 4)
    priced = judge(wire, "openai", batch_price_input_per_mtok=2.4, batch_price_output_per_mtok=12)
    config = batch_config(dataset, tmp_path / "out", {"batched": priced})
    summary = _run(config)
    records = _records(tmp_path / "out")
    full = config_from_mapping(config).judges["batched"]
    synchronous = sum(completion_cost_usd(full, _tokens(r)) or 0 for r in records)
    batch_cost = sum(r.cost_usd or 0 for r in records)
    assert batch_cost == pytest.approx(0.8 * synchronous)  # a 20% discount, not 50%
    analyze_to_dir(tmp_path / "out", human=None, dataset=None, out_dir=tmp_path / "report")
    report = json.loads((tmp_path / "report" / "analysis_report.json").read_text())
    cost = report["summary"]["cost"]
    assert cost["batch_saving_method"] == "synchronous prices"
    assert cost["batch_saving_usd"] == pytest.approx(synchronous - batch_cost)
    assert cost["batch_saving_usd"] == pytest.approx(summary.batch_saved_usd)
    assumed = analyze_records(records).summary.cost
    assert assumed is not None and assumed.batch_saving_method == "assumed 50% discount"
    assert assumed.batch_saving_usd == pytest.approx(batch_cost)


def _tokens(record: JudgeRecord) -> Completion:
    return Completion(
        text="", model="", input_tokens=record.input_tokens, output_tokens=record.output_tokens
    )


def test_batch_answers_are_read_exactly_like_synchronous_ones(
    tmp_path: Path, batch_wire: Any
) -> None:
    """The same server answers the same bodies through both routes (some answers unparsable):
    the batch run's records equal the synchronous run's in every judgment field."""
    wire: BatchWire = batch_wire(garbage_share=0.3)
    dataset = write_items(tmp_path / "items.jsonl", 10)
    runs = {}
    for batch in (True, False):
        out = tmp_path / f"out-{batch}"
        _run(batch_config(dataset, out, {"j": judge(wire, "openai")}, batch=batch))
        runs[batch] = {r.key: r for r in _records(out)}
    assert wire.batch_count == 1 and wire.sync_calls == 20
    statuses = Counter(r.status for r in runs[True].values())
    assert statuses[Status.OK] and len(statuses) > 1, statuses  # some answers not judgments
    judged = ("status", "parse_success", "parse_method", "preference", "preferred_arm",
              "confidence", "raw_response", "error", "input_tokens", "output_tokens")  # fmt: skip
    for key, synchronous in runs[False].items():
        batched = runs[True][key]
        assert [getattr(batched, f) for f in judged] == [getattr(synchronous, f) for f in judged]
        assert batched.cost_usd is not None and synchronous.cost_usd is not None
        assert batched.cost_usd * 2 == synchronous.cost_usd
