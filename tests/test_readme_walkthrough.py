"""The README's commands work as written, from the project root, in a fresh copy of examples/.

The commands are read from the README's fenced blocks, so the test breaks when the README drifts
from what the program does (a wrong path, a renamed option, a missing file).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner, Result

from jurybox.cli import main
from jurybox.config import LabelsConfig, load_config
from jurybox.io.datasets import load_dataset, load_human_labels
from shared_paths import PROJECT_ROOT

README = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _section(title: str) -> str:
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def _blocks(title: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(_section(title)) if lang == language]


def _commands(title: str) -> list[list[str]]:
    """Every command line of the section's ``bash`` blocks, comments dropped, as argv."""
    blocks = _blocks(title, "bash")
    lines = [line.split(" #")[0].strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line and not line.startswith("#")]


def _invoke(argv: list[str]) -> Result:
    assert argv[0] == "jurybox", f"the walkthrough runs jurybox commands only, not {argv}"
    return CliRunner().invoke(main, argv[1:], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
def test_the_walkthrough_runs_command_by_command(project: Path) -> None:
    commands = _commands("Walkthrough")
    assert len(commands) >= 5
    outputs = []
    for argv in commands:
        result = _invoke(argv)
        assert result.exit_code == 0, f"{shlex.join(argv)}\n{result.output}"
        outputs.append(result.output)
        for flag in ("--out", "--resume"):  # every path the README names is where it says
            if flag in argv:
                assert (project / argv[argv.index(flag) + 1]).exists(), shlex.join(argv)
    run_dir = project / "examples/results/pairwise"
    judgments = (run_dir / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(judgments) == 264  # the figure the walkthrough gives
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert [session["provider_calls"] for session in manifest["sessions"]] == [264, 0]
    ran = next(i for i, argv in enumerate(commands) if argv[1] == "run" and len(argv) == 3)
    analyze = next(argv for argv in commands if argv[1] == "analyze")
    assert f"Next: {shlex.join(analyze)}" in outputs[ran]  # the run printed the next command
    assert (run_dir / "report/report.html").is_file()
    overview = (project / "examples/results/index.html").read_text(encoding="utf-8")
    assert 'href="pairwise/report/report.html"' in overview  # the `view` step
    exported = pd.read_parquet(run_dir / "judgments.parquet")
    assert len(exported) == 264
    assert exported["question"].str.len().gt(0).all()
    # prompt v2: its instructions were sent, `show` prints them, `compare` answers per judge
    shown = outputs[next(i for i, argv in enumerate(commands) if argv[1] == "show")]
    criteria = (project / "examples/pairwise_criteria.md").read_text(encoding="utf-8")
    assert f"<evaluation_criteria>\n{criteria.rstrip()}" in shown
    compared = project / "examples/results/compare"
    report = json.loads((compared / "compare.json").read_text(encoding="utf-8"))
    (comparison,) = report["comparisons"]
    answers = {line["judge_a"]: line["answer"] for line in comparison["headlines"]}
    assert answers == dict.fromkeys(("first_pick", "long_pick", "coin"), "no evidence")
    assert [change["setting"] for change in comparison["config_changes"]] == ["task.instructions"]
    html = (compared / "compare.html").read_text(encoding="utf-8")
    for href in set(re.findall(r'href="([^"#][^"]*)"', html)):  # each resolves from the page
        assert (compared / href.split("#")[0]).resolve().is_file(), href


def test_the_api_key_path_plans_the_panel_without_a_call(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(variable, "not-a-real-key")  # a dry run reads no key, makes no call
    dry_runs = [argv for argv in _commands("Judge with your API keys") if "--dry-run" in argv]
    assert dry_runs, "the API-key section shows a dry run"
    for argv in dry_runs:
        # `.venv/bin/jurybox` is the same command
        result = _invoke([Path(argv[0]).name, *argv[1:]])
        assert result.exit_code == 0, result.output


def _check_the_mapping_is_the_csv_examples(block: str) -> None:
    """The README's column and label mapping is examples/csv_pairwise.yaml's, which runs."""
    shown = yaml.safe_load(block)
    example = load_config(PROJECT_ROOT / "examples/csv_pairwise.yaml")
    assert shown["dataset"]["columns"].items() <= example.dataset.columns.items()
    assert shown["dataset"]["response_columns"] == example.dataset.response_columns
    assert LabelsConfig.model_validate(shown["labels"]) == example.labels


@pytest.mark.slow
def test_bring_your_own_data_examples_load_and_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    items, labels = _blocks("Bring your own data", "jsonl")
    config, mapping = _blocks("Bring your own data", "yaml")
    _check_the_mapping_is_the_csv_examples(mapping)
    assert len(items.strip().splitlines()) == 3
    (tmp_path / "items.jsonl").write_text(items, encoding="utf-8")
    (tmp_path / "labels.jsonl").write_text(labels, encoding="utf-8")
    (tmp_path / "my-eval.yaml").write_text(config, encoding="utf-8")
    assert [item.id for item in load_dataset(tmp_path / "items.jsonl")] == ["q1", "q2", "q3"]
    assert set(load_human_labels(tmp_path / "labels.jsonl")) == {"q1", "q2"}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-real-key")
    result = _invoke(["jurybox", "run", "my-eval.yaml", "--dry-run"])
    assert result.exit_code == 0, result.output
    # The same config with a scripted judge runs and analyses, labels joined.
    fake = config.replace(
        "{provider: anthropic, model: claude-..., api_key_env: ANTHROPIC_API_KEY}",
        "{provider: fake, fake: {behavior: longer}}",
    )
    assert fake != config
    (tmp_path / "my-eval.yaml").write_text(fake, encoding="utf-8")
    assert _invoke(["jurybox", "run", "my-eval.yaml"]).exit_code == 0
    analyzed = _invoke(["jurybox", "analyze", "results/my-eval", "--out", "report", "--no-plots"])
    assert analyzed.exit_code == 0, analyzed.output
    report = json.loads((tmp_path / "report/analysis_report.json").read_text(encoding="utf-8"))
    assert report["summary"]["human_labels"]["preferences"] == 3  # two in the file, one inline
