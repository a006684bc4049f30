"""The explorer's judgments of records left on disk, read by pyarrow (``explorer/stored.py``),
are what the record path gives (issue 19): the same ``Judgment`` of every record, the same
failed records in the same order, whatever the file holds; and a report written from the
records on disk is byte for byte the one written from the records in memory.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jurybox.analysis import AnalysisOptions
from jurybox.analysis.frame import record_tables
from jurybox.app import build_report
from jurybox.io.judgments import StoredRecords, read_line_blocks
from jurybox.records import JudgeRecord, Status
from jurybox.reporting import write_reports
from jurybox.reporting.explorer import paged, stored
from jurybox.reporting.explorer.data import judgment
from jurybox.reporting.render import html
from jurybox.reporting.render.html import is_failed

from .synthetic import criterion_records, pairwise_world, rubric_world

# What ``_variants`` changes in the i-th record: i % 11 picks the row (0 and 10: nothing).
VARIANTS: list[dict[str, Any]] = [
    {},
    {"retest": True, "repeat": 2},
    {"ranking": ["treatment", "control"]},
    {"overall": {"treatment": 6.25, "control": 5.5}},
    {"confidence": None, "confidences": {"control": {"a": 0.1, "b": 0.7, "c": 0.2}}},
    {"preference_reasoning": "Ünïcode ✓ " * 900},
    {"holistic_fallback": True},
    {"status": Status.REFUSED, "error": "declined"},
    {"criterion": "concise", "repeat": 1},
    {"overall": {"control": 7.0}},
    {},
]


def _variants(records: list[JudgeRecord]) -> list[JudgeRecord]:
    """Records of every shape the explorer shows differently: retests, repeats, criteria,
    rankings, several overall scores, fractional confidences, long and non-ASCII reasoning,
    holistic fallbacks and failures."""
    return [
        replace(record, key=f"{record.key}|v{i}", **VARIANTS[i % len(VARIANTS)])
        for i, record in enumerate(records)
    ]


def _all_records() -> list[JudgeRecord]:
    rubric, pairwise = rubric_world(), pairwise_world()
    criterion, _ = criterion_records(n_items=20)
    return _variants(rubric.records + pairwise.records + criterion)


def _lines(records: list[JudgeRecord]) -> list[str]:
    return [record.to_json() + "\n" for record in records]


def _stored(path: Path) -> StoredRecords:
    tables = record_tables(read_line_blocks(path))
    return StoredRecords(path, tables.offsets[tables.kept].tolist())


def _compare(records: StoredRecords, *, block_bytes: int) -> None:
    blocks = stored.seen_blocks(records, block_bytes=block_bytes)
    seen = [one for block in blocks for one in block.seen()]
    expected = [
        (r.query_id, r.judge_name, judgment(r), r if is_failed(r) else None) for r in records
    ]
    assert [(s.query_id, s.judge, s.shown, s.failed) for s in seen] == expected


@pytest.mark.parametrize("block_bytes", [2_000, 60_000, 16 << 20])
def test_the_columns_show_what_the_records_show(tmp_path: Path, block_bytes: int) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(_lines(_all_records())), encoding="utf-8")
    records = _stored(path)
    _compare(records, block_bytes=block_bytes)
    # and the columns were read: the blocks parsed by pyarrow, not line by line
    parsed = [stored._parsed(block) for block in records.line_blocks(block_bytes)]
    assert all(table is not None for table in parsed)


def _edited(line: str, **fields: Any) -> str:
    data = json.loads(line)
    data.update(fields)
    return json.dumps(data, ensure_ascii=False) + "\n"


ARM = "control"
NO_VERDICT = {"ranking": None, "preferred_arm": None, "verdict": None}
# Rows 0-111 are rubric records, 115-274 pairwise, 275- criterion ones; rows i % 11 in (0, 10)
# are left as they are by ``_variants`` (none failed: the edit is what is read).
EDITS: dict[str, dict[int, dict[str, Any]]] = {
    # 7 and 7.5 in one column: Arrow reads both as floats; the record shows "7", not "7.000"
    "a whole overall score written as an int": {
        21: {"overall": {ARM: 7}, **NO_VERDICT},
        22: {"overall": {ARM: 7.5}, **NO_VERDICT},
    },
    "overall scores in another order than the block's": {
        65: {"overall": {"control": 1.5, "treatment": 2.5}, **NO_VERDICT},
        66: {"overall": {"treatment": 1.5, "control": 2.5}, **NO_VERDICT},
    },
    "a null inside positions": {110: {"positions": {"A": ARM, "B": None}, "verdict": "Pass"}},
    "an escaped surrogate": {
        153: {"raw_response": "\ud83d\ude00 and a lone \udc00", "preference_reasoning": None}
    },
    "a repeat written as an int and as a float": {197: {"repeat": 1}, 198: {"repeat": 1.0}},
    "a number where a text belongs": {241: {"confidence": 3}},
    # their mean is 1.472 summed in one order, 1.473 in the other
    "fractional confidences in another order than the block's": {
        285: {"confidences": {ARM: {"x": 1.275, "y": 1.7468, "z": 1.3957}}},
        286: {"confidences": {ARM: {"z": 1.3957, "y": 1.7468, "x": 1.275}}},
    },
}


@pytest.mark.parametrize("edits", EDITS.values(), ids=list(EDITS))
def test_what_the_columns_cannot_tell_is_read_from_the_line(
    tmp_path: Path, edits: dict[int, dict[str, Any]]
) -> None:
    """What Arrow's columns could show otherwise than the record (see stored.py): the
    record's line is read instead, and the explorer shows what the record shows."""
    lines = _lines(_all_records()[:320])
    for row, fields in edits.items():
        data = json.loads(lines[row])
        data.update(fields)
        lines[row] = json.dumps(data) + "\n"  # ASCII: a surrogate escaped as \\uXXXX
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    _compare(StoredRecords(path, _offsets(lines)), block_bytes=16 << 20)


def _offsets(lines: list[str]) -> list[int]:
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line.encode("utf-8"))
    return offsets


def test_records_out_of_file_order_and_dropped_lines(tmp_path: Path) -> None:
    """Kept records in another order than the file's (a duplicate kept later), lines between
    them left out: the lines read are the records' own, in the records' order."""
    lines = _lines(_all_records()[:300])
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    offsets = _offsets(lines)
    order = offsets[:50] + offsets[250:] + offsets[100:50:-1] + offsets[101:250:3]
    records = StoredRecords(path, order)
    got = [
        block.line(row) for block in records.line_blocks(5_000) for row in range(len(block.starts))
    ]
    with path.open("rb") as handle:
        expected = []
        for offset in order:
            handle.seek(offset)
            expected.append(handle.readline())
    assert got == expected
    _compare(records, block_bytes=5_000)


def test_a_report_from_records_on_disk_is_the_one_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paged explorer and the failures file, written from the records on disk (read by
    pyarrow) and from the same records in memory: the same bytes in every file."""
    monkeypatch.setattr(paged, "PAGED_OVER", 50)
    monkeypatch.setattr(paged, "PAGE_ITEMS", 16)
    monkeypatch.setattr(html, "MAX_FAILURES", 3)
    world = rubric_world(n_items=90)
    records = _variants(world.records)
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(_lines(records)), encoding="utf-8")
    on_disk = _stored(path)
    report, frame = build_report(
        list(on_disk), human=world.human, items=world.items, options=AnalysisOptions()
    )
    outputs = []
    for name, given in (("memory", list(on_disk)), ("disk", on_disk)):
        out = tmp_path / name
        write_reports(report, frame, out, plots=False, records=given, items=world.items)
        outputs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    memory, disk = outputs
    assert (Path(paged.PAGES_DIR) / "page-0001.js") in disk
    assert Path("failed_records.jsonl") in disk
    assert disk == memory
