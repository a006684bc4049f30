from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from jurybox.app import analyze as app_analyze
from jurybox.app import demo, run_demo, run_from_config
from jurybox.errors import ConfigError
from jurybox.io.judgments import read_records

from .helpers import fake_judge, write_dataset

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def console() -> Console:
    return Console(file=io.StringIO(), width=200)


def test_bundled_demo_config_plans_83_units_for_one_local_judge() -> None:
    assert demo.examples_dir() == EXAMPLES
    summary = run_from_config(EXAMPLES / "demo.yaml", dry_run=True, console=console())
    assert summary.units_per_judge == {"local": 39 * 2 + 5}
    judge = yaml.safe_load((EXAMPLES / "demo.yaml").read_text())["judges"]["local"]
    assert judge["provider"] == "local" and judge.get("concurrency", 1) == 1


@pytest.fixture
def fake_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    examples = tmp_path / "examples"
    examples.mkdir()
    write_dataset(examples / "items.jsonl", 4)
    config = {
        "judges": {"local": fake_judge()},
        "task": {"mode": "pairwise"},
        "pipeline": {"test_retest_count": 1},
        "paths": {"dataset": "items.jsonl", "output_dir": "results/demo"},
    }
    (examples / "demo.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setattr(demo, "examples_dir", lambda: examples)
    return examples


def test_demo_judges_and_analyses_into_the_folder(fake_examples: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    printed = io.StringIO()
    summary = run_demo(out, console=Console(file=printed, width=200))
    assert summary.units_run == 4 * 2 + 1 and summary.status_counts["ok"] == 9
    assert len(list(read_records(out / "judgments.jsonl"))) == 9
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    report = out / "report"
    assert (report / "analysis_report.json").exists() and (report / "report.html").exists()
    assert str(out / "judgments.jsonl") in printed.getvalue()
    assert not (fake_examples / "results").exists()  # the demo writes only where it is told


def test_a_second_demo_resumes_without_calls(
    fake_examples: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    analysed: list[dict[str, Any]] = []

    def record_analysis(judgments: Path, **kwargs: Any) -> None:
        analysed.append({"judgments": judgments, **kwargs})

    monkeypatch.setattr(app_analyze, "analyze_to_dir", record_analysis)
    out = tmp_path / "demo-out"
    first = run_demo(out, console=console())
    printed = io.StringIO()
    again = run_demo(out, console=Console(file=printed, width=200))
    assert again.provider_calls == 0 and again.units_run == 0 and again.run_id == first.run_id
    assert again.status_counts["ok"] == 9 and "resuming" in printed.getvalue()
    assert len(analysed) == 2
    assert analysed[1]["judgments"] == out / "judgments.jsonl"
    assert analysed[1]["dataset"] == fake_examples / "items.jsonl"
    assert analysed[1]["out_dir"] == out / "report" and analysed[1]["human"] is None


def test_demo_without_examples_is_a_clear_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "examples_dir", lambda: tmp_path / "nowhere")
    with pytest.raises(ConfigError, match="source checkout"):
        run_demo(tmp_path / "out", console=console())


@pytest.mark.local_model
@pytest.mark.slow
def test_bundled_local_judge_end_to_end_on_one_item(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    summary = run_from_config(
        EXAMPLES / "demo.yaml", output_dir=tmp_path / "out", limit=1, console=console()
    )
    assert summary.units_total == 3 and summary.local_judge
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 3 and all(r.local_judge and r.judge_vendor == "local" for r in records)
    assert all(r.cost_usd == 0.0 for r in records if r.status.value != "provider_error")


def test_demo_without_the_local_extra_exits_2_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from jurybox.cli import main
    from jurybox.providers import local

    monkeypatch.setattr(local, "llama_cpp_available", lambda: False)
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--output-dir", str(out)])
    assert result.exit_code == 2, result.output  # bad set-up, as an unset key is
    assert 'pip install "jurybox[local]"' in result.output
    assert "bash scripts/demo.sh" in result.output and "Traceback" not in result.output
    assert not out.exists()  # refused before anything was written
