"""SIGTERM, SIGHUP and Ctrl-C stop a real ``jurybox run`` the same orderly way: within 5 s, the
manifest ``interrupted`` with the file's true totals, the resume command printed, exit 128 + N,
and the resume finishes the run exactly."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from jurybox.config import load_config
from jurybox.io.judgments import JUDGMENTS_FILE
from jurybox.pipeline import run_async
from jurybox.pipeline.runner import Runtime
from jurybox.providers.fake import FakeProvider
from pipeline.helpers import fake_judge, write_config, write_dataset

from .helpers import lines, start_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def _wait_for(condition: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def _line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _manifest(folder: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize(
    ("signum", "latency_ms", "wait_lines"),
    [
        (signal.SIGTERM, 400, 4),  # calls in flight finish within the grace period
        (signal.SIGHUP, 400, 4),
        (signal.SIGINT, 400, 4),
        (signal.SIGTERM, 60_000, 0),  # calls in flight far longer than the grace: cancelled
    ],
    ids=["term", "hup", "int", "term-cancels-slow-calls"],
)
def test_a_stop_signal_interrupts_cleanly_and_the_resume_is_exact(
    tmp_path: Path, signum: int, latency_ms: int, wait_lines: int
) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 20)
    out = tmp_path / "run"
    judge = fake_judge(latency_ms=latency_ms)
    config = write_config(
        tmp_path / "run.yaml", dataset, out, judges={"j1": judge}, pipeline={"concurrency": 2}
    )
    judgments = out / JUDGMENTS_FILE
    process = start_cli("run", config)
    try:
        _wait_for((out / "manifest.json").exists, 60)
        _wait_for(lambda: _line_count(judgments) >= wait_lines, 60)
        sent = time.monotonic()
        process.send_signal(signum)
        code = process.wait(timeout=30)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
        _, stderr = process.communicate(timeout=10)

    assert code == 128 + signum, stderr
    assert took <= 5.0
    manifest = _manifest(out)
    assert manifest["status"] == "interrupted"
    written = lines(judgments)
    assert manifest["records"] == len(written)
    assert manifest["status_counts"]["ok"] == len(written)  # type: ignore[index]
    assert f"Interrupted by {signal.Signals(signum).name}" in stderr
    assert f"--resume {out}" in stderr

    # The resume (in-process, with the same config but an instant judge) finishes it exactly.
    instant = Runtime(providers={"j1": FakeProvider("fake-model")})
    summary = asyncio.run(
        run_async(load_config(config), output_dir=out, resume=True, runtime=instant)
    )
    records = lines(judgments)
    assert summary.units_run == summary.units_total - len(written)
    assert len(records) == summary.units_total
    assert set(Counter(r["key"] for r in records).values()) == {1}
    assert records[: len(written)] == written
    assert _manifest(out)["status"] == "complete"
