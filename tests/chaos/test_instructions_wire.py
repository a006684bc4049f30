"""``task.instructions`` reach the judge, change what it decides, and ``jurybox show`` prints
what went over the wire: against a loopback judge (``bench/wire_server.py``'s rule judge) that
is right only when its prompt holds a rule word, through the real ``openai_compatible`` adapter
and the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from jurybox.cli import main
from optimize_helpers import MARKER, write_items

from .conftest import StartServer

RULE_WORD = "checkmark-rule"
ITEMS = 12


def _invoke(*argv: str) -> str:
    result = CliRunner().invoke(main, list(argv), catch_exceptions=False)
    assert result.exit_code == 0, f"jurybox {' '.join(argv)}\n{result.output}"
    return result.output


def _config(folder: Path, name: str, url: str, instructions: str | None) -> Path:
    task: dict[str, Any] = {"mode": "pairwise", "arms": ["control", "treatment"]}
    if instructions is not None:
        task["instructions"] = instructions
    mapping = {
        "judges": {
            "rules": {
                "provider": "openai_compatible",
                "model": "wire-judge",
                "base_url": url,
                "api_key_env": None,
                "concurrency": 4,
            }
        },
        "task": task,
        # One response cache for every run here: a new prompt must not be answered from it.
        "pipeline": {
            "random_seed": 7,
            "position_bias_mode": "both",
            "test_retest_count": 4,
            "cache_path": str(folder / "cache.sqlite"),
        },
        "paths": {"dataset": "items.jsonl", "output_dir": f"results/{name}"},
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(mapping), encoding="utf-8")
    return path


def _run_and_analyze(config: Path, run_dir: Path) -> dict[str, Any]:
    _invoke("run", str(config))
    _invoke("analyze", str(run_dir), "--out", str(run_dir / "report"), "--no-plots")
    report: dict[str, Any] = json.loads(
        (run_dir / "report" / "analysis_report.json").read_text(encoding="utf-8")
    )
    return report


def _accuracy(report: dict[str, Any]) -> float:
    value: float = report["accuracy_vs_gold"]["judges"]["rules"]["pooled"]["value"]
    return value


def _messages(body: bytes) -> tuple[str, str]:
    sent = json.loads(body)["messages"]
    assert [message["role"] for message in sent] == ["system", "user"]
    return sent[0]["content"], sent[1]["content"]


@pytest.fixture
def runs(tmp_path: Path, wire_server: StartServer) -> dict[str, Any]:
    server = wire_server(rule_word=RULE_WORD, rule_marker=MARKER, record_bodies=True)
    write_items(tmp_path, ITEMS)
    plain = _config(tmp_path, "v1", server.url, None)
    rule = f"Prefer the response marked {MARKER} ({RULE_WORD})."
    ruled = _config(tmp_path, "v2", server.url, rule)
    results = tmp_path / "results"
    report_v1 = _run_and_analyze(plain, results / "v1")
    bodies_v1 = server.bodies()
    server.reset()
    report_v2 = _run_and_analyze(ruled, results / "v2")
    return {
        "root": tmp_path,
        "v1": (results / "v1", report_v1, bodies_v1),
        "v2": (results / "v2", report_v2, server.bodies()),
    }


def test_instructions_turn_a_first_position_judge_into_a_right_one(runs: dict[str, Any]) -> None:
    _, report_v1, bodies_v1 = runs["v1"]
    _, report_v2, bodies_v2 = runs["v2"]
    calls = ITEMS * 2 + 4  # both orders of every item, and four retests
    # v2 ran after v1 with the same response cache: its prompts are new, so every call went out
    assert len(bodies_v1) == len(bodies_v2) == calls
    assert not any(RULE_WORD.encode() in body for body in bodies_v1)
    for body in bodies_v2:  # the rule sits in the system part, fenced as the criteria
        system, user = _messages(body)
        assert f"<evaluation_criteria>\nPrefer the response marked {MARKER} ({RULE_WORD})." in (
            system
        )
        assert RULE_WORD not in user
    assert _accuracy(report_v1) == 0.5
    assert report_v1["verdict"]["judges"]["rules"]["level"] == "not_trusted"
    assert _accuracy(report_v2) == 1.0
    assert report_v2["verdict"]["judges"]["rules"]["level"] == "trusted"


def test_compare_says_the_instructions_made_the_judge_better(runs: dict[str, Any]) -> None:
    (v1, _, _), (v2, _, _) = runs["v1"], runs["v2"]
    out = runs["root"] / "comparisons" / "v1_v2"
    printed = _invoke("compare", str(v1), str(v2), "--out", str(out))
    assert "did B judge better than A? rules: better" in printed
    report = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    (comparison,) = report["comparisons"]
    (headline,) = comparison["headlines"]
    assert headline["judge_a"] == headline["judge_b"] == "rules"
    assert (headline["answer"], headline["measure"]) == ("better", "accuracy")
    # every item: right in one order of two in v1 (the first shown), in every judgment in v2
    assert (headline["value_a"], headline["value_b"], headline["n_items"]) == (0.5, 1.0, ITEMS)
    assert headline["p_value"] == pytest.approx(2 * 0.5**12)  # sign test: 12 items up, 0 down
    assert "n_units" not in headline  # the item is the unit, not its orders and retests
    accuracy = comparison["judges"][0]["verdicts"]["accuracy"]
    assert accuracy["n_judgments_a"] == accuracy["n_judgments_b"] == ITEMS * 2 + 4
    assert accuracy["difference"]["ci_low"] > 0
    assert (headline["trust_a"], headline["trust_b"]) == ("not_trusted", "trusted")
    changes = {change["setting"]: change for change in comparison["config_changes"]}
    assert set(changes) == {"task.instructions"}  # output folders are not a change
    assert (
        f"+Prefer the response marked {MARKER} ({RULE_WORD})."
        in changes["task.instructions"]["diff"]
    )
    html = (out / "compare.html").read_text(encoding="utf-8")
    assert "Did B judge better than A?" in html
    assert 'href="../../results/v2/report/report.html#items?item=' in html


def test_compare_says_worse_reversed_and_no_evidence_for_the_same_run(
    runs: dict[str, Any],
) -> None:
    (v1, _, _), (v2, _, _) = runs["v1"], runs["v2"]
    root = runs["root"] / "comparisons"
    reversed_ = _invoke("compare", str(v2), str(v1), "--out", str(root / "v2_v1"))
    assert "did B judge better than A? rules: worse" in reversed_
    assert "(<30 items)" in reversed_  # 12 items: the figures say so, as analyze's do
    report = json.loads((root / "v2_v1" / "compare.json").read_text(encoding="utf-8"))
    (headline,) = report["comparisons"][0]["headlines"]
    assert headline["difference"] == -0.5 and headline["ci_high"] < 0
    same = _invoke("compare", str(v2), str(v2), "--out", str(root / "v2_v2"))
    assert "did B judge better than A? rules: no evidence" in same
    report = json.loads((root / "v2_v2" / "compare.json").read_text(encoding="utf-8"))
    (headline,) = report["comparisons"][0]["headlines"]
    assert headline["difference"] == 0 and headline["ci_low"] < 0 < headline["ci_high"]
    assert "discordant" in headline["reason"]


def test_show_prints_exactly_what_the_server_received(runs: dict[str, Any]) -> None:
    run_dir, _, bodies = runs["v2"]
    received = {_messages(body) for body in bodies}
    every = json.loads(_invoke("show", str(run_dir), "q003", "--json"))
    assert len(every) >= 2  # both orders (and a retest, where the item drew one)
    for judgment in every:
        assert (judgment["system"], judgment["user"]) in received
    shown = json.loads(_invoke("show", str(run_dir), "q003", "--no-retest", "--json"))
    assert sorted(one["order"] for one in shown) == ["control_first", "treatment_first"]
    order = shown[0]["order"]
    args = (str(run_dir), "q003", "--judge", "rules", "--order", order, "--repeat", "0")
    args += ("--no-retest",)
    system = _invoke("show", *args, "--part", "system")
    user = _invoke("show", *args, "--part", "user")
    assert (system, user) == (shown[0]["system"], shown[0]["user"])
    assert (system, user) in received
    text = _invoke("show", *args)  # the human-readable form holds both texts unchanged
    assert f"--- system ---\n{system}\n--- user ---\n{user}\n--- answer" in text


@pytest.mark.parametrize(
    ("user", "line", "message"),
    [
        ("{{ question }}\n{{ response_a }}\nWhich?\n", 2, "Response B is never printed"),
        ("{{ response_a }}\n\n{{ response_b|string|replace('<', '') }}\n", 3, "printed whole"),
        ("{% set t %}{{ response_a }}{% endset %}\n{{ t }}{{ response_b }}\n", 1, "not allowed"),
    ],
)
def test_a_bad_template_is_refused_before_any_call(
    tmp_path: Path, wire_server: StartServer, user: str, line: int, message: str
) -> None:
    server = wire_server(record_bodies=True)
    write_items(tmp_path, ITEMS)
    (tmp_path / "system.j2").write_text("Judge the two answers.\n", encoding="utf-8")
    (tmp_path / "user.j2").write_text(user, encoding="utf-8")
    config = _config(tmp_path, "bad", server.url, None)
    mapping = yaml.safe_load(config.read_text(encoding="utf-8"))
    mapping["task"]["template"] = {"system": "system.j2", "user": "user.j2"}
    config.write_text(yaml.safe_dump(mapping), encoding="utf-8")

    result = CliRunner().invoke(main, ["run", str(config)], catch_exceptions=False)

    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'user.j2'}:{line}, field 'task.template.user': " in result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert server.stats()["requests"] == 0
    assert not (tmp_path / "results" / "bad" / "judgments.jsonl").exists()


def test_the_run_keeps_its_instructions_as_run(tmp_path: Path, wire_server: StartServer) -> None:
    """Edited after the run, the instructions file changes neither what ``show`` prints (the
    manifest keeps the text) nor a resume's judgments (refused)."""
    server = wire_server(rule_word=RULE_WORD, rule_marker=MARKER, record_bodies=True)
    write_items(tmp_path, ITEMS)
    rules = tmp_path / "rules.md"
    rules.write_text(f"Prefer {MARKER} ({RULE_WORD}).\n", encoding="utf-8")
    config = _config(tmp_path, "kept", server.url, "rules.md")
    run_dir = tmp_path / "results" / "kept"
    _invoke("run", str(config))
    sent = {_messages(body) for body in server.bodies()}
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["prompt"] == {"instructions": rules.read_text(encoding="utf-8")}

    rules.write_text("Prefer the shorter answer.\n", encoding="utf-8")
    args = (str(run_dir), "q001", "--order", "control_first", "--no-retest")
    system = _invoke("show", *args, "--part", "system")
    assert RULE_WORD in system and "shorter" not in system
    assert (system, _invoke("show", *args, "--part", "user")) in sent

    result = CliRunner().invoke(main, ["run", str(config), "--resume", str(run_dir)])
    assert result.exit_code == 2
    assert "the instructions or template text" in result.output
