"""What a kill -9 costs: the calls in flight at that moment never answered the run, so the resume
makes them again. README states the bound (at most each judge's ``concurrency`` calls); this
holds a run to it, against the loopback wire server counting every request it is sent
(issue 31, item 11).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import StartServer
from .helpers import (
    count_lines,
    kill_when,
    planned_keys,
    run_cli,
    run_config,
    split_jsonl,
    write_config,
    write_items,
)

IN_FLIGHT = 32  # the judge's concurrency: the most calls a kill can leave unanswered
ITEMS = 60  # 120 pairwise units + 5 retests


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_resume_after_kill_9_repeats_at_most_the_calls_in_flight(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(latency_s=0.5, seed=3)
    dataset = write_items(tmp_path / "items.jsonl", ITEMS)
    run_dir = tmp_path / "run"
    judge = {"provider": "openai_compatible", "concurrency": IN_FLIGHT}
    config = write_config(
        tmp_path / "run.yaml", run_config(dataset, run_dir, server.url, judge=judge)
    )
    units = len(planned_keys(config))
    judgments = run_dir / "judgments.jsonl"

    kill_when(["run", str(config)], lambda: count_lines(judgments) >= IN_FLIGHT, timeout_s=90)
    time.sleep(1.0)  # what the killed client had sent reaches the server's count
    written = len(split_jsonl(judgments)[0])
    sent = server.stats()["requests"]
    unanswered = sent - written  # sent before the kill, never recorded
    assert written < units, "the kill must land mid-run"
    assert 1 <= unanswered <= IN_FLIGHT, (sent, written)

    resumed = run_cli(["run", str(config), "--resume", str(run_dir)], timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    total = server.stats()["requests"]
    assert total - sent <= units - written  # the resume makes only the calls not recorded
    assert units < total <= units + IN_FLIGHT, (units, total)
    rows, torn = split_jsonl(judgments)
    assert torn == b"" and sorted(row["key"] for row in rows) == sorted(planned_keys(config))

    again = run_cli(["run", str(config), "--resume", str(run_dir)], timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert server.stats()["requests"] == total, "a finished run resumed made a call"
