"""``jurybox run --until decided`` against a loopback judge through the real ``openai_compatible``
adapter (issue 36's checks): 400 labelled pairwise items, both orders.

* a judge that always picks the response shown first stops after ≤ 40 % of the work units, not
  trusted, and the manifest says so; SIGKILLed mid-run (a real subprocess) and resumed, it ends
  at the same stop with the same records;
* a judge that is always right stops early, trusted;
* a judge near the trust bar (each judgment right with probability 0.7) runs the whole plan.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from jurybox.config import config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline.options import RunOptions
from jurybox.pipeline.runner import Runtime, execute, load_inputs
from jurybox.pipeline.until import UntilSchedule, parse_until

from .conftest import StartServer
from .helpers import (
    count_lines,
    kill_when,
    run_cli,
    split_jsonl,
    write_config,
    write_marked_items,
)

ITEMS = 400
UNITS = 2 * ITEMS  # both orders, no retests


def _config(tmp_path: Path, url: str, out: Path, concurrency: int = 8) -> dict[str, Any]:
    return {
        "judges": {
            "wire": {
                "provider": "openai_compatible",
                "model": "wire-judge",
                "base_url": url,
                "api_key_env": None,
                "concurrency": concurrency,
                "timeout_s": 30.0,
            }
        },
        "task": {"mode": "pairwise"},
        "pipeline": {
            "position_bias_mode": "both",
            "test_retest_count": 0,
            "cache": False,
            "retry_base_s": 0.01,
        },
        "paths": {
            "dataset": str(write_marked_items(tmp_path / "items.jsonl", ITEMS)),
            "output_dir": str(out),
        },
    }


def _until_run(mapping: dict[str, Any], out: Path) -> dict[str, Any]:
    """An uninterrupted ``--until decided`` run, in process; the manifest's ``until`` entry."""
    inputs = load_inputs(config_from_mapping(mapping))
    schedule = UntilSchedule.plan(inputs, parse_until("decided"))
    asyncio.run(
        execute(
            inputs,
            out,
            resume=False,
            console=None,
            runtime=Runtime(),
            options=RunOptions(until="decided"),
            schedule=schedule,
        )
    )
    entry: dict[str, Any] = json.loads((out / "manifest.json").read_text("utf-8"))["until"]
    return entry


def _verdicts(out: Path) -> dict[str, tuple[str | None, str]]:
    return {r.key: (r.preferred_arm, r.status.value) for r in read_records(out)}


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_always_first_stops_early_not_trusted_and_resumes_to_the_same_stop(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(pick="first", latency_s=0.1, seed=5)
    reference = _until_run(_config(tmp_path, server.url, tmp_path / "ref"), tmp_path / "ref")
    judge = reference["judges"]["wire"]
    assert judge["stopped_early"] and judge["trusted"] is False and judge["outcome"] == "below"
    assert judge["units_judged"] <= 0.4 * UNITS and judge["units_planned"] == UNITS
    assert server.stats()["requests"] == judge["units_judged"]

    # The same run through the CLI, SIGKILLed once a few records are down, then resumed.
    out = tmp_path / "killed"
    config = write_config(tmp_path / "run.yaml", _config(tmp_path, server.url, out, 2))
    judgments = out / "judgments.jsonl"
    kill_when(["run", str(config), "--until", "decided"], lambda: count_lines(judgments) >= 3)
    rows, _ = split_jsonl(judgments)
    assert 0 < len(rows) < judge["units_judged"], "the kill must land mid-run"
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["status"] == "running" and manifest["options"]["until"] == "decided"

    resumed = run_cli(["run", str(config), "--resume", str(out)], timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "--until: wire stopped after 20 of 400 items" in " ".join(resumed.stderr.split())
    final = json.loads((out / "manifest.json").read_text("utf-8"))
    assert final["status"] == "complete"
    assert final["until"]["judges"] == reference["judges"]  # same stop, same interval
    assert final["until"]["order_sha256"] == reference["order_sha256"]
    assert _verdicts(out) == _verdicts(tmp_path / "ref")  # same records
    rows, torn = split_jsonl(judgments)
    assert torn == b"" and len(rows) == len({row["key"] for row in rows})


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_an_always_right_judge_stops_early_trusted(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(pick="marked", pick_accuracy=1.0, seed=6)
    out = tmp_path / "run"
    judge = _until_run(_config(tmp_path, server.url, out), out)["judges"]["wire"]
    assert judge["stopped_early"] and judge["trusted"] is True and judge["estimate"] == 1.0
    assert judge["ci_low"] >= 0.70 and judge["units_judged"] <= 0.4 * UNITS
    assert (
        server.stats()["requests"] == judge["units_judged"] == count_lines(out / "judgments.jsonl")
    )


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_judge_near_the_bar_runs_the_whole_plan(tmp_path: Path, wire_server: StartServer) -> None:
    server = wire_server(pick="marked", pick_accuracy=0.7, seed=7)
    out = tmp_path / "run"
    judge = _until_run(_config(tmp_path, server.url, out), out)["judges"]["wire"]
    assert judge["stop"] == "plan_done" and not judge["stopped_early"] and judge["trusted"] is None
    assert judge["units_judged"] == UNITS == server.stats()["requests"]
    assert judge["ci_low"] < 0.70 <= judge["ci_high"]
