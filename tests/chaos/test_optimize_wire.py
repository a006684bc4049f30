"""``jurybox optimize`` against a loopback judge through the real ``openai_compatible`` adapter
(issue 37's checks), with ``bench/wire_server.py``'s rule judge: right only when its prompt holds
the rule word, else it picks the response shown first.

* 120 labelled pairwise items and six instruction variants, one holding the word: optimize picks
  it, its test accuracy is ≥ 0.95 where the base prompt scores 0.5, and no test item's question
  reaches the server before the test pass (the server's request log, in order);
* SIGKILLed during the search (a real subprocess) and resumed: no judgment recorded before the
  kill is asked again, only those in flight are, and the result is the uninterrupted one's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from jurybox.cli import main
from optimize_helpers import MARKER, RULE, SIX_VARIANTS, questions, write_items

from .conftest import StartServer
from .helpers import kill_when, run_cli


def _configs(folder: Path, url: str, n: int, variants: list[dict[str, str]], **extra: Any) -> Path:
    write_items(folder, n)
    base = {
        "judges": {
            "rules": {
                "provider": "openai_compatible",
                "model": "wire-judge",
                "base_url": url,
                "api_key_env": None,
                "concurrency": extra.pop("concurrency", 4),
                "timeout_s": 30.0,
            }
        },
        "task": {"mode": "pairwise", "arms": ["control", "treatment"]},
        "pipeline": {"random_seed": 7, "test_retest_count": 0, "retry_base_s": 0.01},
        "paths": {"dataset": "items.jsonl", "output_dir": "results/run"},
    }
    (folder / "judge.yaml").write_text(yaml.safe_dump(base), encoding="utf-8")
    (folder / "variants.yaml").write_text(yaml.safe_dump(variants), encoding="utf-8")
    optimize = {
        "base": "judge.yaml",
        "instructions": "variants.yaml",
        "output_dir": "results/optimize",
        **extra,
    }
    path = folder / "optimize.yaml"
    path.write_text(yaml.safe_dump(optimize), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_optimize_finds_the_rule_and_never_shows_test_before_the_test_pass(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(rule_word=RULE, rule_marker=MARKER, record_bodies=True)
    config = _configs(tmp_path, server.url, 120, SIX_VARIANTS)

    result = CliRunner().invoke(
        main, ["optimize", str(config), "--budget-calls", "600"], catch_exceptions=False
    )

    assert result.exit_code == 0, result.output
    out = tmp_path / "results" / "optimize"
    report = json.loads((out / "optimize_report.json").read_text(encoding="utf-8"))
    names = {c["id"]: c["name"] for c in report["candidates"]}
    assert names[report["winner"]["id"]] == "rule"
    assert report["winner"]["test"]["score"] >= 0.95
    assert report["candidates"][0]["name"] == "base"
    assert report["candidates"][0]["dev"]["score"] == 0.5  # the first shown: one order right
    assert report["winner"]["trust"]["level"] == "trusted"
    assert len(report["search"]["rungs"]) > 1  # the budget made it halve
    assert report["spent"]["calls"] <= 600

    # The server's log, in order: every request before the test pass shows a dev item, the
    # test pass shows test items only, and nothing after it.
    split = Path(report["split"]["folder"])
    test_questions = questions(split / "test.jsonl")
    dev_questions = questions(split / "dev.jsonl")
    bodies = [body.decode("utf-8") for body in server.bodies()]
    holds_test = [any(q in body for q in test_questions) for body in bodies]
    first_test = holds_test.index(True)
    assert not any(holds_test[:first_test])
    assert all(holds_test[first_test:])
    assert len(bodies) - first_test == 2 * len(test_questions)  # once, in both orders
    assert all(any(q in body for q in dev_questions) for body in bodies[:first_test])
    assert all(RULE in body for body in bodies[first_test:])

    # The winning config runs as it is and is right where the base prompt is not.
    winner = yaml.safe_load((out / "winner.yaml").read_text(encoding="utf-8"))
    assert winner["task"]["instructions"] == SIX_VARIANTS[1]["text"]

    # A second optimize on the same data refuses to judge the test split again.
    again = CliRunner().invoke(main, ["optimize", str(config), "--out", str(tmp_path / "o2")])
    assert again.exit_code == 2
    assert "was judged" in again.output and "--new-split" in again.output
    assert f"test score {report['winner']['test']['score']:.3f}" in again.output


def _lines(folder: Path) -> int:
    total = 0
    for path in folder.glob("runs/*/judgments.jsonl"):
        total += path.read_bytes().count(b"\n")
    return total


def _units(bodies: list[bytes]) -> list[tuple[str, str]]:
    units = []
    for body in bodies:
        messages = json.loads(body)["messages"]
        units.append((messages[0]["content"], messages[1]["content"]))
    return units


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_killed_optimize_resumes_without_asking_a_recorded_judgment_again(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(rule_word=RULE, rule_marker=MARKER, record_bodies=True, latency_s=0.02)
    config = _configs(tmp_path, server.url, 80, SIX_VARIANTS[:4], concurrency=2)
    out = tmp_path / "results" / "optimize"
    kill_when(  # past the first candidate, inside the search
        ["optimize", str(config), "--budget-calls", "400"],
        lambda: _lines(out) >= 40,
        timeout_s=120.0,
    )
    recorded_at_kill = _lines(out)
    before = _units(server.bodies())
    state = json.loads((out / "state.json").read_text(encoding="utf-8"))
    assert state["stage"] == "searching" and not (out / "test").exists()
    server.reset()

    resumed = run_cli(["optimize", "--resume", str(out)], timeout=240)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    after = _units(server.bodies())

    asked_again = set(before) & set(after)
    in_flight = len(before) - recorded_at_kill  # asked before the kill, never recorded
    assert len(set(before)) == len(before) and len(set(after)) == len(after)
    assert len(asked_again) <= in_flight <= 2  # concurrency 2: at most two calls in flight
    for path in out.glob("runs/*/judgments.jsonl"):  # one record per judgment
        keys = [json.loads(line)["key"] for line in path.read_text("utf-8").splitlines()]
        assert len(keys) == len(set(keys))
    report = json.loads((out / "optimize_report.json").read_text(encoding="utf-8"))
    assert report["winner"]["name"] == "rule"
    assert report["winner"]["test"]["score"] == 1.0
