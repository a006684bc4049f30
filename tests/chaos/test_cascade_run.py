"""``jurybox cascade CONFIG``: the cascade as a fresh run (issue 36) against two scripted loopback
judges through the real ``openai_compatible`` adapter.

The cheap judge is right on every item except the ones marked ``[HARD]``, where it prefers the
response shown first with low confidence (its two orders disagree: no verdict). Calibrated on the
labelled split, it decides the other items; the strong judge (always right) must be called on the
hard items only — counted at its server — and decide them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jurybox.analysis.cascade import CascadeOptions
from jurybox.app.cascade_run import CascadeSchedule, fresh_cascade, plan_cascade
from jurybox.cli import main
from jurybox.config import load_config
from jurybox.io.judgments import read_records
from jurybox.pipeline.runner import load_inputs

from .conftest import StartServer
from .helpers import write_config, write_marked_items

ITEMS = 400
LABELLED = 300
HARD_NUMBERS = range(0, ITEMS, 4)
HARD = {f"q{i:04d}" for i in HARD_NUMBERS}


def _judge(url: str) -> dict[str, Any]:
    return {
        "provider": "openai_compatible",
        "model": "wire-judge",
        "base_url": url,
        "api_key_env": None,
        "concurrency": 8,
    }


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_strong_judge_is_called_only_on_the_escalated_items(
    tmp_path: Path, wire_server: StartServer
) -> None:
    cheap = wire_server(pick="marked", unsure_mark="[HARD]", seed=1)
    strong = wire_server(pick="marked", seed=2)
    run_dir, out = tmp_path / "run", tmp_path / "cascade"
    dataset = write_marked_items(
        tmp_path / "items.jsonl", ITEMS, labelled=LABELLED, hard=HARD_NUMBERS
    )
    config = write_config(
        tmp_path / "run.yaml",
        {
            "judges": {"cheap": _judge(cheap.url), "strong": _judge(strong.url)},
            "task": {"mode": "pairwise"},
            "pipeline": {"cache": False, "test_retest_count": 5},
            "paths": {"dataset": str(dataset), "output_dir": str(run_dir)},
        },
    )
    options = CascadeOptions(judges=("cheap", "strong"), target=0.9, delta=0.1)
    report, paths = fresh_cascade(config, options, out_dir=out)

    assert cheap.stats()["requests"] == 2 * ITEMS  # every item, both orders, no retest
    assert strong.stats()["requests"] == 2 * len(HARD)  # only where the cheap judge was unsure
    by_judge: dict[str, set[str]] = {}
    for record in read_records(run_dir):
        by_judge.setdefault(record.judge_name, set()).add(record.query_id)
    assert by_judge == {"cheap": {f"q{i:04d}" for i in range(ITEMS)}, "strong": HARD}

    decisions = [json.loads(line) for line in (out / "decisions.jsonl").read_text().splitlines()]
    assert {d["query_id"] for d in decisions if d["decided_by"] == "strong"} == HARD
    assert all(d["decided_by"] == "cheap" for d in decisions if d["query_id"] not in HARD)
    run = report.fresh_run
    assert run is not None and run.called == {"cheap": ITEMS, "strong": len(HARD)}
    assert run.needs_human == 0 and report.needs_human == 0
    assert run.cost_strongest_alone is not None and run.cost_ratio is not None
    assert report.cascade.agreement == 1.0 and report.cascade.meets_target
    assert [s.threshold for s in report.stages] == [1.0, 1.0]
    assert report.strongest_alone is None  # not measurable in a fresh run
    saved = json.loads(paths.json.read_text())
    assert saved["fresh_run"]["called"] == {"cheap": ITEMS, "strong": len(HARD)}
    assert (out / "needs_human.jsonl").read_text() == ""

    # The schedule's state is the records': replayed, it stands where the run ended; given
    # the cheap judge's records alone, its next round is the strong judge on the hard items.
    inputs = load_inputs(load_config(config))
    flags = json.loads((run_dir / "manifest.json").read_text())["options"]["cascade"]
    _, replay = plan_cascade(inputs, flags)
    records = list(read_records(run_dir))
    replay.begin(records)
    assert replay.next_round() == [] and replay.finished
    _, part = plan_cascade(inputs, flags)
    assert isinstance(part, CascadeSchedule)
    part.begin(r for r in records if r.judge_name == "cheap")
    assert {u.item_id for u in part.next_round()} == HARD and part.judges() == ["strong"]

    # A resume of the finished run calls nobody; `jurybox run --resume` is refused.
    before = cheap.stats()["requests"] + strong.stats()["requests"]
    args = ["cascade", str(config), "--judges", "cheap,strong", "--out", str(out)]
    again = CliRunner().invoke(main, [*args, "--resume", str(run_dir)])
    assert again.exit_code == 0, again.output
    assert cheap.stats()["requests"] + strong.stats()["requests"] == before
    other = CliRunner().invoke(main, [*args, "--resume", str(run_dir), "--target", "0.8"])
    assert other.exit_code == 2 and "--target differ" in other.output
    refused = CliRunner().invoke(main, ["run", str(config), "--resume", str(run_dir)])
    assert refused.exit_code == 2
    assert "jurybox cascade" in refused.output and "--judges cheap,strong" in refused.output
