"""The report's JSON Schema is generated from the model, printed by ``jurybox schema --report``,
and the reports the analysis writes validate against it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from jurybox.analysis import import_verdicts, load_imported, report_schema
from jurybox.analysis.model import Report
from jurybox.cli import main
from reporting.synthetic import pairwise_world, rubric_world
from shared_paths import require_shared

from .helpers import analyze


def _validate(report: dict[str, Any]) -> None:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(report)


def test_cli_prints_the_generated_report_schema() -> None:
    result = CliRunner().invoke(main, ["schema", "--report"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed == report_schema()
    assert printed["title"] == "Report"
    assert printed["properties"].keys() == Report.model_fields.keys()
    jsonschema.Draft202012Validator.check_schema(printed)


def test_cli_schema_without_the_flag_is_still_the_config_schema() -> None:
    result = CliRunner().invoke(main, ["schema"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["title"] != "Report"


@pytest.mark.parametrize("make", [rubric_world, pairwise_world], ids=["rubric", "pairwise"])
def test_demo_like_reports_validate(make: Any) -> None:
    world = make()
    _validate(analyze(world.records, human=world.human, items=world.items))


def test_schema_rejects_a_misspelt_key() -> None:
    world = pairwise_world()
    report = analyze(world.records, human=world.human, items=world.items)
    report["bias"]["position"]["judges"]["judge-openai"]["swap_consistancy"] = {}
    with pytest.raises(jsonschema.ValidationError, match="swap_consistancy"):
        _validate(report)


@pytest.mark.shared_data
def test_mt_bench_import_report_validates(tmp_path: Path) -> None:
    path = tmp_path / "mt_bench.jsonl"
    import_verdicts("llmbar", require_shared("data/llmbar/MT-Bench"), path)
    records, items = load_imported(path)
    report = analyze(records, items=items)
    _validate(report)
    assert report["accuracy_vs_gold"]["judges"]["GPT-4"]["orders"]["output_1_first"]["n"] == 200
