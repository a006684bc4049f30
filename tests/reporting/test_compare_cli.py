"""``jurybox compare`` end to end: two runs of examples/pairwise.yaml with different prompts."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from jurybox.app.run import run_from_config
from jurybox.cli import main
from jurybox.io.record_table import read_judgments

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run_example(tmp: Path, name: str, **task: Any) -> Path:
    """examples/pairwise.yaml run into tmp/name with ``task`` settings changed."""
    config = yaml.safe_load((EXAMPLES / "pairwise.yaml").read_text(encoding="utf-8"))
    config["task"].update(task)
    config["paths"]["output_dir"] = name
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run_from_config(path, console=Console(quiet=True))
    return tmp / name


def _changed_units(a: Path, b: Path, judge: str) -> int:
    """Units (item × order, first repeat) whose winner differs: counted from the files alone."""
    winners: dict[tuple[str, str], list[str | None]] = defaultdict(list)
    for run in (a, b):
        for rec in read_judgments(run / "judgments.jsonl").records():
            if rec.judge_name == judge and not rec.retest and rec.status == "ok":
                winners[(rec.query_id, rec.presentation_order)].append(rec.preferred_arm)
    return sum(1 for w in winners.values() if len(w) == 2 and w[0] != w[1])


def test_compare_two_prompts_of_the_example_config(tmp_path: Path) -> None:
    for name in ("items.jsonl", "human_labels.jsonl"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    plain = _run_example(tmp_path, "plain", reference_guided=False)
    guided = _run_example(tmp_path, "guided", reference_guided=True)  # adds the expected answer
    out = tmp_path / "cmp"
    result = CliRunner().invoke(
        main,
        [
            "compare",
            str(plain),
            str(guided),
            "--out",
            str(out),
            "--human",
            str(tmp_path / "human_labels.jsonl"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    comparison = report["comparisons"][0]
    judges = {j["judge_a"]: j for j in comparison["judges"]}
    assert {j["matched_by"] for j in judges.values()} == {"name"}
    assert set(judges) == {"first_pick", "long_pick", "coin"}
    assert "study_skipped" not in comparison  # verdict-only runs: ADR-016 does not apply
    assert report["runs"][0]["items_source"].endswith("items.jsonl (from the run's manifest)")
    # position and length pickers ignore the prompt; the coin is reseeded by it
    assert judges["first_pick"]["verdicts"]["n_changed"] == 0
    coin = judges["coin"]["verdicts"]
    assert coin["n_changed"] == _changed_units(plain, guided, "coin") > 0
    accuracy = coin["accuracy"]
    diff = accuracy["difference"]
    # the mean over items of each item's share (retests included), not the pooled share
    assert diff["value"] == pytest.approx(diff["p_y"] - diff["p_x"])
    assert accuracy["n_items"] == diff["n"] == accuracy["accuracy_a"]["n_clusters"] == 20
    assert accuracy["n_judgments_a"] > 2 * accuracy["n_items"]  # both orders and the retests
    assert diff["ci_low"] <= diff["value"] <= diff["ci_high"]
    assert 0 <= accuracy["mcnemar"]["p_value"] <= 1
    assert accuracy["mcnemar"]["method"]
    assert "href" not in coin["changed"][0]  # links are the pages', relative to where they are
    headlines = {h["judge_a"]: h for h in comparison["headlines"]}
    assert headlines["first_pick"]["answer"] == "no evidence"  # no verdict changed
    assert "discordant" in headlines["first_pick"]["reason"]
    assert headlines["coin"]["n_tested"] == 1  # the one judge whose verdicts changed
    changes = {c["setting"]: c for c in comparison["config_changes"]}
    assert changes["task.reference_guided"] == {
        "setting": "task.reference_guided",
        "value_a": "false",
        "value_b": "true",
    }
    assert "paths.output_dir" not in changes
    assert {t["judge"] for t in report["runs"][0]["trust"]} == {"first_pick", "long_pick", "coin"}
    mcnemar_first = judges["first_pick"]["verdicts"]["accuracy"]["mcnemar"]
    assert mcnemar_first["value"] is None and "discordant" in mcnemar_first["reason"]
    html = (out / "compare.html").read_text(encoding="utf-8")
    assert "Verdict accuracy" in html and "<script" not in html
    assert "B − A" in (out / "compare.md").read_text(encoding="utf-8")


def test_compare_needs_two_runs(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["compare", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "at least two runs" in result.output


def test_runs_without_shared_items_are_a_clear_error(tmp_path: Path) -> None:
    runs = []
    for name, prefix in (("a", "x"), ("b", "y")):
        folder = tmp_path / name
        folder.mkdir()
        line = json.dumps(
            {
                "key": f"{prefix}1|j|single|r0",
                "run_id": "r",
                "query_id": f"{prefix}1",
                "judge_name": "j",
                "judge_model": "m",
                "judge_vendor": "fake",
                "mode": "criterion",
                "presentation_order": "single",
                "positions": {"A": "only"},
                "status": "ok",
                "parse_success": True,
                "raw_response": "{}",
                "timestamp": "2026-01-01T00:00:00Z",
                "verdict": "Pass",
            }
        )
        (folder / "judgments.jsonl").write_text(line + "\n", encoding="utf-8")
        runs.append(str(folder))
    result = CliRunner().invoke(main, ["compare", *runs, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "share no item id" in result.output
    assert not (tmp_path / "o").exists()


def test_compare_of_a_missing_run_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["compare", str(tmp_path / "nope"), str(tmp_path / "nope2"), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 2
    assert "judgments file not found" in result.output
    assert not (tmp_path / "o").exists()


def test_adr016_example_pair_runs_and_reports_the_study(tmp_path: Path) -> None:
    """examples/adr016: a rubric run and a holistic run compared; the fake judges' scores are
    noise, so only the study's presence and shape are checked, not its values."""
    shutil.copytree(EXAMPLES / "adr016", tmp_path / "adr016")
    shutil.copy(EXAMPLES / "items.jsonl", tmp_path / "items.jsonl")
    for name in ("rubric", "holistic"):
        run_from_config(tmp_path / "adr016" / f"{name}.yaml", console=Console(quiet=True))
    results = tmp_path / "adr016" / "results"
    out = results / "compare"
    result = CliRunner().invoke(
        main,
        ["compare", str(results / "rubric"), str(results / "holistic"), "--out", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    study = report["comparisons"][0]["study"]
    assert study["holistic_dimension"] == "quality"
    assert {row["dimension"] for row in study["dimensions"]} == {
        "accuracy",
        "relevance",
        "completeness",
        "conciseness",
        "clarity",
    }
    rubric = next(s for s in report["studies"] if s["run"] == "A")
    assert rubric["conciseness_dimension"] == "conciseness"
    assert rubric["conciseness_length"]["n"] == 78  # 39 items x 2 arms, lengths from the manifest
    assert rubric["ranking_stability"]["n_judges"] == 3
    assert "Score study (ADR-016)" in (out / "compare.html").read_text(encoding="utf-8")
