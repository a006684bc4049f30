"""The record table (``io/record_table.py``): judgments.jsonl read into one Arrow table of a
schema derived from ``JudgeRecord``, one record per key; its two ways of reading a block
(pyarrow, and line by line where pyarrow cannot) agree; every bad line is a ``DatasetError``
naming the file, the line and the field, never a crash."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.errors import DatasetError
from jurybox.io import record_table
from jurybox.io.judgments import read_records, record_json
from jurybox.io.record_table import read_judgments, record_schema, records_table
from jurybox.io.table import judgment_rows, write_table
from jurybox.records import JudgeRecord, Status

GOLDEN = sorted((Path(__file__).parents[1] / "data" / "golden_modes").glob("*.jsonl"))


def _unique_keys() -> list[str]:
    """Every golden line, each key prefixed with its file's name (the files share keys)."""
    lines = []
    for path in GOLDEN:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            record["key"] = f"{path.stem}:{record['key']}"
            lines.append(json.dumps(record))
    return lines


LINES = _unique_keys()
RECORDS = [JudgeRecord.from_dict(json.loads(line)) for line in LINES]


def _write(path: Path, lines: list[str], tail: str = "") -> Path:
    path.write_text("".join(line + "\n" for line in lines) + tail, encoding="utf-8")
    return path


def _line(number: int = 0, **changes: Any) -> str:
    """A golden line with fields changed (``...``: the field left out)."""
    record = json.loads(LINES[number])
    record.update(changes)
    return json.dumps({k: v for k, v in record.items() if v is not ...})


def _literal(field: str, text: str, number: int = 0) -> str:
    """A golden line whose ``field`` is ``text`` as written (JSON that ``json.dumps`` cannot
    write, or would not)."""
    return _line(number, **{field: "@@"}).replace('"@@"', text)


def _line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_table, "_arrow_table", lambda block, wanted: None)


def test_the_schema_is_the_record_fields_typed_from_their_annotations() -> None:
    schema = record_schema()
    fields = dataclasses.fields(JudgeRecord)
    assert schema.names == [spec.name for spec in fields]
    hints = typing.get_type_hints(JudgeRecord)
    for spec in fields:
        optional = type(None) in typing.get_args(hints[spec.name])
        assert schema.field(spec.name).nullable == optional, spec.name
    assert schema.field("repeat").type == pa.int64()
    assert schema.field("cost_usd").type == pa.float64()
    assert schema.field("retest").type == pa.bool_()
    assert str(schema.field("positions").type) == "map<string, string>"
    assert str(schema.field("scores").type) == "map<string, map<string, double>>"
    assert str(schema.field("gate_failures").type) == "map<string, list<item: string not null>>"
    assert str(schema.field("ranking").type) == "list<item: string not null>"


def test_pyarrow_and_line_by_line_read_the_same_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every mode's records; blocks of a few lines (boundaries everywhere) or one block."""
    path = _write(tmp_path / "judgments.jsonl", LINES)
    whole = read_judgments(path).table
    assert whole.num_rows == len(LINES) and whole.schema == record_schema()
    monkeypatch.setattr(record_table, "BLOCK_BYTES", 3000)
    assert read_judgments(path).table.equals(whole)
    _line_by_line(monkeypatch)
    assert read_judgments(path).table.equals(whole)


def test_records_read_back_are_the_records_written(tmp_path: Path) -> None:
    records = RECORDS
    path = _write(tmp_path / "judgments.jsonl", [record_json(r) for r in records])
    read = read_judgments(path)
    assert read.records() == records
    assert read.table.equals(records_table(records).table)
    assert read_judgments(path, ["query_id"]).table.column_names == ["key", "query_id", "status"]


def test_a_mapping_keeps_its_keys_in_order_and_reads_null_values_as_absent(
    tmp_path: Path,
) -> None:
    overall = {"treatment": 4.0, "control": None, "zeta": 1}
    path = _write(tmp_path / "judgments.jsonl", [_line(overall=overall)])
    (record,) = read_judgments(path).records()
    assert list(record.overall or {}) == ["treatment", "zeta"]
    assert record.overall == {"treatment": 4.0, "zeta": 1.0}


def test_one_record_per_key_the_last_complete_one(tmp_path: Path) -> None:
    key = json.loads(LINES[0])["key"]
    lines = [
        _line(0, preference="A"),
        _line(1),
        _line(0, preference="B"),  # the last complete one: kept
        _line(0, status="provider_error"),  # a later failure: not kept
    ]
    read = read_judgments(_write(tmp_path / "judgments.jsonl", lines))
    assert read.dropped == 2
    assert read.table.column("key").to_pylist() == [json.loads(LINES[1])["key"], key]
    assert read.table.column("preference").to_pylist()[1] == "B"


def test_a_torn_last_line_and_blank_lines_are_skipped(tmp_path: Path) -> None:
    lines = [LINES[0], "", "  \t", "\t " + LINES[1], LINES[2]]
    path = _write(tmp_path / "judgments.jsonl", lines, tail='{"key": "torn')
    read = read_judgments(path)
    assert read.table.column("key").to_pylist() == [json.loads(line)["key"] for line in LINES[:3]]


def test_nan_is_a_number_and_a_lone_surrogate_is_replaced_and_counted(tmp_path: Path) -> None:
    """jurybox writes NaN for a holistic answer without a number; text UTF-8 cannot hold
    becomes U+FFFD, counted in ``text_replaced`` as the writer counts it."""
    nan = _literal("overall", '{"control": NaN}').replace('"error": null', '"error": "x\\ud800y"')
    assert "NaN" in nan and "\\ud800" in nan
    (record,) = read_judgments(_write(tmp_path / "judgments.jsonl", [nan])).records()
    assert record.error == "x\ufffdy" and record.text_replaced == 1
    assert record.overall is not None and record.overall["control"] != record.overall["control"]


def test_a_version_1_record_gets_its_collision_free_key(tmp_path: Path) -> None:
    old = _line(0, schema_version=1, query_id="x|y", judge_name="j1", presentation_order="o")
    (record,) = read_judgments(_write(tmp_path / "judgments.jsonl", [old])).records()
    assert record.key == "x\\|y|j1|o|r0" and record.schema_version == 2


DEEP = "[" * 100_000 + "]" * 100_000
BAD: list[tuple[str, str, str | None]] = [
    ("{not json", "invalid JSON", None),
    ("[1, 2]", "not a judgment record", None),
    (LINES[0] + " " + LINES[1], "invalid JSON: Extra data", None),
    (_line(repeat="x"), "expected an integer, got text", "repeat"),
    (_line(repeat=1.5), "expected an integer, got a number", "repeat"),
    (_line(retest=1), "expected true or false, got a number", "retest"),
    (_line(query_id=...), "missing or null", "query_id"),
    (_line(positions=None), "missing or null", "positions"),
    (_line(status="excellent"), "'excellent' is not one of ok", "status"),
    (_line(status=["ok"]), "is not one of", "status"),
    (_line(scores={"control": {"speed": "high"}}), "expected a number", "scores.control.speed"),
    (_line(scores={"control": 7}), "expected an object, got a number", "scores.control"),
    (_line(ranking=["control", None]), "null in an array", "ranking[1]"),
    (_line(input_tokens=2**70), "integer out of range", "input_tokens"),
    (_literal("cost_usd", "Infinity"), "Infinity is not a JSON number", None),
    (_literal("cost_usd", "-1e400"), "the number -1e400 is too large", None),
    (_literal("cost_usd", "NaN"), "NaN is not a number here", "cost_usd"),
    (_literal("input_tokens", "NaN"), "expected an integer", "input_tokens"),
    (_literal("repeat", "9" * 5000), "a number of 5,000 characters", None),
    (_literal("extra", DEEP), "nested deeper than 100 levels", None),
    (_line(preferred_arm="treatmnt"), "'treatmnt' is not an arm the record showed "
     "('treatment', 'control') nor a tie", "preferred_arm"),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "says", "field"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_bad_line_names_the_file_the_line_and_the_field(
    tmp_path: Path, bad: str, says: str, field: str | None
) -> None:
    path = _write(tmp_path / "judgments.jsonl", [LINES[0], "", LINES[1], bad, LINES[2]])
    with pytest.raises(DatasetError) as raised:
        read_judgments(path)
    assert raised.value.path == str(path) and raised.value.line == 4
    assert raised.value.field == field
    assert says in str(raised.value)
    with pytest.raises(DatasetError) as again:  # the resume path reads lines by the same rules
        list(read_records(path))
    assert str(again.value) == str(raised.value)


def test_a_preferred_arm_is_an_arm_shown_a_tie_or_null(tmp_path: Path) -> None:
    """A tie in any case and an unparsed (null) preference read; so does every golden record,
    rankings and scores included. The arm a record names must be one of its own ``positions``."""
    good = [_line(0, preferred_arm="Tie"), _line(1, preferred_arm=None), *LINES[2:]]
    read = read_judgments(_write(tmp_path / "judgments.jsonl", good)).records()
    assert [r.preferred_arm for r in read[:2]] == ["Tie", None]
    assert {r.mode for r in read} == {"pairwise", "rubric", "ranking", "criterion"}
    other = next(r for r in RECORDS if r.mode == "ranking").positions["C"]
    bad = _line(0, preferred_arm=other)  # an arm another record showed, not this one
    with pytest.raises(DatasetError, match=r"judgments.jsonl:3, field 'preferred_arm': 'c' is not"):
        read_judgments(_write(tmp_path / "judgments.jsonl", [LINES[1], LINES[2], bad]))


def test_analyze_refuses_a_typo_arm_with_exit_2(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lines = [*LINES[:3], _line(3, preferred_arm="treatmnt"), *LINES[4:]]
    judgments = _write(run / "judgments.jsonl", lines)
    before = judgments.read_bytes()
    result = CliRunner().invoke(main, ["analyze", str(run), "--no-plots"])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "judgments.jsonl:4" in said and "preferred_arm" in said and "treatmnt" in said
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert judgments.read_bytes() == before and not (run / "report").exists()


def test_bytes_that_are_not_utf8_are_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    bad = _line(error="caf@").encode().replace(b"@", b"\xe9")
    path.write_bytes((LINES[0] + "\n").encode() + bad + b"\n")
    with pytest.raises(DatasetError, match=r"judgments.jsonl:2: invalid UTF-8"):
        read_judgments(path)


def test_slices_read_other_columns_of_the_kept_records_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record_table, "BLOCK_BYTES", 2000)
    lines = [*LINES, _line(0, preference="B"), _line(3, status="provider_error")]
    path = _write(tmp_path / "judgments.jsonl", lines)
    whole = read_judgments(path)
    keys = read_judgments(path, ["key"]).released()
    assert len(keys) == len(whole) and keys.table.num_columns == 0
    # only the columns kept stay in memory; the others are read again, the same
    narrowed = read_judgments(path, ["overall", "query_id"]).released(keep=["overall", "error"])
    assert narrowed.table.column_names == ["overall"] and narrowed.dropped == whole.dropped
    columns = ["query_id", "overall", "error"]
    assert pa.concat_tables(narrowed.slices(columns)).equals(whole.table.select(columns))
    parts = list(keys.slices(["raw_response", "overall"]))
    assert len(parts) > 1
    assert pa.concat_tables(parts).equals(whole.table.select(["raw_response", "overall"]))
    # held columns from the table, the texts alone parsed again (pyarrow skips the rest)
    held = read_judgments(path, ["overall", "query_id"])
    columns = ["error", "overall", "raw_response", "query_id"]
    with monkeypatch.context() as patch:
        patch.setattr(record_table, "_arrow_table", None)  # not the parse of every column
        again = pa.concat_tables(held.slices(columns))
    assert again.equals(whole.table.select(columns))
    path.write_text(path.read_text().replace(json.loads(LINES[5])["key"], "renamed"))
    with pytest.raises(DatasetError, match="changed while it was read"):
        list(keys.slices(["raw_response"]))


def test_a_parquet_export_reads_back_as_its_records(tmp_path: Path) -> None:
    records = RECORDS
    exported = tmp_path / "judgments.parquet"
    write_table(judgment_rows(records), exported, "parquet")
    back = read_judgments(exported).records()
    assert [r.to_dict() for r in back] == [r.to_dict() for r in records]


def test_records_in_memory_are_checked_by_the_same_rules() -> None:
    record = RECORDS[0]
    bad = dataclasses.replace(record, repeat="2")  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match=r"field 'repeat': record 2: expected an integer"):
        records_table([record, bad])
    assert records_table([record, dataclasses.replace(record, status=Status.OK)]).dropped == 1


def test_a_ranking_whose_arm_names_hold_the_separator_reads_back_from_parquet(
    tmp_path: Path,
) -> None:
    """Arms ``a``, ``b`` and ``a>b>a`` (issue 31 item 5): the export's ``ranking`` column
    escapes an arm's own ``>`` as the record key does, so the Parquet file reads back whole."""
    record = next(r for r in RECORDS if r.mode == "ranking" and r.status == Status.OK)
    arms = ["a>b>a", "b", "a\\c"]
    positions = dict(zip(sorted(record.positions), arms, strict=True))
    changed = dataclasses.replace(record, positions=positions, ranking=[arms[2], arms[0], arms[1]])
    exported = tmp_path / "judgments.parquet"
    write_table(judgment_rows([changed]), exported, "parquet")
    (back,) = read_judgments(exported).records()
    assert back.ranking == ["a\\c", "a>b>a", "b"]
    # the key is rebuilt from the arms (``records.record_key``: these arms once collided)
    assert {**back.to_dict(), "key": None} == {**changed.to_dict(), "key": None}
