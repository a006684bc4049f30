"""`jurybox export --format csv` writes no cell a spreadsheet would run as a formula (issue 31
item 6); Parquet and JSONL keep the text as it is."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner
from verdict_trees import write_jsonl

from jurybox.cli import main

FORMULAS = {
    "q1": "=cmd|' /C calc'!A0",
    "q2": "+1+1",
    "q3": "-2+3",
    "q4": "@SUM(A1:A9)",
    "q5": "\t=1",
    "q6": "\r=1",
}
PLAIN = {"q7": "What is 2 + 2? = 4", "q8": "a - b"}  # a formula character, but not first


def _imported(tmp_path: Path) -> Path:
    rows = [
        {"qid": qid, "judge": "=judge", "verdict": "A", "question": text, "a": "-x", "b": "y"}
        for qid, text in {**FORMULAS, **PLAIN}.items()
    ]
    source = write_jsonl(tmp_path / "verdicts.jsonl", rows)
    out = tmp_path / "run" / "judgments.jsonl"
    mapping = ["query_id=qid", "judge=judge", "preferred=verdict", "question=question"]
    mapping += ["response_a=a", "response_b=b", "arm_a=@a", "arm_b=b"]
    args = ["import", "generic", str(source), "--out", str(out)]
    for pair in mapping:
        args += ["--map", pair]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def _export(run: Path, out: Path) -> None:
    result = CliRunner().invoke(main, ["export", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output


def test_csv_cells_that_would_run_as_formulas_are_written_as_text(tmp_path: Path) -> None:
    run = _imported(tmp_path)
    _export(run, tmp_path / "t.csv")
    with (tmp_path / "t.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    by_id = {row["query_id"]: row for row in rows}
    for qid, text in FORMULAS.items():
        assert by_id[qid]["question"] == "'" + text
        assert by_id[qid]["judge_name"] == "'=judge"
    for qid, text in PLAIN.items():
        assert by_id[qid]["question"] == text
    assert by_id["q1"]["response.@a"] == "'-x"
    # No cell of the file, the header's included, starts a formula.
    with (tmp_path / "t.csv").open(encoding="utf-8", newline="") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t", "\r"))]


def test_parquet_and_jsonl_keep_the_text_as_it_is(tmp_path: Path) -> None:
    run = _imported(tmp_path)
    _export(run, tmp_path / "t.jsonl")
    _export(run, tmp_path / "t.parquet")
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    from_jsonl = {row["query_id"]: row for row in map(json.loads, lines)}
    frame = pd.read_parquet(tmp_path / "t.parquet").set_index("query_id")
    for qid, text in {**FORMULAS, **PLAIN}.items():
        assert from_jsonl[qid]["question"] == text
        assert frame.loc[qid, "question"] == text
        assert frame.loc[qid, "judge_name"] == "=judge"


def test_numbers_are_not_quoted(tmp_path: Path) -> None:
    from jurybox.io.table import write_table

    out = tmp_path / "n.csv"
    write_table([{"score": -0.5, "count": -3, "text": "-3"}], out, "csv")
    assert out.read_text(encoding="utf-8").splitlines() == ["score,count,text", "-0.5,-3,'-3"]
