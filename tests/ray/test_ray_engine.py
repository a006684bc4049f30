"""``jurybox run --engine ray``: the same records, resume and rate limits as a local run.

Against the loopback OpenAI-compatible wire server (latency, an rpm limit enforced per 1-second
window, answers that depend only on the request body), through the real ``openai_compatible``
adapter. 95 items x 2 orders + 10 retests = 200 pairwise units.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from chaos.conftest import StartServer
from chaos.helpers import (
    CLI,
    count_lines,
    planned_keys,
    run_cli,
    run_config,
    split_jsonl,
    write_config,
    write_items,
)
from jurybox.config import config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline import Runtime, run_async

pytest.importorskip("ray", reason="the `ray` extra is not installed (pip install 'jurybox[ray]')")
from jurybox.pipeline.engines import open_engine

pytestmark = pytest.mark.slow

ITEMS = 95
RPM = 2400  # 40 requests in any 1-second window at the server
# attempts too: the test allows up to 2 % of requests a 429 (a busy machine hits a few), and a
# retried call is the same judgment with attempts 2.
TIMING = {"run_id", "timestamp", "latency_ms", "attempts"}


def _config(tmp_path: Path, url: str, out: Path, **judge: Any) -> dict[str, Any]:
    dataset = tmp_path / "items.jsonl"
    if not dataset.exists():
        write_items(dataset, ITEMS)
    settings = {"provider": "openai_compatible", "concurrency": 8, "rpm": RPM, **judge}
    return run_config(dataset, out, url, judge=settings, pipeline={"test_retest_count": 10})


def _records(directory: Path) -> dict[str, dict[str, Any]]:
    records = [record.to_dict() for record in read_records(directory / "judgments.jsonl")]
    by_key = {record["key"]: record for record in records}
    assert len(by_key) == len(records), "a key was written twice"
    return by_key


def _without_timing(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {key: {k: v for k, v in r.items() if k not in TIMING} for key, r in records.items()}


def test_a_ray_run_equals_a_local_run_within_one_rate_limit(
    tmp_path: Path, ray_address: str, wire_server: StartServer
) -> None:
    del ray_address  # joined by this process: the engine uses it
    server = wire_server(latency_s=0.05, rpm=RPM, rate_window_s=1.0, seed=5)
    local = config_from_mapping(_config(tmp_path, server.url, tmp_path / "local"))
    asyncio.run(run_async(local, output_dir=tmp_path / "local"))

    server.reset()
    on_ray = Runtime(engine=open_engine("ray", workers=2))
    summary = asyncio.run(run_async(local, output_dir=tmp_path / "ray", runtime=on_ray))
    stats = server.stats()
    assert summary.units_run == 200
    assert stats["rate_limited"] <= 0.02 * stats["requests"], stats
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert summary.provider_calls == manifest["sessions"][-1]["provider_calls"] == stats["requests"]
    assert _without_timing(_records(tmp_path / "ray")) == _without_timing(
        _records(tmp_path / "local")
    )


def test_kill_9_of_the_driver_then_resume_on_ray_finishes_exactly(
    tmp_path: Path, ray_address: str, wire_server: StartServer
) -> None:
    server = wire_server(latency_s=0.05, rpm=1200, rate_window_s=1.0, seed=6)
    run_dir = tmp_path / "run"
    data = _config(tmp_path, server.url, run_dir, rpm=1200)
    config = write_config(tmp_path / "run.yaml", data)
    on_ray = ["--engine", "ray", "--ray-address", ray_address]
    judgments = run_dir / "judgments.jsonl"
    driver = subprocess.Popen(
        [*CLI, "run", str(config), *on_ray], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 90.0
        while count_lines(judgments) < 20:
            assert driver.poll() is None, driver.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "no 20 records in 90 s"
            time.sleep(0.02)
        driver.send_signal(signal.SIGKILL)
    finally:
        driver.wait(30)
        assert driver.stderr is not None
        driver.stderr.close()
    done_at_kill = count_lines(judgments)
    assert 20 <= done_at_kill < 200, "the kill must land mid-run"

    resumed = run_cli(["run", str(config), "--resume", str(run_dir), *on_ray], timeout=150)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows, torn = split_jsonl(judgments)
    keys = [row["key"] for row in rows]
    assert torn == b"" and len(keys) == len(set(keys)) == 200
    assert set(keys) == set(planned_keys(config))
    assert {row["status"] for row in rows} == {"ok"}

    calls = server.stats()["requests"]
    again = run_cli(["run", str(config), "--resume", str(run_dir), *on_ray], timeout=150)
    assert again.returncode == 0, again.stderr[-3000:]
    assert server.stats()["requests"] == calls, "resuming a finished run made a call"
    assert count_lines(judgments) == 200
