"""kill -9 at random moments, then --resume: the result equals an uninterrupted run.

The run goes through the real CLI in a subprocess with a slow fake judge. Each kill comes a
random delay (seeded RNG, so a failure can be replayed) after the session wrote its first record,
so it lands mid-run however long the interpreter takes to start on a loaded machine.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jurybox.config import load_config
from jurybox.pipeline import Runtime, run_async
from jurybox.providers.fake import FakeProvider

from .helpers import fake_judge, write_config, write_dataset

CLI = [sys.executable, "-c", "from jurybox.cli import main; main()", "run"]
KILLS = 10


def check_lines(path: Path) -> list[str]:
    """Keys of a judgments file; every line but a torn last one must be valid JSON."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    complete, _, torn = raw.rpartition(b"\n")
    assert b"\n" not in torn  # anything after the last newline is at most one torn line
    return [json.loads(line)["key"] for line in complete.splitlines() if line] if complete else []


def newlines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def run_until_progress(args: list[str], judgments: Path, delay: float) -> None:
    """Start the CLI, wait for one more record than before, wait ``delay``, then SIGKILL."""
    before = newlines(judgments)
    process = subprocess.Popen([*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30.0
    while newlines(judgments) <= before:
        assert process.poll() is None, process.stderr.read() if process.stderr else b""
        assert time.monotonic() < deadline, "no record written in 30 s"
        time.sleep(0.01)
    time.sleep(delay)
    assert process.poll() is None, "the run finished before the kill: make it longer"
    process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.mark.slow
def test_kill_9_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "items.jsonl", 60)
    judges = {"j1": fake_judge(latency_ms=50), "j2": fake_judge(latency_ms=50, seed=1)}
    config_path = write_config(
        tmp_path / "cfg.yaml",
        data,
        tmp_path / "unused",
        judges=judges,
        pipeline={"concurrency": 1, "test_retest_count": 5},
    )
    out = tmp_path / "run"
    judgments = out / "judgments.jsonl"
    rng = random.Random(20250101)
    partial = []  # records on disk after each kill
    for kill in range(KILLS):
        if kill == KILLS // 2:  # also a torn write, as a kill inside write(2) would leave
            with judgments.open("ab") as handle:
                handle.write(b'{"key": "q001|j1|control_first|r0", "run_id": "')
        args = [str(config_path), "--resume" if kill else "--output-dir", str(out)]
        run_until_progress(args, judgments, rng.uniform(0.0, 0.4))
        keys = check_lines(judgments)
        assert len(keys) == len(set(keys))
        partial.append(len(keys))
    print("records after each kill:", partial)
    finished = subprocess.run(
        [*CLI, str(config_path), "--resume", str(out)], capture_output=True, check=False
    )
    assert finished.returncode == 0, finished.stderr.decode()

    config = load_config(config_path)
    instant = Runtime(providers={name: FakeProvider() for name in judges})
    asyncio.run(run_async(config, output_dir=tmp_path / "reference", runtime=instant))
    expected = check_lines(tmp_path / "reference" / "judgments.jsonl")
    keys = check_lines(judgments)
    assert judgments.read_bytes().endswith(b"\n")
    assert len(keys) == len(set(keys)) == len(expected) == 2 * (60 * 2 + 5)
    assert set(keys) == set(expected)
    # Every kill landed mid-run, after progress, and no progress was lost across kills.
    assert partial[0] > 0 and partial[-1] < len(expected)
    assert all(later > earlier for earlier, later in itertools.pairwise(partial))

    # A finished run resumed makes no call: these fakes would fail every call they got.
    never = {name: FakeProvider(error_rate=1.0) for name in judges}
    runtime = Runtime(providers=never)
    summary = asyncio.run(run_async(config, output_dir=out, resume=True, runtime=runtime))
    assert sum(provider.calls for provider in never.values()) == 0
    assert summary.units_run == 0 and summary.status_counts["ok"] == len(expected)
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["sessions"]) == KILLS + 2
    run_ids = {json.loads(line)["run_id"] for line in judgments.open()}
    assert run_ids == {manifest["run_id"]}
