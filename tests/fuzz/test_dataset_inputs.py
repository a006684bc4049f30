"""Fuzz test of the data set loader, through ``jurybox export-pairs`` (issue 31's check; the
rules are in ``fuzz.harness``): JSONL, a JSON list and CSV."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzz.harness import (
    BASE_ITEMS,
    DEEP,
    FUZZ,
    HUGE,
    Accepted,
    Cases,
    Refused,
    assert_equal,
    cli,
    jsonl,
    judge,
    shared_jsonl_cases,
)

# --- the data set loader -------------------------------------------------------------------------


def _with(row: int, **fields: Any) -> list[dict[str, Any]]:
    rows = [dict(item) for item in BASE_ITEMS]
    rows[row].update(fields)
    return rows


def _raw_line(line: str, row: int = 1) -> bytes:
    """The base items with line ``row + 1`` replaced by ``line`` (text, written as is)."""
    lines = jsonl(BASE_ITEMS).decode().splitlines(keepends=True)
    lines[row] = line + "\n"
    return "".join(lines).encode()


def _pairs(tmp_path: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((tmp_path / "pairs.json").read_text("utf-8"))
    return data


def _base_pairs() -> list[dict[str, Any]]:
    return [
        {
            "task_id": item["id"],
            "question": item["question"],
            "expected_answer": None,
            "response_a": "a",
            "response_b": "b",
            "model_a": "control",
            "model_b": "treatment",
        }
        for item in BASE_ITEMS
    ]


def _pairs_are(expected: list[dict[str, Any]]) -> Accepted:
    return Accepted(lambda tmp_path: assert_equal(_pairs(tmp_path), expected))


def _question_is(text: str) -> Accepted:
    expected = _base_pairs()
    expected[1]["question"] = text
    return _pairs_are(expected)


_CSV_HEAD = "id,question,responses.control,responses.treatment\n"
_CSV_ROWS = "".join(f"{i['id']},{i['question']},a,b\n" for i in BASE_ITEMS)

DATASETS: Cases = {
    "clean": ("d.jsonl", jsonl(BASE_ITEMS), _pairs_are(_base_pairs())),
    "truncated_line": (
        "d.jsonl",
        _raw_line('{"id": "b", "question": "Q'),
        Refused(2, None, "invalid JSON"),
    ),
    "truncated_last_line": ("d.jsonl", jsonl(BASE_ITEMS)[:-9], Refused(3, None, "invalid JSON")),
    "id_is_a_list": ("d.jsonl", jsonl(_with(1, id=["b"])), Refused(2, "id", "got a list")),
    "id_is_null": ("d.jsonl", jsonl(_with(1, id=None)), Refused(2, "id", "missing")),
    "id_is_a_float": ("d.jsonl", jsonl(_with(1, id=1.5)), Refused(2, "id", "got number")),
    "question_is_a_number": ("d.jsonl", jsonl(_with(1, question=5)), Refused(2, "question")),
    "responses_is_text": ("d.jsonl", jsonl(_with(1, responses="x")), Refused(2, "responses")),
    "response_is_a_list": (
        "d.jsonl",
        jsonl(_with(1, responses={"control": ["a"], "treatment": "b"})),
        Refused(2, "responses.control"),
    ),
    "metadata_is_a_number": ("d.jsonl", jsonl(_with(1, metadata=3)), Refused(2, "metadata")),
    "line_is_a_list": ("d.jsonl", _raw_line("[1, 2]"), Refused(2, None, "expected a JSON object")),
    "deep_nesting": (
        "d.jsonl",
        _raw_line('{"id": "b", "question": "q", "metadata": {"x": ' + DEEP + "}}"),
        Refused(2, None, "nested deeper than 100 levels"),
    ),
    "huge_integer": (
        "d.jsonl",
        _raw_line('{"id": "b", "question": "q", "metadata": {"x": ' + HUGE + "}}"),
        Refused(2, None, "a number of 5,000 characters"),
    ),
    "huge_float": (
        "d.jsonl",
        _raw_line('{"id": "b", "metadata": {"x": 1e999}}'),
        Refused(2, None, "too large"),
    ),
    "nan": ("d.jsonl", _raw_line('{"id": "b", "metadata": {"x": NaN}}'), Refused(2, None, "NaN")),
    "raw_nul": (
        "d.jsonl",
        _raw_line('{"id": "b", "question": "Q\x00"}'),
        Refused(2, None, "control character"),
    ),
    "escaped_nul": ("d.jsonl", jsonl(_with(1, question="Q\x00b")), _question_is("Q\x00b")),
    "lone_surrogate_in_text": (
        "d.jsonl",
        _raw_line(
            '{"id": "b", "question": "Q\\ud800?", "responses": {"control": "a", "treatment": "b"}}'
        ),
        _question_is("Q\ufffd?"),
    ),
    "lone_surrogates_make_ids_equal": (
        "d.jsonl",
        jsonl(
            [
                {**BASE_ITEMS[0], "id": "x\ud800"},
                {**BASE_ITEMS[1], "id": "x\udbff"},
            ]
        ),
        Refused(2, "id", "duplicate"),
    ),
    **shared_jsonl_cases(
        "d.jsonl", BASE_ITEMS, _pairs_are(_base_pairs()), id_field="id", spoil=b"Question b"
    ),
    "empty": ("d.jsonl", b"", Refused(None, None, "empty file")),
    "json_list_truncated": (
        "d.json",
        json.dumps(BASE_ITEMS, indent=1).encode()[:-40],
        Refused(22, None, "Unterminated string"),
    ),
    "json_list_deep": (
        "d.json",
        ("[" + json.dumps(BASE_ITEMS[0]) + "," + DEEP + "]").encode(),
        Refused(1, None, "nested deeper"),
    ),
    "json_list_bom_crlf": (
        "d.json",
        b"\xef\xbb\xbf" + json.dumps(BASE_ITEMS, indent=1).encode().replace(b"\n", b"\r\n"),
        _pairs_are(_base_pairs()),
    ),
    "csv_clean_bom_crlf": (
        "d.csv",
        b"\xef\xbb\xbf" + (_CSV_HEAD + _CSV_ROWS).encode().replace(b"\n", b"\r\n"),
        _pairs_are(_base_pairs()),
    ),
    "csv_ragged": (
        "d.csv",
        (_CSV_HEAD + _CSV_ROWS + "d,Q?,a,b,extra\n").encode(),
        Refused(5, None, "5 cells"),
    ),
    "csv_short_row": ("d.csv", (_CSV_HEAD + "a,Q?,a\n").encode(), Refused(2, None, "3 cells")),
    "csv_duplicate_header": (
        "d.csv",
        ("id,id,question,responses.control\n" + "a,b,Q,x\n").encode(),
        Refused(1, None, "duplicate 'id'"),
    ),
    "csv_not_utf8": (
        "d.csv",
        (_CSV_HEAD + _CSV_ROWS).encode().replace(b"Question c", b"Q\xfe"),
        Refused(4, None, "invalid UTF-8"),
    ),
    "csv_huge_number_cell": (
        "d.csv",
        (_CSV_HEAD.strip() + ",metadata.x\n" + "a,Q?,a,b," + HUGE + "\n").encode(),
        Refused(2, "metadata.x", "a number of 5,000 characters"),
    ),
    "csv_deep_json_cell": (
        "d.csv",
        (
            _CSV_HEAD.strip() + ",metadata\n" + 'a,Q?,a,b,"{""x"": ' + DEEP[49_000:-49_000] + '}"\n'
        ).encode(),
        Refused(2, "metadata", "nested deeper"),
    ),
    "csv_dotted_column_too_deep": (
        "d.csv",
        (_CSV_HEAD.strip() + ",metadata." + ".".join(["k"] * 3_000) + "\na,Q?,a,b,x\n").encode(),
        Refused(2, "metadata.k.k...", "nested deeper than 100 levels"),
    ),
    "json_list_padded_with_30_mb_of_spaces": (
        "d.json",
        ("[" + " " * 30_000_000 + ",\n".join(map(json.dumps, BASE_ITEMS)) + "]").encode(),
        _pairs_are(_base_pairs()),
    ),
    "csv_cell_past_the_field_limit": (
        "d.csv",
        (_CSV_HEAD + "a,Q?,a," + "b" * 200_000 + "\n").encode(),
        Refused(2, None, "field larger than field limit"),
    ),
    "csv_200_000_columns": (  # a duplicate found among them pairwise took minutes
        "d.csv",
        (_CSV_HEAD.strip() + "".join(f",metadata.c{i}" for i in range(200_000)) + ",id\n").encode(),
        Refused(1, None, "duplicate 'id'"),
    ),
}


@pytest.mark.parametrize("name", list(DATASETS))
def test_the_data_set_loader(tmp_path: Path, name: str) -> None:
    filename, content, expect = DATASETS[name]
    path = tmp_path / filename
    path.write_bytes(content)
    result = cli("export-pairs", path, "--out", tmp_path / "pairs.json")
    judge(expect, result, path, tmp_path)


@given(cut=st.integers(min_value=1, max_value=len(jsonl(BASE_ITEMS)) - 1))
@FUZZ
def test_a_data_set_cut_anywhere(tmp_path_factory: pytest.TempPathFactory, cut: int) -> None:
    """Cut at a line's end: the items before it; anywhere else: refused at the cut line."""
    tmp_path = tmp_path_factory.mktemp("cut")
    content = jsonl(BASE_ITEMS)[:cut]
    path = tmp_path / "d.jsonl"
    path.write_bytes(content)
    result = cli("export-pairs", path, "--out", tmp_path / "pairs.json")
    whole = content.count(b"\n")
    if content.endswith(b"\n"):
        assert result.exit_code == 0 and _pairs(tmp_path) == _base_pairs()[:whole]
    else:
        Refused(whole + 1, None, "invalid JSON").check(result, path)


@given(
    at=st.integers(min_value=0, max_value=len(jsonl(BASE_ITEMS)) - 1),
    byte=st.sampled_from(b'\x00\xff"{}[],:\\\n'),
)
@FUZZ
def test_a_data_set_spoiled_anywhere(
    tmp_path_factory: pytest.TempPathFactory, at: int, byte: int
) -> None:
    """One byte replaced anywhere: read (the file still says what it says) or refused at the
    line of the change, or the line after (a line end removed)."""
    tmp_path = tmp_path_factory.mktemp("spoiled")
    content = bytearray(jsonl(BASE_ITEMS))
    line = content[:at].count(b"\n") + 1
    content[at] = byte
    path = tmp_path / "d.jsonl"
    path.write_bytes(bytes(content))
    result = cli("export-pairs", path, "--out", tmp_path / "pairs.json")
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert re.search(
            rf"error: {re.escape(str(path))}(:({line}|{line + 1})\b|: empty)", result.output
        ), (line, result.output)
