"""``jurybox show``: a judgment's prompt rebuilt from the run and printed only when its hash is
the record's (the bytes on the wire are checked in tests/chaos/test_instructions_wire.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from rich.console import Console

from jurybox.app.run import run_from_config
from jurybox.app.show import Selection, show_prompts
from jurybox.cli import main
from jurybox.io.record_table import read_judgments

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _show(*argv: str) -> Result:
    return CliRunner().invoke(main, ["show", *argv])


def _run(tmp_path: Path, limit: int = 6, **task: object) -> Path:
    shutil.copy(EXAMPLES / "items.jsonl", tmp_path / "items.jsonl")
    config = yaml.safe_load((EXAMPLES / "pairwise.yaml").read_text(encoding="utf-8"))
    config["task"].update(task)
    config["paths"] = {"dataset": "items.jsonl", "output_dir": "run"}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run_from_config(path, console=Console(quiet=True), limit=limit)
    return tmp_path / "run"


def test_a_batch_prompt_is_rebuilt_with_every_pair_of_its_call(tmp_path: Path) -> None:
    run = _run(tmp_path, batch_size=3, instructions="Prefer the right answer.")
    shown = show_prompts(run, Selection("p02", judge="coin", order="control_first", retest=False))
    (one,) = shown
    assert one.prompt.units == 3  # the call judged three pairs at once
    assert one.prompt.prompt_hash == one.record.prompt_hash
    assert one.prompt.user.count("## Example") == 3
    assert "<evaluation_criteria>\nPrefer the right answer.\n</evaluation_criteria>" in (
        one.prompt.system
    )


def test_a_dataset_changed_since_the_run_is_refused_not_guessed(tmp_path: Path) -> None:
    run = _run(tmp_path)
    items = tmp_path / "items.jsonl"
    items.write_text(items.read_text(encoding="utf-8").replace("Canberra", "Sydney"), "utf-8")
    result = _show(str(run), "p01", "--judge", "coin")
    assert result.exit_code == 2
    assert "does not match the hash it keeps" in result.output
    assert "--- system ---" not in result.output


def test_selection_errors_are_clear(tmp_path: Path) -> None:
    run = _run(tmp_path)
    missing = _show(str(run), "p99")
    assert missing.exit_code == 2 and "no judgment of item 'p99'" in missing.output
    narrow = _show(str(run), "p01", "--judge", "nobody")
    assert narrow.exit_code == 2 and "it has judges coin, first_pick, long_pick" in narrow.output
    many = _show(str(run), "p01", "--part", "user")
    assert many.exit_code == 2 and "--part needs one judgment" in many.output


def test_an_import_has_no_prompts_to_show(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (run / "manifest.json").unlink()
    result = _show(str(run), "p01")
    assert result.exit_code == 2
    assert "imported verdicts were never sent by jurybox" in result.output


@pytest.mark.parametrize("mode", ["rubric", "ranking", "criterion"])
def test_every_mode_s_prompt_is_rebuilt(tmp_path: Path, mode: str) -> None:
    config = yaml.safe_load((EXAMPLES / f"{mode}.yaml").read_text(encoding="utf-8"))
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    config["paths"]["output_dir"] = "results/show"
    config["task"]["instructions"] = "Be strict."
    path = tmp_path / "examples" / f"{mode}_show.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run_from_config(path, console=Console(quiet=True), limit=2)
    run = tmp_path / "examples" / "results" / "show"
    record = read_judgments(run / "judgments.jsonl").records()[0]
    (one, *_) = show_prompts(run, Selection(record.query_id, judge=record.judge_name))
    assert one.prompt.prompt_hash == one.record.prompt_hash
    assert "<evaluation_criteria>\nBe strict.\n</evaluation_criteria>" in one.prompt.system
