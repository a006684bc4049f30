"""Few-shot examples come from train only; copies of dev/test items are refused by content."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.devloop.config import load_devloop
from jurybox.devloop.leakage import resolve_examples
from jurybox.devloop.split import load_split, split_labelled
from jurybox.errors import ConfigError
from jurybox.io.datasets import load_dataset
from jurybox.rubrics.criteria import Criterion

from .helpers import DEVLOOP, LABELLED, write_loop

BASE: dict[str, Any] = yaml.safe_load((DEVLOOP / "next_step.yaml").read_text())


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return split_labelled(LABELLED, tmp_path_factory.mktemp("leak") / "split", seed=42).out_dir


def _item(split_dir: Path, name: str) -> Any:
    return load_dataset(split_dir / f"{name}.jsonl")[0]


def _criterion(**changes: Any) -> Criterion:
    return Criterion.model_validate({**BASE, **changes})


def _inline(question: str, response: str, example_id: str = "copied") -> dict[str, Any]:
    return {
        "id": example_id,
        "question": question,
        "response": response,
        "answer": "Pass",
        "reasoning": "r",
    }


def test_train_examples_are_written_out_from_train(split_dir: Path) -> None:
    resolved = resolve_examples(_criterion(), load_split(split_dir), source="c.yaml")
    assert resolved.train_examples == ()
    by_id = {example.id: example for example in resolved.examples}
    l15 = next(item for item in load_dataset(LABELLED) if item.id == "l15")
    assert by_id["l15"].input == l15.question
    assert by_id["l15"].response == l15.responses["assistant"]
    assert by_id["l15"].answer == "Pass" and by_id["l04"].answer == "Fail"
    assert by_id["l15"].label == "pass" and "borderline-1" in by_id


@pytest.mark.parametrize("split_name", ["dev", "test"])
@pytest.mark.parametrize(
    "edit",
    [
        lambda q, r: (q, r),
        lambda q, r: ("  " + q.upper() + "  ", r.replace(" ", "   ")),
        lambda q, r: (q.lower(), "\n".join(r.split())),
        lambda q, r: (q, r.replace("'", "’")),
        lambda q, r: ("A different question entirely?", r.swapcase()),  # same response
    ],
    ids=["verbatim", "whitespace+case", "newlines", "curly-quotes", "response-only"],
)
def test_copied_example_is_refused(split_dir: Path, split_name: str, edit: Any) -> None:
    item = _item(split_dir, split_name)
    question, response = edit(item.question, item.responses["assistant"])
    examples = [*BASE["examples"], _inline(question, response)]
    with pytest.raises(ConfigError) as excinfo:
        resolve_examples(_criterion(examples=examples), load_split(split_dir), source="c.yaml")
    error = excinfo.value
    assert error.field == "examples.1" and error.path == "c.yaml"
    assert "'copied'" in str(error) and f"{split_name} item '{item.id}'" in str(error)


def test_a_reference_to_a_dev_item_is_refused(split_dir: Path) -> None:
    dev_id = _item(split_dir, "dev").id
    refs = [*BASE["train_examples"], {"id": dev_id, "reasoning": "r"}]
    with pytest.raises(ConfigError, match=f"'{dev_id}' is a dev item") as excinfo:
        resolve_examples(_criterion(train_examples=refs), load_split(split_dir), source="c")
    assert excinfo.value.field == "train_examples.4"


def test_an_unknown_reference_is_refused(split_dir: Path) -> None:
    refs = [{"id": "nope", "reasoning": "r"}]
    with pytest.raises(ConfigError, match="no item 'nope'"):
        resolve_examples(_criterion(train_examples=refs), load_split(split_dir), source="c")


def test_an_inline_copy_of_a_train_item_is_allowed(split_dir: Path) -> None:
    item = _item(split_dir, "train")
    examples = [_inline(item.question, item.responses["assistant"], "from-train")]
    resolved = resolve_examples(
        _criterion(examples=examples, train_examples=[]), load_split(split_dir), source="c"
    )
    assert [e.id for e in resolved.examples] == ["from-train"]


def test_cli_refuses_a_leaking_config_with_exit_2(split_dir: Path, tmp_path: Path) -> None:
    item = _item(split_dir, "test")
    data = {**BASE, "examples": [_inline(" " + item.question.upper(), item.responses["assistant"])]}
    criterion = tmp_path / "next_step.yaml"
    criterion.write_text(yaml.safe_dump(data))
    config = write_loop(tmp_path / "loop.yaml", split_dir, [criterion], judge={"provider": "fake"})
    with pytest.raises(ConfigError):
        load_devloop(config)
    result = CliRunner().invoke(main, ["calibrate", str(config), "--split", "dev"])
    assert result.exit_code == 2
    assert "few-shot example 'copied'" in result.output
    assert f"test item '{item.id}'" in result.output and "examples.0" in result.output
    assert not (tmp_path / "runs").exists()  # refused before any judge ran


def test_plain_run_refuses_unresolved_train_examples(tmp_path: Path) -> None:
    from jurybox.config import config_from_mapping
    from jurybox.modes import build_mode

    criterion = tmp_path / "next_step.yaml"
    criterion.write_text(yaml.safe_dump(BASE))
    config = config_from_mapping(
        {
            "judges": {"j": {"provider": "fake"}},
            "task": {"mode": "criterion", "criteria": [str(criterion)]},
            "paths": {"dataset": str(LABELLED)},
        }
    )
    with pytest.raises(ConfigError, match="train_examples") as excinfo:
        build_mode(config)
    assert excinfo.value.field == "train_examples"
