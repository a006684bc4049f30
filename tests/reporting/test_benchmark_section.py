"""Imported benchmark verdicts: the report carries each benchmark's own figures, and the HTML and
Markdown show them in the "as the benchmark reports it" section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurybox.app import analyze_to_dir
from jurybox.io.verdicts import import_verdicts
from jurybox.reporting.sections.benchmarks import TITLE
from shared_paths import require_shared

from .conftest import Built


@pytest.mark.shared_data
def test_mt_bench_import_reports_llmbar_figures_as_published(tmp_path: Path) -> None:
    out = tmp_path / "mt.jsonl"
    import_verdicts("llmbar", require_shared("data/llmbar/MT-Bench"), out)
    analyze_to_dir(out, human=None, dataset=None, out_dir=tmp_path / "report", plots=False)

    report = json.loads((tmp_path / "report" / "analysis_report.json").read_text("utf-8"))
    subsets = report["benchmarks"]["llmbar"]["subsets"]
    (palm2,) = [v["PaLM2"] for v in subsets.values() if "PaLM2" in v]
    assert palm2["equal"] == {"count": 147, "n": 200, "percent": 73.5}
    markdown = (tmp_path / "report" / "summary_tables.md").read_text("utf-8")
    html = (tmp_path / "report" / "report.html").read_text("utf-8")
    for text in (markdown, html):
        assert TITLE in text and "147/200 (73.5%)" in text


def test_a_run_without_benchmark_items_has_no_benchmarks_key(built: Built) -> None:
    data = json.loads(built.paths.json.read_text("utf-8"))
    assert "benchmarks" not in data and built.report.benchmarks is None
    assert TITLE not in built.paths.markdown.read_text("utf-8")
