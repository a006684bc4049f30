"""The records pass run in a forked process beside the analysis (``RecordsPass``, issue 19):
the same files, byte for byte, as the pass run in the same process; its errors raised by the
parent; and an error on either side leaves the previous report whole and no temporary file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jurybox.analysis import AnalysisFrame, AnalysisOptions
from jurybox.analysis.model import Report
from jurybox.app import build_report
from jurybox.io.judgments import StoredRecords
from jurybox.reporting import RecordsPass, write_reports
from jurybox.reporting.explorer import paged
from jurybox.reporting.render import html, records_pass

from .synthetic import World, rubric_world
from .test_explorer_stored import _lines, _stored, _variants


@pytest.fixture
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few hundred records take the paths a million take: pages, the failures file, and
    the pass forked."""
    monkeypatch.setattr(paged, "PAGED_OVER", 50)
    monkeypatch.setattr(paged, "PAGE_ITEMS", 16)
    monkeypatch.setattr(html, "MAX_FAILURES", 3)
    monkeypatch.setattr(records_pass, "CONCURRENT_OVER", 0)


def _inputs(tmp_path: Path) -> tuple[World, StoredRecords, Report, AnalysisFrame]:
    world = rubric_world(n_items=90)
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(_lines(_variants(world.records))), encoding="utf-8")
    records = _stored(path)
    report, frame = build_report(
        list(records), human=world.human, items=world.items, options=AnalysisOptions()
    )
    return world, records, report, frame


def _files(out: Path) -> dict[Path, bytes]:
    return {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("held", [0, 10_000], ids=["on disk", "held"])
def test_the_forked_pass_writes_the_files_the_inline_pass_writes(tmp_path: Path, held: int) -> None:
    world, records, report, frame = _inputs(tmp_path)
    inline = tmp_path / "inline"
    given = list(records) if held else records
    write_reports(report, frame, inline, plots=False, records=given, items=world.items)
    forked = tmp_path / "forked"
    with RecordsPass(records, world.items, forked, held=held) as started:
        started.start(frame)
        assert started.forked
        write_reports(report, frame, forked, plots=False, items=world.items, records_pass=started)
    written = _files(forked)
    assert Path(paged.PAGES_DIR) / "page-0001.js" in written
    assert Path("failed_records.jsonl") in written
    assert written == _files(inline)


@pytest.mark.usefixtures("small_thresholds")
def test_an_error_before_the_report_is_written_leaves_the_old_one(tmp_path: Path) -> None:
    """The parent fails while the child writes (or after it wrote): the child is ended, its
    temporary files removed, and the report already in the folder is left as it was."""
    world, records, report, frame = _inputs(tmp_path)
    out = tmp_path / "out"
    write_reports(report, frame, out, plots=False, records=records, items=world.items)
    before = _files(out)
    for wait in (False, True):
        with pytest.raises(KeyboardInterrupt), RecordsPass(records, world.items, out) as started:
            started.start(frame)
            assert started.forked
            if wait:
                assert started.wait(timeout=60)
            raise KeyboardInterrupt
        assert _files(out) == before
        assert not [p for p in out.rglob(".*")]  # no temporary file or folder left


def _fails(*args: object, **kwargs: object) -> None:
    raise ValueError("the pass failed here")


def _dies(*args: object, **kwargs: object) -> None:
    os._exit(3)


@pytest.mark.usefixtures("small_thresholds")
def test_the_childs_error_is_raised_by_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, records, report, frame = _inputs(tmp_path)
    out = tmp_path / "out"
    for broken, error, words in (
        (_fails, ValueError, "the pass failed here"),
        (_dies, RuntimeError, "ended without an answer, exit code 3"),
    ):
        monkeypatch.setattr(records_pass, "write_pass", broken)
        with pytest.raises(error, match=words), RecordsPass(records, world.items, out) as started:
            started.start(frame)
            write_reports(report, frame, out, plots=False, items=world.items, records_pass=started)
        assert not (out / "report.html").exists()
        assert [p.name for p in out.iterdir()] == ["analysis_report.json", "summary_tables.md"]
