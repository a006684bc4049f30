"""A server that fails 30 % of calls: every work unit still ends in exactly one record.

The fault mix is 6 % each of 429 (with Retry-After), 5xx, timeouts (held past the client's
timeout, then dropped), malformed 200 bodies (truncated JSON, HTML, no ``choices``) and
unparsable judge text. With one retry allowed, some units exhaust their retries: they must end
``provider_error``, never vanish or be written twice; judge text that is not JSON ends
``unparsed``. The keys are counted against ``plan_units``. Both Chat Completions adapters are
run: ``openai`` (the SDK) and ``openai_compatible`` (aiohttp) see different exception types for
the same faults.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from jurybox.config import config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async
from jurybox.pipeline.manifest import totals

from .conftest import StartServer
from .helpers import ALLOWED_END_STATES, planned_keys, run_config, split_jsonl, write_items

FAULTS = {
    "rate_429": 0.06,
    "rate_5xx": 0.06,
    "rate_timeout": 0.06,
    "rate_malformed": 0.06,
    "rate_unparsable": 0.06,
}


@pytest.mark.parametrize("provider", ["openai", "openai_compatible"])
@pytest.mark.parametrize("mode", ["pairwise", "rubric"])
@pytest.mark.timeout(120)
def test_thirty_percent_faults_leave_one_record_per_unit(
    tmp_path: Path, wire_server: StartServer, mode: str, provider: str
) -> None:
    server = wire_server(latency_s=0.005, hang_s=1.0, retry_after_s=0.05, seed=5, **FAULTS)
    dataset = write_items(tmp_path / "items.jsonl", 80)
    out = tmp_path / "run"
    config = config_from_mapping(
        run_config(
            dataset,
            out,
            server.url,
            mode=mode,
            judge={"provider": provider, "timeout_s": 0.4, "concurrency": 16},
            pipeline={"max_retries": 1, "retry_after_cap_s": 0.2, "cache": False},
        )
    )
    summary = asyncio.run(run_async(config, output_dir=out))

    rows, torn = split_jsonl(out / "judgments.jsonl")
    assert torn == b""
    keys = [row["key"] for row in rows]
    planned = planned_keys(config)
    assert len(keys) == len(set(keys)) == len(planned), "a unit is missing or duplicated"
    assert set(keys) == set(planned)
    statuses = Counter(row["status"] for row in rows)
    assert set(statuses) <= ALLOWED_END_STATES, statuses
    assert statuses["ok"] > len(planned) // 2
    assert statuses["unparsed"] > 0 and statuses["provider_error"] > 0, statuses
    assert sum(summary.status_counts.values()) == len(planned)
    sent = server.stats()
    assert all(sent[name] > 0 for name in FAULTS), sent
    for row in rows:
        if row["status"] == "provider_error":
            assert row["error"] and row["raw_response"] is None and row["attempts"] >= 1
        if row["status"] == "unparsed":
            assert row["raw_response"] and not row["parse_success"]

    # Resume redoes the provider errors and nothing else: still one record per unit.
    redo = statuses["provider_error"]
    before = {row["key"]: row for row in rows if row["status"] != "provider_error"}
    resumed = asyncio.run(run_async(config, output_dir=out, resume=True))
    assert resumed.units_run == redo
    rows, torn = split_jsonl(out / "judgments.jsonl")
    assert torn == b""
    keys = [row["key"] for row in rows]
    assert len(keys) == len(set(keys)) and set(keys) == set(planned)
    assert all(row == before[row["key"]] for row in rows if row["key"] in before)
    # The manifest's totals are kept as records are written, never re-read: they must still be
    # exactly the file's, after faults and a resume that rewrote the file.
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    from_file = totals(read_records(out / "judgments.jsonl"))
    assert {key: manifest[key] for key in from_file} == from_file
    assert resumed.status_counts == from_file["status_counts"]
