"""calibrate on dev and test, freezing rules, history and estimate, with a scripted judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.devloop import calibrate_command, estimate_command, load_devloop
from jurybox.devloop.state import read_history
from jurybox.errors import ConfigError
from jurybox.io.datasets import load_dataset
from jurybox.providers import registry
from jurybox.providers.fake import FakeProvider
from jurybox.stats import rogan_gladen

from .helpers import copy_criteria, scripted_judge, trace_questions, write_loop

FAKE = {"provider": "fake", "model": "scripted"}


def _ids(split: Path, name: str, label: str) -> list[str]:
    items = load_dataset(split / f"{name}.jsonl")
    return [item.id for item in items if item.human["verdict"]["assistant"] == label]


def _questions(split: Path, name: str, ids: list[str]) -> list[str]:
    return [item.question for item in load_dataset(split / f"{name}.jsonl") if item.id in ids]


@pytest.fixture
def loop_config(tmp_path: Path, example_split: Path) -> Path:
    (criterion,) = copy_criteria(tmp_path / "criteria", "next_step.yaml")
    return write_loop(tmp_path / "loop.yaml", example_split, [criterion], judge=FAKE)


def _run(config: Path, split: str, judge: FakeProvider, **options: Any) -> Any:
    lines: list[str] = []
    report = calibrate_command(
        config, split, echo=lines.append, providers={"next_step": judge}, **options
    )
    return report, "\n".join(lines)


def _edit_prompt(config: Path) -> None:
    path = config.parent / "criteria" / "next_step.yaml"
    data = yaml.safe_load(path.read_text())
    data["decision_rules"].append("A link to a help page counts only with what to do there.")
    path.write_text(yaml.safe_dump(data))


def test_dev_figures_and_disagreements(loop_config: Path, example_split: Path) -> None:
    false_fails = _ids(example_split, "dev", "Pass")[:2]
    false_pass = _ids(example_split, "dev", "Fail")[:1]
    flips = _questions(example_split, "dev", false_fails + false_pass)
    report, text = _run(loop_config, "dev", scripted_judge(flips))
    (result,) = report.criteria
    assert (result.confusion.tp, result.confusion.fn) == (11, 2)
    assert (result.confusion.tn, result.confusion.fp) == (11, 1)
    assert result.rates.tpr.estimate == pytest.approx(11 / 13)
    assert result.rates.tnr.estimate == pytest.approx(11 / 12)
    assert result.rates.tpr.ci_low < 11 / 13 < result.rates.tpr.ci_high
    kinds = {d.item_id: d.kind for d in result.disagreements}
    assert kinds == {
        false_fails[0]: "false fail",
        false_fails[1]: "false fail",
        false_pass[0]: "false pass",
    }
    assert all(d.reasoning.startswith("scripted for") for d in result.disagreements)
    assert "TPR 0.846  [" in text and "target 0.85: BELOW" in text
    assert "TNR 0.917  [" in text and "target 0.85: met" in text
    assert f"false pass {false_pass[0]}" in text and "reasoning: scripted for" in text
    files = report.files
    assert files["json"].name == "calibrate-dev.json" and files["markdown"].exists()
    saved = json.loads(files["json"].read_text())
    assert saved["criteria"][0]["rates"]["tpr"]["estimate"] == pytest.approx(11 / 13)


def test_each_iteration_is_recorded_with_its_prompt_hash(loop_config: Path) -> None:
    _run(loop_config, "dev", scripted_judge())
    judge = scripted_judge()
    _run(loop_config, "dev", judge)
    assert judge.calls == 0  # same prompt: the run folder is resumed, nothing is re-judged
    _edit_prompt(loop_config)
    third, text = _run(loop_config, "dev", scripted_judge())
    history = list(read_history(loop_config.parent / "runs"))
    assert [h["iteration"] for h in history] == [1, 2, 3]
    hashes = [h["prompt_hash"] for h in history]
    assert hashes[0] == hashes[1] != hashes[2] == third.criteria[0].prompt_hash
    assert all(h["split"] == "dev" and h["criterion"] == "next_step" for h in history)
    assert "(iteration 3 on dev)" in text


def test_test_split_needs_freeze_and_freeze_needs_test(loop_config: Path) -> None:
    with pytest.raises(ConfigError, match="add --freeze"):
        _run(loop_config, "test", scripted_judge())
    with pytest.raises(ConfigError, match="use --split test"):
        _run(loop_config, "dev", scripted_judge(), freeze=True)
    runner = CliRunner()
    assert runner.invoke(main, ["calibrate", str(loop_config), "--split", "test"]).exit_code == 2


def test_freeze_writes_the_test_figures(loop_config: Path, example_split: Path) -> None:
    report, text = _run(loop_config, "test", scripted_judge(), freeze=True)
    (result,) = report.criteria
    assert result.frozen and not result.test_reused
    assert "frozen: prompt" in text and "REUSED" not in text
    frozen = json.loads((loop_config.parent / "runs" / "next_step" / "frozen.json").read_text())
    assert frozen["prompt_hash"] == result.prompt_hash
    assert len(frozen["test"]["items"]) == 25 and frozen["test"]["tpr"] == 1.0
    # freezing the same prompt again is allowed and is not a reuse
    again, text = _run(loop_config, "test", scripted_judge(), freeze=True)
    assert not again.criteria[0].test_reused and "REUSED" not in text


def test_refreezing_a_changed_prompt_is_refused_without_force(
    loop_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, _ = _run(loop_config, "test", scripted_judge(), freeze=True)
    _edit_prompt(loop_config)
    judge = scripted_judge()
    with pytest.raises(ConfigError, match="already measured with prompt") as excinfo:
        _run(loop_config, "test", judge, freeze=True)
    assert first.criteria[0].prompt_hash[:12] in str(excinfo.value)
    assert "--force" in str(excinfo.value) and judge.calls == 0
    assert len(list(read_history(loop_config.parent / "runs"))) == 1  # nothing recorded
    monkeypatch.setitem(registry._REGISTERED, "fake", lambda name, judge: scripted_judge())
    refused = CliRunner().invoke(
        main, ["calibrate", str(loop_config), "--split", "test", "--freeze"]
    )
    assert refused.exit_code == 2 and "already measured" in refused.output
    forced = CliRunner().invoke(
        main, ["calibrate", str(loop_config), "--split", "test", "--freeze", "--force"]
    )
    assert forced.exit_code == 0, forced.output
    assert "TEST SET REUSED" in forced.output
    assert first.criteria[0].prompt_hash[:12] in forced.output
    frozen = json.loads((loop_config.parent / "runs" / "next_step" / "frozen.json").read_text())
    assert frozen["test_reused"] is True and len(frozen["test_prompt_hashes"]) == 2
    history = list(read_history(loop_config.parent / "runs"))
    assert history[-1]["test_reused"] is True and history[-1]["forced"] is True
    estimated = CliRunner().invoke(main, ["estimate", str(loop_config)])
    assert estimated.exit_code == 0, estimated.output
    assert "TEST SET REUSED when this prompt was frozen" in estimated.output


def test_estimate_needs_a_frozen_unchanged_prompt(loop_config: Path) -> None:
    with pytest.raises(ConfigError, match="is not frozen"):
        estimate_command(loop_config, None, echo=print, providers={"next_step": scripted_judge()})
    _run(loop_config, "test", scripted_judge(), freeze=True)
    _edit_prompt(loop_config)
    with pytest.raises(ConfigError, match="changed since it was frozen"):
        estimate_command(loop_config, None, echo=print, providers={"next_step": scripted_judge()})


def test_estimate_figures(loop_config: Path, example_split: Path) -> None:
    flips = _questions(example_split, "test", _ids(example_split, "test", "Pass")[:2])
    flips += _questions(example_split, "test", _ids(example_split, "test", "Fail")[:1])
    _run(loop_config, "test", scripted_judge(flips), freeze=True)
    passing = trace_questions()[:30]  # 30 of 40 traces judged Pass
    lines: list[str] = []
    report = estimate_command(
        loop_config,
        None,
        target_half_width=0.1,
        echo=lines.append,
        providers={"next_step": scripted_judge(trace_pass=passing)},
    )
    (result,) = report.criteria
    assert result.raw is not None and result.raw.estimate == 0.75 and result.n_test == 25
    assert result.corrected is not None
    expected = rogan_gladen(0.75, 11 / 13, 11 / 12).estimate
    assert result.corrected.estimate == pytest.approx(expected)
    assert result.corrected.ci_low < expected < result.corrected.ci_high
    text = "\n".join(lines)
    assert "raw pass rate        0.750" in text
    assert f"corrected pass rate  {expected:.3f}" in text
    assert "to reach ±0.100" in text and "projection by simulation" in text
    assert (loop_config.parent / "runs" / "estimate.json").exists()


def test_model_is_part_of_the_prompt_hash(tmp_path: Path, example_split: Path) -> None:
    (criterion,) = copy_criteria(tmp_path / "c", "next_step.yaml")
    one = write_loop(tmp_path / "a.yaml", example_split, [criterion], judge=FAKE)
    two = write_loop(tmp_path / "b.yaml", example_split, [criterion], judge={**FAKE, "model": "x"})
    assert load_devloop(one).criteria[0].prompt_hash != load_devloop(two).criteria[0].prompt_hash


def test_several_criteria_in_one_report_code_first(tmp_path: Path, example_split: Path) -> None:
    criteria = copy_criteria(
        tmp_path / "c", "next_step.yaml", "has_pointer.yaml", "imperative_step.yaml"
    )
    config = write_loop(tmp_path / "loop.yaml", example_split, criteria, judge=FAKE)
    report, text = _run(config, "dev", scripted_judge())
    names = [result.criterion for result in report.criteria]
    assert names == ["has_pointer", "imperative_step", "next_step"]
    assert text.index("criterion has_pointer") < text.index("criterion next_step")
    assert [r.describe for r in report.criteria] == [
        "code: regex",
        "code: python",
        "llm: fake/scripted",
    ]
    history = list(read_history(tmp_path / "runs"))
    assert [h["criterion"] for h in history] == names


def test_refreeze_is_refused_even_when_the_history_is_lost(loop_config: Path) -> None:
    _run(loop_config, "test", scripted_judge(), freeze=True)
    (loop_config.parent / "runs" / "history.jsonl").unlink()
    _edit_prompt(loop_config)
    with pytest.raises(ConfigError, match="already measured with prompt"):
        _run(loop_config, "test", scripted_judge(), freeze=True)
