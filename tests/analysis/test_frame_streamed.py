"""The streamed, columnar reader gives the very frame the record list gives.

``record_tables(read_record_chunks(path))`` + ``frame_from_tables`` must equal
``build_frame(read_unique_records(path).records)`` (``assert_frame_equal``, dtypes included),
whatever the chunk size: with failures, retests, holistic fallbacks, duplicate keys (kept as
``read_unique_records`` keeps them), human labels, rubric, pairwise, criterion and ranking
records; and it must fail on a bad line exactly as ``read_records`` does.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from jurybox.analysis import AnalysisFrame, AnalysisOptions, build_frame
from jurybox.analysis.frame import RecordTables, _arms_by_query, frame_from_tables, record_tables
from jurybox.analysis.frame_arrow import parse_block
from jurybox.errors import DatasetError
from jurybox.io.judgments import (
    StoredRecords,
    read_line_blocks,
    read_record_chunks,
    read_records,
    read_unique_records,
    record_json,
)
from jurybox.records import JudgeRecord, Status

from .synth import ARMS, JudgeSpec, World, make_world, pairwise_records, rubric_records

GOLDEN = sorted((Path(__file__).parents[1] / "data" / "golden_modes").glob("*.jsonl"))
JUDGES = {
    "j1": JudgeSpec(family="alpha", leniency=0.5, confidence=True),
    "j2": JudgeSpec(family="beta", noise=0.9),
    "j3": JudgeSpec(family="alpha", first_bias=0.3, confidence=True),
}


def _write(path: Path, records: list[JudgeRecord]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record_json(record) + "\n")
    return path


def _tables(path: Path, size: int, reader: str = "blocks") -> RecordTables:
    """Lines in chunks of ``size`` objects, or in blocks of about ``size`` x 400 bytes."""
    if reader == "rows":
        return record_tables(read_record_chunks(path, size))
    return record_tables(read_line_blocks(path, size * 400))


def _streamed(
    path: Path, size: int, reader: str = "blocks", **kwargs: object
) -> tuple[AnalysisFrame, int]:
    tables = _tables(path, size, reader)
    return frame_from_tables(tables, **kwargs), tables.dropped  # type: ignore[arg-type]


def _assert_same(expected: AnalysisFrame, got: AnalysisFrame) -> None:
    assert_frame_equal(expected.records, got.records)
    assert_frame_equal(expected.scores, got.scores)
    assert_frame_equal(expected.items, got.items)
    for name in ("preferences", "annotators", "scores", "verdicts"):
        assert_frame_equal(getattr(expected.labels, name), getattr(got.labels, name))
    assert expected.arms == got.arms
    assert expected.dimensions == got.dimensions


def _messy(world: World, rng: np.random.Generator) -> list[JudgeRecord]:
    """Rubric (with retests), pairwise and criterion records, failures of every kind, holistic
    fallbacks, and a key written several times (failed then redone, redone twice, ok then a
    later provider error, which must not win)."""
    records = rubric_records(world, JUDGES, rng, retest_items=4)
    records += pairwise_records(world, JUDGES, rng)
    records += [
        dataclasses.replace(
            records[0], key=f"{item.id}|j1|{arm}|r0|c:safe", mode="criterion",
            criterion="safe", positions={"A": arm}, scores=None, overall=None,
            gate_failures=None, confidences=None, verdict=("Pass", "Fail")[k % 2],
            query_id=item.id, presentation_order="single",
        )
        for k, item in enumerate(world.items) for arm in ARMS
    ]  # fmt: skip
    statuses = [Status.UNPARSED, Status.PROVIDER_ERROR, Status.REFUSED, Status.TRUNCATED]
    for index in range(3, len(records), 17):
        records[index] = dataclasses.replace(
            records[index], status=statuses[index % 4], error="simulated", parse_success=False
        )
    records[5] = dataclasses.replace(records[5], holistic_fallback=True)
    failed_first = dataclasses.replace(records[8], status=Status.PROVIDER_ERROR)
    records.insert(8, failed_first)  # redone: the ok line after it is kept
    redone = dataclasses.replace(records[20], overall={ARMS[0]: 9.5}, cost_usd=0.25)
    records.append(redone)  # the same key, complete again: the last one wins
    records.append(dataclasses.replace(records[30], status=Status.PROVIDER_ERROR))
    return records


@pytest.mark.parametrize("reader", ["rows", "blocks"])
@pytest.mark.parametrize("size", [1, 7, 1000])
def test_streamed_frame_is_the_record_frame(tmp_path: Path, size: int, reader: str) -> None:
    rng = np.random.default_rng(3)
    world = make_world(12, rng, families=("alpha", "beta"), human=True)
    path = _write(tmp_path / "judgments.jsonl", _messy(world, rng))
    options = AnalysisOptions(judge_families={"j3": "gamma"}, control_arm="control")
    human = {world.items[0].id: {"preferred_arm": "treatment"}}
    unique = read_unique_records(path)
    assert unique.dropped == 3
    expected = build_frame(unique.records, human=human, items=world.items, options=options)
    got, dropped = _streamed(path, size, reader, human=human, items=world.items, options=options)
    assert dropped == unique.dropped
    _assert_same(expected, got)
    assert got.records["cost_usd"].notna().sum() == 1  # the redone record's cost, kept


@pytest.mark.parametrize("size", [1, 7, 1000])
def test_arrow_blocks_give_the_record_paths_tables(tmp_path: Path, size: int) -> None:
    """Before options and labels apply: Arrow's record and score tables, cut per block without a
    Python object per row (text columns converted in C++), equal the ones the record path
    builds from the same lines, dtypes included: blocks of one line, failed-only blocks,
    pairwise, criterion and rubric rows alike."""
    rng = np.random.default_rng(5)
    world = make_world(12, rng, families=("alpha", "beta"), human=True)
    path = _write(tmp_path / "judgments.jsonl", _messy(world, rng))
    expected, got = _tables(path, size, "rows"), _tables(path, size, "blocks")
    assert_frame_equal(expected.records, got.records)
    assert_frame_equal(expected.scores, got.scores)
    assert expected.arms == got.arms
    assert expected.named_families == got.named_families
    assert (expected.kept == got.kept).all()


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_files_stream_to_the_same_frame(path: Path) -> None:
    expected = build_frame(read_unique_records(path).records)
    for size in (2, 10_000):
        for reader in ("rows", "blocks"):
            _assert_same(expected, _streamed(path, size, reader)[0])


def test_arrow_parses_plain_blocks_and_leaves_the_rest_to_the_record_path(
    tmp_path: Path,
) -> None:
    """A block with a JSON NaN (Arrow rejects it) or a version-1 key is read line by line,
    and still gives the record path's frame; plain blocks are Arrow's."""
    rng = np.random.default_rng(1)
    records = rubric_records(make_world(6, rng), JUDGES, rng)
    path = _write(tmp_path / "judgments.jsonl", records)
    blocks = list(read_line_blocks(path, 4000))
    assert all(parse_block(block) is not None for block in blocks)
    lines = path.read_text().splitlines()
    changed = [
        lines[3].replace('"cost_usd": null', '"cost_usd": NaN'),
        lines[30].replace('"schema_version": 2', '"schema_version": 1'),
    ]
    assert changed != [lines[3], lines[30]]
    lines[3], lines[30] = changed
    path.write_text("\n".join(lines) + "\n")
    blocks = list(read_line_blocks(path, 4000))
    parsed = [parse_block(block) is not None for block in blocks]
    assert not all(parsed) and any(parsed)
    expected = build_frame(read_unique_records(path).records)
    _assert_same(expected, frame_from_tables(record_tables(blocks)))


def test_a_column_missing_in_one_chunk_is_typed_over_all_rows(tmp_path: Path) -> None:
    """cost_usd absent in the first chunk (an object column of None there) and a float in the
    second: typed float64 with NaN, as one DataFrame of every row types it."""
    rng = np.random.default_rng(0)
    records = rubric_records(make_world(4, rng), {"j1": JUDGES["j1"]}, rng)
    records[-1] = dataclasses.replace(records[-1], cost_usd=0.5, batch_id="b1")
    path = _write(tmp_path / "judgments.jsonl", records)
    expected = build_frame(read_unique_records(path).records)
    for reader in ("rows", "blocks"):
        got = _streamed(path, 3, reader)[0]
        assert got.records["cost_usd"].dtype == np.float64
        _assert_same(expected, got)


def test_no_records_give_empty_tables(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n")
    for tables in (_tables(path, 10, "rows"), _tables(path, 10)):
        assert tables.total == 0 and len(tables.records) == 0 and len(tables.scores) == 0


def _line(**changes: object) -> str:
    record = json.loads((GOLDEN[0]).read_text().splitlines()[0])
    record.update(changes)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


@pytest.mark.parametrize(
    "bad",
    [
        "{not json",
        "[1, 2]",
        _line(status="excellent"),
        _line(status=["ok"]),
        _line(run_id=...),
        _line(schema_version=1, repeat="x"),
    ],
)
def test_bad_lines_fail_as_read_records_fails(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text(GOLDEN[0].read_text() + bad + "\n")
    with pytest.raises(DatasetError) as expected:
        list(read_records(path))
    with pytest.raises(DatasetError) as got:
        list(read_record_chunks(path, 2))
    assert str(got.value) == str(expected.value)
    assert f"{path}:" in str(got.value)
    with pytest.raises(DatasetError) as arrow:
        record_tables(read_line_blocks(path, 800))
    assert str(arrow.value) == str(expected.value)


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    """Also blank and whitespace-only lines (skipped) and an indented record (read)."""
    path = tmp_path / "judgments.jsonl"
    lines = GOLDEN[0].read_text().splitlines()
    lines[1] = "\t " + lines[1]
    lines[2:2] = ["", "  \t", "\r"]
    path.write_text("\n".join(lines) + "\n" + '{"key": "torn')
    rows = [row for chunk in read_record_chunks(path) for row in chunk.rows]
    assert [row["key"] for row in rows] == [r.key for r in read_records(path)]
    for size in (300, 1 << 20):
        tables = record_tables(read_line_blocks(path, size))
        assert list(tables.records["key"]) == [r.key for r in read_records(path)]
        numbers = [n for block in read_line_blocks(path, size) for n in block.numbers]
        assert numbers == [1, 2, 6, *range(7, len(lines) + 1)]


def test_stored_records_read_the_kept_lines_again(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    path = _write(tmp_path / "judgments.jsonl", _messy(make_world(5, rng), rng))
    tables = _tables(path, 4)
    assert tables.offsets.tolist() == [
        o for chunk in read_record_chunks(path, 4) for o in chunk.offsets
    ]
    stored = StoredRecords(path, tables.offsets[tables.kept].tolist())
    unique = read_unique_records(path).records
    assert len(stored) == len(unique)
    assert [r.to_dict() for r in stored] == [r.to_dict() for r in unique]
    assert stored[-1] == unique[-1] and list(stored[2:4]) == unique[2:4]
    assert pd.Series([r.key for r in stored]).is_unique


def test_arms_by_query_as_the_groupby_gave_them(tmp_path: Path) -> None:
    """``_arms_by_query`` lost its per-query Python call; the mapping is the one the
    ``groupby(...).unique()`` it replaced gave."""
    rng = np.random.default_rng(2)
    records = _messy(make_world(9, rng), rng)
    records = records[::-1]  # arms first seen in another order than the sorted one
    frame = build_frame(records)
    singles = frame.records.dropna(subset=["target_arm"]).groupby("query_id")["target_arm"]
    expected = {str(q): [str(a) for a in arms] for q, arms in singles.unique().items()}
    got = _arms_by_query(frame.records, None)
    assert got == expected and list(got) == list(expected)
    assert any(arms == ["treatment", "control"] for arms in got.values())
