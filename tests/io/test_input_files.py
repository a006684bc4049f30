"""The bounded readers of outside files (issue 31 item 7): JSON whose nesting, numbers or
constants would raise a traceback or change silently, bytes that are not UTF-8, ragged CSV."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from jurybox.errors import DatasetError
from jurybox.io.input_files import (
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    as_identifier,
    parse_json,
    read_csv_rows,
    read_json_lines,
    read_json_list,
)

REFUSED = [
    ("deep", "[" * 100_000 + "]" * 100_000, "nested deeper than 100 levels", 101),
    ("just_too_deep", "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested deeper", 101),
    ("deep_object", '{"a": ' * 5_000 + "1" + "}" * 5_000, "nested deeper", 6 * 100 + 1),
    ("long_int", '{"a": ' + "7" * 5_000 + "}", "a number of 5,000 characters", 7),
    ("long_float", '{"a": 0.' + "5" * 200 + "}", "a number of 202 characters", 7),
    ("overflow", '{"a": 1e999}', "the number 1e999 is too large", 7),
    ("nan", '{"a": NaN}', "NaN is not a JSON number", 7),
    ("infinity", '{"a": [1, -Infinity]}', "-Infinity is not a JSON number", 11),
    ("truncated", '{"a": "b"', "invalid JSON", 10),
    ("nul", '{"a": "b\x00"}', "invalid JSON: Invalid control character", 9),
    ("extra", '{"a": 1} {}', "invalid JSON: Extra data", 10),
]


@pytest.mark.parametrize(("name", "text", "needle", "column"), REFUSED, ids=[c[0] for c in REFUSED])
def test_each_hostile_json_is_an_error_naming_file_line_and_column(
    name: str, text: str, needle: str, column: int
) -> None:
    started = time.perf_counter()
    with pytest.raises(DatasetError) as caught:
        parse_json(text, path="f.jsonl", line=7)
    assert time.perf_counter() - started < 5
    error = caught.value
    assert (error.path, error.line) == ("f.jsonl", 7)
    assert needle in error.reason and f"(column {column})" in error.reason


def test_limits_are_inclusive_and_values_are_those_of_json_loads() -> None:
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    longest = "9" * MAX_NUMBER_CHARS
    for text in (deepest, longest, '{"x": [1.5, -2, true, null, "\\ud800", "é"]}', "1e-999"):
        assert parse_json(text, path="f") == json.loads(text)


def test_a_fault_in_a_file_names_the_line_it_is_on(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text('[\n  {"a": 1},\n  {"a": NaN}\n]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"list.json:3: NaN is not a JSON number \(column 9\)"):
        list(read_json_list(path))


def test_bytes_that_are_not_utf8_are_refused_at_their_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": "caf\xe9"}\n')
    with pytest.raises(
        DatasetError, match=r"rows.jsonl:2: invalid UTF-8 \(byte 0xe9 at column 11\)"
    ):
        list(read_json_lines(path))


def test_a_bom_and_crlf_line_ends_read_as_without_them(tmp_path: Path) -> None:
    plain, dressed = tmp_path / "plain.jsonl", tmp_path / "dressed.jsonl"
    plain.write_bytes(b'{"a": 1}\n\n{"a": 2}\n')
    dressed.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}\r\n')
    assert (
        list(read_json_lines(dressed))
        == list(read_json_lines(plain))
        == [
            (1, {"a": 1}),
            (3, {"a": 2}),
        ]
    )


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("id,q\n1,a,b\n", 2, "3 cells but the header has 2"),
        ("id,q\n1\n", 2, "1 cells but the header has 2"),
        ("id,id\n1,2\n", 1, "duplicate 'id' column name"),
        ("id,\n1,2\n", 1, "empty column name"),
        ('id,q\n1,"open\n', 2, "malformed CSV"),
    ],
)
def test_a_csv_table_must_be_rectangular_with_one_name_per_column(
    tmp_path: Path, text: str, line: int, needle: str
) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=needle) as caught:
        list(read_csv_rows(path))
    assert caught.value.line == line


def test_csv_records_start_where_their_first_cell_is(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b'\xef\xbb\xbfid,q\r\n1,"two\r\nlines"\r\n\r\n2,b\r\n')
    assert list(read_csv_rows(path)) == [
        (2, {"id": "1", "q": "two\r\nlines"}),
        (5, {"id": "2", "q": "b"}),
    ]


def test_an_identifier_is_text_or_an_integer_never_null() -> None:
    assert [as_identifier(v) for v in ("a", 7, " x ")] == ["a", "7", " x "]
    assert [as_identifier(v) for v in (None, "", "  ", True, 1.0, [1], {"a": 1})] == [None] * 7


def test_parsing_stays_linear_on_a_large_file(tmp_path: Path) -> None:
    """A 20 MB list of objects (many brackets, shallow) is read without the depth walk costing
    more than the parse."""
    path = tmp_path / "big.json"
    path.write_text(json.dumps([{"a": [1, {"b": 2}]}] * 400_000), encoding="utf-8")
    started = time.perf_counter()
    assert sum(1 for _ in read_json_list(path)) == 400_000
    assert time.perf_counter() - started < 30  # generous: a noisy shared machine
