"""``jurybox analyze`` reads the judgments streamed: a run past ``RECORDS_HELD`` gives its report
(failure appendix and item explorer included) from the records re-read off disk, the very files
a held list gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from jurybox.app import analyze
from jurybox.io.judgments import read_unique_records

from .synth import make_world
from .test_frame_streamed import _messy, _write


def _report(out: Path) -> tuple[dict[str, object], str]:
    data = json.loads((out / "analysis_report.json").read_text())
    data.pop("generated_by")
    return data, (out / "report.html").read_text()


def test_streamed_records_give_the_held_records_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(11)
    path = _write(tmp_path / "judgments.jsonl", _messy(make_world(6, rng), rng))
    console = Console(file=open(tmp_path / "log.txt", "w"), width=200)  # noqa: SIM115
    analyze.analyze_to_dir(path, human=None, dataset=None, out_dir=tmp_path / "held",
                           plots=False, console=console)  # fmt: skip
    monkeypatch.setattr(analyze, "RECORDS_HELD", 0)
    analyze.analyze_to_dir(path, human=None, dataset=None, out_dir=tmp_path / "streamed",
                           plots=False, console=console)  # fmt: skip
    console.file.close()
    held, streamed = _report(tmp_path / "held"), _report(tmp_path / "streamed")
    assert held[0] == streamed[0]
    assert held[1].replace(str(tmp_path / "held"), "") == streamed[1].replace(
        str(tmp_path / "streamed"), ""
    )
    assert held[0]["summary"]["input_screen"]["duplicates_dropped"] == 3  # type: ignore[index]
    failed = [r for r in read_unique_records(path).records if r.status.value != "ok"]
    assert failed and f"Failed records ({len(failed) + 1})" in streamed[1]  # + the fallback
    assert "dropped 3 duplicate record(s)" in (tmp_path / "log.txt").read_text()
