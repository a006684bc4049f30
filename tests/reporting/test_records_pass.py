"""The records pass run in a forked process beside the analysis (``RecordsPass``, issue 19):
the same files, byte for byte, as the pass run in the same process; its errors raised by the
parent; and an error on either side leaves the previous report whole and no temporary file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.json as pj  # type: ignore[import-untyped]
import pytest
from rich.console import Console

from jurybox.analysis import AnalysisFrame, AnalysisOptions, frame_arrow
from jurybox.analysis.model import Report
from jurybox.app import analyze, build_report
from jurybox.errors import DatasetError
from jurybox.io.judgments import StoredRecords, read_line_blocks
from jurybox.reporting import RecordsPass, write_reports
from jurybox.reporting.explorer import paged
from jurybox.reporting.explorer import stored as stored_module
from jurybox.reporting.explorer.stored import SeenBlock, seen_blocks
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


def _analyzed_inputs(tmp_path: Path, *, repeat: bool = True) -> tuple[Path, Path]:
    """A judgments file of every shape the explorer shows (a duplicate key among them, with
    ``repeat``) and its dataset, for ``analyze_to_dir``."""
    world = rubric_world(n_items=90)
    records = _variants(world.records)
    judgments = tmp_path / "judgments.jsonl"
    lines = _lines([*records, records[5]] if repeat else records)
    judgments.write_text("".join(lines), encoding="utf-8")
    dataset = tmp_path / "items.jsonl"
    rows = [
        {"id": i.id, "question": i.question, "responses": dict(i.responses)} for i in world.items
    ]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return judgments, dataset


def _analyzed(judgments: Path, dataset: Path | None, out: Path) -> dict[Path, bytes]:
    with (out.parent / f"{out.name}.log").open("w") as log:
        analyze.analyze_to_dir(judgments, human=None, dataset=dataset, out_dir=out, plots=False,
                               console=Console(file=log, width=200))  # fmt: skip
    files = _files(out)
    html_file = Path("report.html")
    files[html_file] = files[html_file].replace(str(out).encode(), b"OUT")
    return files


def _noting_passes(monkeypatch: pytest.MonkeyPatch, notes: Path) -> None:
    """Each pass a forked child finishes writes into ``notes`` (a file the parent reads)
    whether it ran over the guessed records (forked before they were read) or the frame."""
    original = records_pass._pass_of

    def noted(*args: Any) -> records_pass.Written:
        written = original(*args)
        with notes.open("a") as file:
            file.write(("guess" if args[-1] is not None else "frame") + "\n")
        return written

    monkeypatch.setattr(records_pass, "_pass_of", noted)


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("with_items", [True, False], ids=["dataset", "no dataset"])
@pytest.mark.parametrize("paged_over", [50, 10_000], ids=["paged", "embedded"])
def test_a_pass_forked_before_the_records_are_read_writes_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paged_over: int, with_items: bool
) -> None:
    """Forked before the records are read (its explorer paged), the pass writes the files the
    pass run inline writes; with an explorer embedded in report.html (it needs the frame) the
    child forked early is ended and one forked over the frame writes them. Without a dataset
    the pages are spooled in more buckets than may be open at once."""
    monkeypatch.setattr(paged, "PAGED_OVER", paged_over)
    monkeypatch.setattr(paged, "BUCKETS", 2)
    judgments, items = _analyzed_inputs(tmp_path)
    dataset = items if with_items else None
    monkeypatch.setattr(records_pass, "CONCURRENT_OVER", 10**9)
    inline = _analyzed(judgments, dataset, tmp_path / "inline")
    monkeypatch.setattr(records_pass, "CONCURRENT_OVER", 0)
    monkeypatch.setattr(records_pass, "EARLY_OVER_BYTES", 0)
    notes = tmp_path / "passes.txt"
    _noting_passes(monkeypatch, notes)
    early = _analyzed(judgments, dataset, tmp_path / "early")
    if paged_over == 50:  # the child forked early ran the pass (its guess wrong: a key repeats)
        assert notes.read_text().split() == ["guess"]
        assert Path(paged.PAGES_DIR) / "page-0002.js" in early
    else:  # it was ended; the one forked over the frame ran it
        assert notes.read_text().split() == ["frame"]
        assert not any(path.parts[0] == paged.PAGES_DIR for path in early)
    assert Path("failed_records.jsonl") in early
    assert early == inline


@pytest.mark.usefixtures("small_thresholds")
def test_an_error_while_the_records_are_read_ends_the_child_forked_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bad line in the judgments: the error the inline pass gives, the child forked before
    the read ended, and the report already in the folder left whole, no temporary file."""
    judgments, dataset = _analyzed_inputs(tmp_path)
    out = tmp_path / "out"
    _analyzed(judgments, dataset, out)
    before = _files(out)
    with judgments.open("a") as file:
        file.write('{"key": "broken\n')
    monkeypatch.setattr(records_pass, "EARLY_OVER_BYTES", 0)
    notes = tmp_path / "passes.txt"
    _noting_passes(monkeypatch, notes)
    with pytest.raises(DatasetError, match=r"judgments.jsonl:\d+: not valid JSON"):
        _analyzed(judgments, dataset, out)
    assert not notes.exists()  # no pass ended
    assert _files(out) == before
    assert not [p for p in out.rglob(".*")]


class _Orders:
    """The parent's end of the pipe as a guess reads it: the messages the parent sends."""

    def __init__(self, messages: list[tuple[Any, ...]]) -> None:
        self.messages = messages

    def recv(self) -> tuple[Any, ...]:
        return self.messages.pop(0)


class _NotingJson:
    """``pyarrow.json`` as the explorer's reading calls it, each parse noted in a file (read
    by the parent of a forked child)."""

    def __init__(self, notes: Path) -> None:
        self.notes = notes

    def read_json(self, *args: Any, **kwargs: Any) -> Any:
        with self.notes.open("a") as file:
            file.write("parsed\n")
        return pj.read_json(*args, **kwargs)


def _disk_full(*args: Any) -> int:
    raise OSError(28, "No space left on device")


@pytest.mark.usefixtures("small_thresholds")
@pytest.mark.parametrize("disk_full", [False, True], ids=["tables shared", "disk full"])
def test_the_child_forked_early_takes_the_tables_the_parent_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk_full: bool
) -> None:
    """No key repeats: the child forked early spools the records it guessed from the file's
    lines with each block's table as the parent's reading parsed it (no block parsed
    twice), and writes the files the pass run inline writes. Where the tables cannot be
    written (a full disk) the child parses the blocks itself: the same files."""
    if disk_full:
        monkeypatch.setattr(records_pass._TableSpool, "_append", _disk_full)
    judgments, items = _analyzed_inputs(tmp_path, repeat=False)
    monkeypatch.setattr(records_pass, "CONCURRENT_OVER", 10**9)
    inline = _analyzed(judgments, items, tmp_path / "inline")
    monkeypatch.setattr(records_pass, "CONCURRENT_OVER", 0)
    monkeypatch.setattr(records_pass, "EARLY_OVER_BYTES", 0)
    notes, parses = tmp_path / "passes.txt", tmp_path / "parses.txt"
    _noting_passes(monkeypatch, notes)
    monkeypatch.setattr(stored_module, "pj", _NotingJson(parses))
    early = _analyzed(judgments, items, tmp_path / "early")
    assert notes.read_text().split() == ["guess"]
    assert parses.exists() == disk_full
    assert early == inline
    assert not [p for p in (tmp_path / "early").rglob(".*")]  # the tables' file has no name


def _rows(blocks: Iterable[SeenBlock]) -> list[tuple[int, str, str, object, object]]:
    return [
        (block.first + row, seen.query_id, seen.judge, seen.shown, seen.failed)
        for block in blocks
        for row, seen in enumerate(block.seen())
    ]


@pytest.mark.parametrize(
    "shared",
    [0, 1, None, "other blocks"],
    ids=["no table shared", "the first block's", "every block's", "other blocks'"],
)
@pytest.mark.parametrize("repeated", [None, 2, -3], ids=["no key repeats", "early", "late"])
def test_a_guess_gives_the_records_blocks_or_says_it_was_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: int | str | None, repeated: int | None
) -> None:
    """The records guessed from the file's lines, checked against the parent's: the blocks the
    records give, row for row and numbered alike, where no spooled line is out of place;
    ``_GuessedWrong`` where one is (a repeated key's first line was spooled). The parent's
    tables are taken for the blocks they were parsed from (none is parsed again), and its
    records, when they come before the file's end, are gone on from."""
    records = _variants(rubric_world(n_items=40).records)
    lines = _lines(records if repeated is None else [*records, records[repeated]])
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    stored = _stored(path)
    expected = _rows(seen_blocks(stored))
    blocks = list(read_line_blocks(path, 8192 if shared == "other blocks" else 4096))
    spool = records_pass._TableSpool(tmp_path)
    sent = blocks if shared is None or isinstance(shared, str) else blocks[:shared]
    messages = [("table", *spool.write(b, frame_arrow.parse_whole_block(b))) for b in sent]
    orders = _Orders([*messages, ("records", stored)])
    guess = records_pass._Guess(path, orders, spool, block_bytes=4096)  # type: ignore[arg-type]
    parses = tmp_path / "parses.txt"
    monkeypatch.setattr(stored_module, "pj", _NotingJson(parses))
    if repeated == 2 or (repeated == -3 and shared is None):
        with pytest.raises(records_pass._GuessedWrong):
            _rows(guess.blocks())
        return
    assert len(expected) == len(records)
    assert _rows(guess.blocks()) == expected
    assert len(blocks) > 4
    parsed = len(parses.read_text().split()) if parses.exists() else 0
    if shared is None:
        assert parsed == 0
    else:  # the blocks without a table of their own were parsed here
        assert parsed > 0
    assert not orders.messages
