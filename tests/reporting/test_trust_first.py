"""The per-judge answer comes first in every format, and the thresholds can be set (issue #12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from jurybox.cli import main
from shared_paths import require_shared

pytestmark = pytest.mark.shared_data


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def mt_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = require_shared("data/llmbar/MT-Bench")
    judgments = tmp_path_factory.mktemp("mt") / "judgments.jsonl"
    assert _invoke("import", "llmbar", str(source), "--out", str(judgments)).exit_code == 0
    return judgments


def _analyze(judgments: Path, out: Path, *flags: str) -> tuple[dict, str, str, str]:
    result = _invoke("analyze", str(judgments), "--out", str(out), "--no-plots", *flags)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    markdown = (out / "summary_tables.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    return report, markdown, html, result.output


def test_every_format_opens_with_the_per_judge_answer(mt_bench: Path, tmp_path: Path) -> None:
    report, markdown, html, terminal = _analyze(mt_bench, tmp_path / "r")
    line = "1 of 4 judges can be trusted: GPT-4"
    assert report["verdict"]["line"] == line
    # Markdown: the first table after the verdict heading is the per-judge one.
    first_table = markdown.index("| Judge | Level | Reason |")
    assert first_table < markdown.index("### Every check")
    assert "| GPT-4 | trusted |" in markdown
    # accuracy, failures counted, with its CI over the 200 items (each judged in both orders)
    assert "0.810 [0.757, 0.854]" in markdown
    assert "| PaLM2 | use with caution |" in markdown
    assert "0.700 / 0.729" in markdown  # PaLM2's swap consistency, both ways
    # HTML: the per-judge table right after the verdict box, before the glance and the sections.
    assert html.index('id="judge-verdicts"') < html.index('class="glance"')
    assert html.index(line) < html.index('id="judge-verdicts"')
    # Terminal: the panel line and every judge's line, no "... and N more".
    assert line in terminal
    for judge in ("GPT-4", "ChatGPT", "LLaMA2", "PaLM2"):
        assert f"• {judge}: " in terminal
    assert "more (see" not in terminal


def test_thresholds_from_the_command_line_and_the_config(mt_bench: Path, tmp_path: Path) -> None:
    report, *_ = _analyze(mt_bench, tmp_path / "cli", "--min-accuracy", "0.65")
    assert report["options"]["thresholds"]["min_accuracy"] == 0.65
    levels = {j: e["level"] for j, e in report["verdict"]["judges"].items()}
    assert levels["GPT-4"] == "trusted"
    config = tmp_path / "run.yaml"
    config.write_text(
        "judges:\n  j: {provider: fake}\npaths: {dataset: d.jsonl}\n"
        "trust: {min_accuracy: 0.9, fail_accuracy: 0.5}\n",
        encoding="utf-8",
    )
    report, *_ = _analyze(mt_bench, tmp_path / "cfg", "--config", str(config))
    assert report["options"]["thresholds"]["min_accuracy"] == 0.9
    # GPT-4's interval (0.77-0.85) does not clear 0.9: no longer trusted.
    assert report["verdict"]["judges"]["GPT-4"]["level"] == "use_with_caution"
    both = _invoke(
        "analyze", str(mt_bench), "--out", str(tmp_path / "x"), "--config", str(config),
        "--min-accuracy", "0.4",
    )  # fmt: skip
    assert both.exit_code == 2 and "wrong order" in both.output
