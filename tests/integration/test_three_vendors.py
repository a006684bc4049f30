"""A four-judge panel through the whole pipeline: the three vendor adapters (Anthropic, OpenAI,
Gemini) through their real SDKs, and ``openai_compatible`` through its aiohttp client.

Each judge talks to its own local server in its adapter's wire format (``openai_compatible`` to a
second OpenAI Chat Completions server); 30% of requests fail with 429 (tiny Retry-After) or 5xx,
and one item fails on every attempt. Every planned unit must end as exactly one record, ok or
provider_error, and each server must have seen exactly the attempts its judge's records account
for: no lost, duplicated or silently retried calls.
(The file name predates the fourth judge.)
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from rich.console import Console
from wire_vendors import (
    JUDGE_NAMES,
    MODELS,
    VENDORS,
    VendorServer,
    force_marker,
    judges_config,
    loopback_only,
    running_servers,
    scan_tree,
    set_vendor_env,
    write_pairwise_dataset,
)

from jurybox.app import run_from_config
from jurybox.config import load_config
from jurybox.io.datasets import load_dataset
from jurybox.io.judgments import read_records
from jurybox.pipeline import RunSummary, plan_units
from jurybox.records import JudgeRecord, Status

N_ITEMS = 20
RETEST = 2
MAX_RETRIES = 3
FAULT_RATE = 0.3
POISON = 13  # this item's question makes every server answer 503 on every attempt


def _write_config(tmp_path: Path, servers: dict[str, VendorServer]) -> Path:
    dataset = write_pairwise_dataset(
        tmp_path / "pairs.jsonl", N_ITEMS, markers={POISON: force_marker(503)}
    )
    config = {
        "judges": judges_config(servers),
        "task": {"mode": "pairwise"},
        "pipeline": {
            "position_bias_mode": "both",
            "test_retest_count": RETEST,
            "max_retries": MAX_RETRIES,
            "retry_base_s": 0.01,
            "retry_after_cap_s": 0.05,
            "concurrency": 6,
            "cache": False,
            "random_seed": 7,
        },
        "paths": {"dataset": str(dataset), "output_dir": str(tmp_path / "out")},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@dataclass(frozen=True)
class PanelRun:
    config_path: Path
    servers: dict[str, VendorServer]
    summary: RunSummary
    records: list[JudgeRecord]


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PanelRun]:
    """One faulty run of the whole panel, shared by the module's checks (it takes seconds)."""
    tmp_path = tmp_path_factory.mktemp("panel")
    with pytest.MonkeyPatch.context() as monkeypatch, loopback_only(monkeypatch):
        set_vendor_env(monkeypatch)
        with running_servers() as servers:
            for vendor, server in servers.items():
                server.fault_rate, server.seed = FAULT_RATE, 2024 + VENDORS.index(vendor)
            config_path = _write_config(tmp_path, servers)
            summary = run_from_config(config_path, console=Console(file=io.StringIO(), width=120))
            records = list(read_records(summary.judgments_path))
            yield PanelRun(config_path, servers, summary, records)


def test_every_planned_unit_ends_as_exactly_one_record(panel: PanelRun) -> None:
    records = panel.records
    config = load_config(panel.config_path)
    planned = plan_units(config, load_dataset(config.resolve(config.paths.dataset)))
    judges = len(VENDORS)
    assert judges == 4 and "openai_compatible" in VENDORS
    assert len(planned) == N_ITEMS * judges * 2 + RETEST * judges

    keys = [record.key for record in records]
    duplicated = [key for key, n in Counter(keys).items() if n > 1]
    assert not duplicated, f"duplicated records: {duplicated[:5]}"
    missing = {unit.key for unit in planned} - set(keys)
    extra = set(keys) - {unit.key for unit in planned}
    assert not missing and not extra, f"missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}"

    statuses = Counter(record.status for record in records)
    assert set(statuses) <= {Status.OK, Status.PROVIDER_ERROR}, statuses
    # The poison item's 2 units per judge, and a few more.
    assert statuses[Status.OK] >= len(planned) - 2 * judges - 6
    assert panel.summary.units_total == len(planned) == len(records)
    for server in panel.servers.values():
        assert not server.violations, f"{server.vendor}: {server.violations[:3]}"


def test_records_match_what_the_servers_answered(panel: PanelRun) -> None:
    total_requests = sum(server.request_count for server in panel.servers.values())
    assert panel.summary.provider_calls == total_requests
    by_vendor: dict[str, list[JudgeRecord]] = {vendor: [] for vendor in VENDORS}
    for record in panel.records:
        by_vendor[record.judge_vendor].append(record)

    for vendor, server in panel.servers.items():
        mine = by_vendor[vendor]
        statuses = server.statuses()
        ok = [r for r in mine if r.status == Status.OK]
        failed = [r for r in mine if r.status == Status.PROVIDER_ERROR]
        assert mine, f"{vendor}: no records"
        assert {r.judge_name for r in mine} == {JUDGE_NAMES[vendor]}
        assert {r.judge_model for r in mine} == {MODELS[vendor]}
        # One request per attempt: no SDK retry stacked under the pipeline's, none lost.
        assert server.request_count == sum(r.attempts for r in mine), vendor
        assert statuses[200] == len(ok), vendor
        faults = sum(n for status, n in statuses.items() if status != 200)
        assert faults == sum(r.attempts for r in mine) - len(ok), vendor
        assert statuses[429] > 0 and any(status >= 500 for status in statuses), statuses
        assert any(r.attempts > 1 for r in ok), f"{vendor}: no ok record needed a retry"
        assert max(r.attempts for r in mine) <= MAX_RETRIES + 1
        assert failed and all(r.attempts == MAX_RETRIES + 1 for r in failed), vendor


def test_ok_records_carry_native_verdicts_mapped_to_arms(panel: PanelRun) -> None:
    ok = [r for r in panel.records if r.status == Status.OK]
    assert ok
    for record in ok:
        # The servers always vote for the treatment's position: mapped back, it must win.
        assert record.parse_method == "native", (record.judge_vendor, record.parse_method)
        assert record.preferred_arm == "treatment", (record.key, record.positions)
        assert record.positions[record.preference] == "treatment"
        assert json.loads(record.raw_response or "")["verdict"] == record.preference
        assert record.input_tokens and record.output_tokens and record.cost_usd
        assert record.error is None
    orders = Counter((r.judge_vendor, r.presentation_order) for r in ok if not r.retest)
    assert set(orders) == {
        (vendor, order) for vendor in VENDORS for order in ("control_first", "treatment_first")
    }


def test_exhausted_retries_become_provider_error_records(panel: PanelRun) -> None:
    records = panel.records
    poison = [r for r in records if r.query_id == f"q{POISON:03d}"]
    assert len(poison) == len(VENDORS) * 2
    assert {r.judge_vendor for r in poison} == set(VENDORS)
    for record in poison:
        assert record.status == Status.PROVIDER_ERROR, record.key
        assert record.attempts == MAX_RETRIES + 1
        assert record.raw_response is None and record.preference is None
        assert record.preferred_arm is None and not record.parse_success
        assert "503" in (record.error or ""), record.error
    for record in records:
        if record.status == Status.PROVIDER_ERROR and record.query_id != f"q{POISON:03d}":
            assert record.attempts == MAX_RETRIES + 1, record  # only exhausted retries fail
    manifest = json.loads(panel.summary.manifest_path.read_text(encoding="utf-8"))
    assert manifest["status"] == "complete"
    assert manifest["records"] == len(records)
    counts = Counter(r.status.value for r in records)
    assert manifest["status_counts"]["provider_error"] == counts["provider_error"]


def test_no_key_in_the_run_directory(panel: PanelRun) -> None:
    # The poison item's 503s echo the request headers; the recorded errors must be scrubbed.
    leaks, files = scan_tree(panel.summary.output_dir)
    assert {path.name for path in files} >= {"judgments.jsonl", "manifest.json"}
    assert not leaks, "\n".join(leaks)
