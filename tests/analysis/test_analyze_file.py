"""``jurybox analyze`` reads the frame's columns of the judgments file, and the report's pass
reads the explorer's and the appendix's columns of the same records again, a slice at a time:
the files it writes are those the same records held in memory give, byte for byte, the explorer
paged and the failures in their side file included."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from jurybox.analysis import AnalysisOptions
from jurybox.app import analyze
from jurybox.io import record_table
from jurybox.io.record_table import read_judgments
from jurybox.reporting import write_reports
from jurybox.reporting.explorer import paged
from jurybox.reporting.render import failures

from .synth import make_world
from .test_frame_table import _messy, _write


def _files(out: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            data = path.read_bytes().replace(str(out).encode(), b"(out)")
            if path.name == "analysis_report.json":
                report = json.loads(data)
                report.pop("generated_by")
                data = json.dumps(report).encode()
            found[str(path.relative_to(out))] = data
    return found


@pytest.mark.parametrize("paged_over", [10_000, 3], ids=["embedded", "paged"])
def test_a_files_report_is_the_report_of_its_records_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paged_over: int
) -> None:
    monkeypatch.setattr(paged, "PAGED_OVER", paged_over)
    monkeypatch.setattr(paged, "PAGE_ITEMS", 2)
    monkeypatch.setattr(failures, "MAX_FAILURES", 2)
    monkeypatch.setattr(record_table, "BLOCK_BYTES", 5000)  # the pass reads many blocks
    rng = np.random.default_rng(11)
    world = make_world(6, rng)
    path = _write(tmp_path / "judgments.jsonl", _messy(world, rng))
    log = tmp_path / "log.txt"
    with log.open("w") as handle:
        analyze.analyze_to_dir(path, human=None, dataset=None, out_dir=tmp_path / "file",
                               plots=False, console=Console(file=handle, width=200))  # fmt: skip
    records = read_judgments(path).records()  # one per key, as analyze keeps them
    options = AnalysisOptions(run_judges=None)
    report, frame = analyze.build_report(records, human=None, items=None, options=options)
    report = analyze._with_input_screen(report, 3, None)
    write_reports(report, frame, tmp_path / "memory", plots=False, records=records,
                  source=str(path))  # fmt: skip
    written = _files(tmp_path / "file")
    assert written == _files(tmp_path / "memory")
    assert "failed_records.jsonl" in written
    assert ("report_items/page-0001.js" in written) == (paged_over == 3)
    failed = [r for r in records if r.status.value != "ok"]
    html = written["report.html"].decode()
    assert failed and f"Failed records ({len(failed) + 1})" in html  # + the holistic fallback
    assert "dropped 3 duplicate record(s)" in log.read_text()
