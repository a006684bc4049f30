"""20 SIGKILLs during a run against a slow OpenAI-compatible server, then ``--resume``.

The run goes through the real CLI in a subprocess and the real ``openai`` adapter against
``wire_server`` (deterministic: an answer depends only on the request body). Half of the kills
come a seeded random delay after the session wrote a new record (they land mid-run); the other
half a seeded random delay after the process started (they land anywhere: start-up, manifest
writing, provider creation, the first calls). After every kill the judgments file may end in at
most one torn line and the manifest must be absent or valid JSON. The final record set must equal
an uninterrupted run's: same keys, one line each, same verdicts.
"""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from jurybox.config import config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async

from .conftest import StartServer
from .helpers import (
    CLI,
    check_manifest,
    count_lines,
    planned_keys,
    run_cli,
    run_config,
    split_jsonl,
    write_config,
    write_items,
)

KILLS = 20
ITEMS = 200  # 405 units; the kills leave at most ~220 of them done (see _kill_once)
SEED = 20261122
COMPARED = (
    "status",
    "presentation_order",
    "positions",
    "preference",
    "preferred_arm",
    "confidence",
    "raw_response",
    "scores",
    "overall",
    "retest",
)


def _kill_once(args: list[str], judgments: Path, rng: random.Random, after_record: bool) -> None:
    """Start the CLI and SIGKILL it; never lets a session finish the run by itself."""
    before = count_lines(judgments)
    process = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        if after_record:  # at most ~1 + 0.25 s x 40 calls/s records per session
            deadline = time.monotonic() + 60.0
            while count_lines(judgments) <= before:
                assert process.poll() is None, process.communicate()[1].decode()[-2000:]
                assert time.monotonic() < deadline, "no record written in 60 s"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.25))
        else:  # start-up alone takes longer than most of these delays
            time.sleep(rng.uniform(0.05, 1.0))
        assert process.poll() is None, "the run ended before the kill: make it longer"
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()


def _reference(tmp_path: Path, dataset: Path, url: str) -> dict[str, dict[str, object]]:
    """An uninterrupted run, in process, against the same server."""
    config = config_from_mapping(
        run_config(dataset, tmp_path / "reference", url, judge={"concurrency": 16})
    )
    asyncio.run(run_async(config, output_dir=tmp_path / "reference"))
    return {r.key: r.to_dict() for r in read_records(tmp_path / "reference")}


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_twenty_sigkills_then_resume_equal_an_uninterrupted_run(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(latency_s=0.05, seed=11)
    dataset = write_items(tmp_path / "items.jsonl", ITEMS)
    run_dir = tmp_path / "killed"
    judgments, manifest = run_dir / "judgments.jsonl", run_dir / "manifest.json"
    slow = run_config(dataset, run_dir, server.url, judge={"concurrency": 2})
    config_path = write_config(tmp_path / "run.yaml", slow)
    rng = random.Random(SEED)
    run_ids = set()
    for kill in range(KILLS):
        started = judgments.exists() or manifest.exists()
        args = ["run", str(config_path)] + (["--resume", str(run_dir)] if started else [])
        _kill_once(args, judgments, rng, after_record=kill % 2 == 0)
        rows, torn = split_jsonl(judgments)  # every complete line is JSON
        assert b"\n" not in torn
        data = check_manifest(manifest)
        if data is not None:
            run_ids.add(data["run_id"])
    done_before_final = len(split_jsonl(judgments)[0])
    # Scheduling settings may change on resume: finish the rest with more calls in flight.
    fast = run_config(dataset, run_dir, server.url, judge={"concurrency": 16})
    write_config(config_path, fast)
    final = run_cli(["run", str(config_path), "--resume", str(run_dir)], timeout=120)
    assert final.returncode == 0, final.stderr[-2000:]

    rows, torn = split_jsonl(judgments)
    assert torn == b"", "a finished run leaves no torn line"
    keys = [row["key"] for row in rows]
    assert len(keys) == len(set(keys)), "a key was written twice"
    expected = _reference(tmp_path, dataset, server.url)
    assert set(keys) == set(expected) == set(planned_keys(config_path))
    assert 0 < done_before_final < len(keys), "the kills must land mid-run"
    for row in rows:
        want = expected[row["key"]]
        assert {f: row[f] for f in COMPARED} == {f: want[f] for f in COMPARED}, row["key"]
    final_manifest = check_manifest(manifest)
    assert final_manifest is not None and final_manifest["status"] == "complete"
    assert {row["run_id"] for row in rows} == {final_manifest["run_id"]}
    assert run_ids <= {final_manifest["run_id"]}, "resume must keep the run_id"
    assert len(final_manifest["sessions"]) >= KILLS // 2
