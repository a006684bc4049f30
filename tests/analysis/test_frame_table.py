"""The frame of a judgments file (the record table, ``io/record_table.py``, cut column by column)
is the frame of the same records held in memory (``assert_frame_equal``, dtypes included),
whatever the block and part sizes: with failures, retests, holistic fallbacks, duplicate keys,
human labels, rubric, pairwise, criterion and ranking records.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from jurybox.analysis import AnalysisFrame, AnalysisOptions, build_frame, frame_columns
from jurybox.analysis.frame import _arms_by_query
from jurybox.io import record_table
from jurybox.io.judgments import read_records, record_json
from jurybox.io.record_table import read_judgments
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


@pytest.mark.parametrize("part", [1, 7, 100_000])
def test_a_files_frame_is_its_records_frame(
    tmp_path: Path, part: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read by pyarrow in blocks of a few lines, cut into score rows a few records at a time:
    the frame of the same records held in memory (read line by line), dtypes included."""
    monkeypatch.setattr(frame_columns, "PART_RECORDS", part)
    monkeypatch.setattr(record_table, "BLOCK_BYTES", 4000)
    rng = np.random.default_rng(3)
    world = make_world(12, rng, families=("alpha", "beta"), human=True)
    records = _messy(world, rng)
    path = _write(tmp_path / "judgments.jsonl", records)
    options = AnalysisOptions(judge_families={"j3": "gamma"}, control_arm="control")
    human = {world.items[0].id: {"preferred_arm": "treatment"}}
    judged = read_judgments(path)
    assert judged.dropped == 3
    got = build_frame(judged, human=human, items=world.items, options=options)
    expected = build_frame(records, human=human, items=world.items, options=options)
    _assert_same(expected, got)
    assert got.records["cost_usd"].notna().sum() == 1  # the redone record's cost, kept
    kept = read_judgments(path).records()
    assert len(got.records) == len(kept) and list(got.records["key"]) == [r.key for r in kept]


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_files_read_to_their_records_frame(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = build_frame(list(read_records(path)))
    _assert_same(expected, build_frame(read_judgments(path)))
    monkeypatch.setattr(frame_columns, "PART_RECORDS", 2)
    _assert_same(expected, build_frame(read_judgments(path)))


def test_a_dataframe_of_records_gives_their_frame(tmp_path: Path) -> None:
    """``pd.read_json(judgments, lines=True)``: missing values NaN, integer columns with one
    missing turned into floats; the same frame."""
    rng = np.random.default_rng(4)
    records = rubric_records(make_world(5, rng), JUDGES, rng)
    records[0] = dataclasses.replace(records[0], input_tokens=None, cost_usd=0.5)
    path = _write(tmp_path / "judgments.jsonl", records)
    _assert_same(build_frame(records), build_frame(pd.read_json(path, lines=True)))


def test_no_records_give_empty_tables(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n")
    frame = build_frame(read_judgments(path))
    assert len(frame.records) == 0 and len(frame.scores) == 0


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
