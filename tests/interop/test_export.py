"""`jurybox export`: one row per judgment with the item's texts and labels joined (#15)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from interop.conftest import invoke
from jurybox.io.verdicts import companion_items_path, read_items

MT_BENCH_RECORDS = 1_600  # 200 pairs x 4 judges (ChatGPT, GPT-4, LLaMA2, PaLM2) x 2 orders


@pytest.mark.shared_data
def test_mt_bench_to_parquet_reads_back_with_the_question_text(
    mt_bench: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mt.parquet"
    result = invoke("export", str(mt_bench), "--format", "parquet", "--out", str(out))
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(out)
    assert len(frame) == MT_BENCH_RECORDS
    items = {item.id: item for item in read_items(companion_items_path(mt_bench))}
    assert len(items) == 200
    for _, row in frame.sample(20, random_state=0).iterrows():
        item = items[row["query_id"]]
        assert row["question"] == item.question  # the text itself, joined by id
        assert row["human.preferred_arm"] == item.human["preferred_arm"]
    arms = sorted(items[frame.query_id.iloc[0]].responses)
    assert {f"response.{arm}" for arm in arms} <= set(frame.columns)
    assert frame["question"].notna().all()
    assert set(frame["status"]) <= {"ok", "unparsed"}


@pytest.mark.shared_data
def test_the_three_formats_hold_the_same_table(mt_bench: Path, tmp_path: Path) -> None:
    for suffix in ("csv", "jsonl"):  # the format from the suffix
        result = invoke("export", str(mt_bench), "--out", str(tmp_path / f"t.{suffix}"))
        assert result.exit_code == 0, result.output
    with (tmp_path / "t.csv").open(encoding="utf-8", newline="") as handle:
        csv_rows = list(csv.DictReader(handle))
    json_rows = [json.loads(line) for line in (tmp_path / "t.jsonl").open(encoding="utf-8")]
    assert len(csv_rows) == len(json_rows) == MT_BENCH_RECORDS
    assert list(csv_rows[0]) == list(json_rows[0])
    for from_csv, from_json in zip(csv_rows[:50], json_rows[:50], strict=True):
        assert from_csv["question"] == from_json["question"]
        assert from_csv["preferred_arm"] == (from_json["preferred_arm"] or "")


def test_a_run_exports_with_its_manifest_dataset_and_labels(
    pairwise_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pairwise_run)
    out = tmp_path / "pairwise.parquet"
    result = invoke("export", "examples/results/pairwise", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "dataset: examples/items.jsonl (from manifest.json)" in result.output
    frame = pd.read_parquet(out)
    judgments = (pairwise_run / "examples/results/pairwise/judgments.jsonl").read_text("utf-8")
    assert len(frame) == len(judgments.splitlines()) == 264
    labelled = frame[frame["human.preferred_arm"].notna()]
    assert 0 < len(labelled) < len(frame)  # examples/human_labels.jsonl labels some items
    shown_first = frame["position.A"]
    assert (frame["presentation_order"] == shown_first + "_first").all()
    assert frame["response.control"].str.len().gt(0).all()


def test_an_unknown_format_is_bad_input_and_writes_nothing(
    pairwise_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pairwise_run)
    out = tmp_path / "table.xlsx"
    result = invoke("export", "examples/results/pairwise", "--out", str(out))
    assert result.exit_code == 2
    assert "--format csv|parquet|jsonl" in result.output
    assert not out.exists()
    missing = invoke("export", str(tmp_path / "nothing"), "--out", str(tmp_path / "t.csv"))
    assert missing.exit_code == 2
    assert "judgments file not found" in missing.output
