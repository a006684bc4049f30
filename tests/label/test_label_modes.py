"""Every mode's form on the example runs, and ``analyze`` reading what the page wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from jurybox.app import analyze_to_dir, run_from_config
from jurybox.app.label import LabelOptions, LabelSession, load_run
from jurybox.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("examples") / "examples"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns("results"))
    for name in ("rubric", "ranking", "criterion"):
        run_from_config(folder / f"{name}.yaml", console=Console(quiet=True))
    return folder


def _label_all(session: LabelSession, answer: Any, count: int) -> None:
    for position in range(1, count + 1):
        session.give(position, answer(session.item(position)["form"]))


def _report(run_dir: Path, tmp_path: Path) -> dict[str, Any]:
    out = tmp_path / "report"
    analyze_to_dir(
        run_dir, human=None, dataset=None, out_dir=out, plots=False, console=Console(quiet=True)
    )
    found: dict[str, Any] = json.loads((out / "analysis_report.json").read_text())
    return found


def test_rubric_scores_every_dimension_on_the_rubric_scale(examples: Path, tmp_path: Path) -> None:
    run_dir = examples / "results" / "rubric"
    session = LabelSession(load_run(run_dir), LabelOptions(annotator="ann"))
    form = session.item(1)["form"]
    assert form["kind"] == "scores" and len(form["responses"]) == 1
    dims = form["dimensions"]
    assert len(dims) > 1 and all(d["min"] < d["max"] for d in dims) and dims[0]["anchors"]

    def answer(spec: dict[str, Any]) -> dict[str, Any]:
        return {"scores": [{d["key"]: d["max"] for d in spec["dimensions"]}]}

    _label_all(session, answer, 12)
    session.close()
    scores = _report(run_dir, tmp_path)["human_calibration"]["scores"]
    assert scores["status"] == "computed"
    assert set(scores["judges"]["scorer"]["dimensions"]) == {d["key"] for d in dims}


def test_ranking_scores_each_response_overall(examples: Path, tmp_path: Path) -> None:
    run_dir = examples / "results" / "ranking"
    session = LabelSession(load_run(run_dir), LabelOptions(annotator="ann"))
    form = session.item(1)["form"]
    assert form["responses"] == ["Response 1", "Response 2", "Response 3", "Response 4"]
    assert [d["key"] for d in form["dimensions"]] == ["overall"]

    def answer(spec: dict[str, Any]) -> dict[str, Any]:
        top = spec["dimensions"][0]["max"]
        return {"scores": [{"overall": top - i} for i in range(len(spec["responses"]))]}

    _label_all(session, answer, 6)
    session.close()
    scores = _report(run_dir, tmp_path)["human_calibration"]["scores"]
    assert "total" in scores["judges"]["chair"]["dimensions"]


def test_criterion_asks_pass_or_fail_with_the_definitions(examples: Path, tmp_path: Path) -> None:
    run_dir = examples / "results" / "criterion"
    (run_dir / "labels.jsonl").unlink(missing_ok=True)
    session = LabelSession(load_run(run_dir), LabelOptions(annotator="ann"))
    form = session.item(1)["form"]
    assert form["kind"] == "verdict" and form["criterion"]["name"] == "next_step"
    assert form["criterion"]["pass"] and form["criterion"]["fail"]
    _label_all(session, lambda spec: {"verdicts": ["Pass"] * len(spec["responses"])}, 10)
    session.close()
    criterion = _report(run_dir, tmp_path)["human_calibration"]["criterion"]
    assert criterion["status"] == "computed"


def test_a_run_of_several_criteria_is_refused(examples: Path, tmp_path: Path) -> None:
    config = (examples / "criterion.yaml").read_text(encoding="utf-8")
    config = config.replace(
        "    - criteria/next_step.yaml  # relative to this file",
        "    - criteria/next_step.yaml\n    - criteria/no_unsupported_claims.yaml",
    ).replace("output_dir: results/criterion", "output_dir: results/two_criteria")
    (examples / "two.yaml").write_text(config, encoding="utf-8")
    run_from_config(examples / "two.yaml", console=Console(quiet=True))
    with pytest.raises(InputError, match="2 criteria"):
        load_run(examples / "results" / "two_criteria")
