from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from jurybox.analysis import AnalysisOptions
from jurybox.app import build_report
from jurybox.records import Status
from jurybox.reporting import write_reports
from jurybox.reporting.plots import build_plot_specs

from .synthetic import pairwise_world


def test_every_record_failed_still_gives_a_readable_report(tmp_path: Path) -> None:
    world = pairwise_world(n_items=6)
    failed = [
        dataclasses.replace(
            r,
            status=Status.UNPARSED,
            parse_success=False,
            preference=None,
            preferred_arm=None,
            raw_response="I cannot decide.",
        )
        for r in world.records
    ]
    report, frame = build_report(failed, human=None, items=world.items, options=AnalysisOptions())
    paths = write_reports(report, frame, tmp_path, records=failed)
    data = json.loads(paths.json.read_text(encoding="utf-8"))
    assert data["summary"]["excluded"]["by_status"] == {"unparsed": len(failed)}
    specs = build_plot_specs(report, frame)
    assert {s.status for s in specs} == {"not_applicable"}
    assert paths.plots == () and paths.svgs == ()  # no placeholder image for what does not apply
    markdown = paths.markdown.read_text(encoding="utf-8")
    assert "**Not computed:** no successful judgment" in markdown
    html = paths.html.read_text(encoding="utf-8")
    assert html.count('class="failure"') == len(failed)
    assert "I cannot decide." in html


def test_single_judge_without_items_or_labels(tmp_path: Path) -> None:
    world = pairwise_world(n_items=8)
    records = [r for r in world.records if r.judge_name == "judge-openai"]
    report, frame = build_report(records, human=None, items=None, options=AnalysisOptions())
    paths = write_reports(report, frame, tmp_path, records=records)
    specs = {s.name: s for s in build_plot_specs(report, frame)}
    assert specs["agreement_matrix"].status == "not_applicable"
    assert specs["verbosity_scatter"].status == "not_applicable"  # lengths need the dataset
    assert specs["position_bias"].status == "drawn"
    markdown = paths.markdown.read_text(encoding="utf-8")
    assert "**Not computed:** a single judge" in markdown
