"""Fuzz test of the human-label reader (``jurybox export RUN --human``) and the judgments reader
(``jurybox export RUN`` and ``analyze RUN`` on a run whose judgments.jsonl is spoiled), issue
31's check; the rules are in ``fuzz.harness``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fuzz.harness import (
    BASE_ITEMS,
    DEEP,
    HUGE,
    Accepted,
    Cases,
    Expect,
    Refused,
    assert_equal,
    cli,
    jsonl,
    judge,
    shared_jsonl_cases,
)
from jurybox.cli import main

# --- a run: the labels reader and the judgments reader -------------------------------------------


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished pairwise run of a fake judge over the base items (12 records), with labels."""
    root = tmp_path_factory.mktemp("run")
    (root / "d.jsonl").write_bytes(jsonl(BASE_ITEMS))
    labels = [{"query_id": item["id"], "preferred_arm": "control"} for item in BASE_ITEMS]
    (root / "l.jsonl").write_bytes(jsonl(labels))
    (root / "c.yaml").write_text(
        "judges: {j: {provider: fake, fake: {behavior: first}}, k: {provider: fake}}\n"
        "task: {mode: pairwise}\npipeline: {test_retest_count: 0}\n"
        "paths: {dataset: d.jsonl, output_dir: run, human_labels: l.jsonl}\n",
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert cli("run", "c.yaml").exit_code == 0
    # One analysis first, outside the time limit: the modules it imports once are not a hang.
    args = ["analyze", str(root / "run"), "--out", str(root / "r"), "--no-plots"]
    report = CliRunner().invoke(main, args)
    assert report.exit_code == 0, report.output
    return root / "run"


def _exported(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "x.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _labels(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {r["query_id"]: r.get("human.preferred_arm") for r in rows}


LABEL_ROWS = [{"query_id": item["id"], "preferred_arm": "control"} for item in BASE_ITEMS]


def _label_rows(row: int, **fields: Any) -> list[dict[str, Any]]:
    rows = [dict(label) for label in LABEL_ROWS]
    rows[row].update(fields)
    return rows


def _labels_are(expected: dict[str, Any]) -> Accepted:
    return Accepted(lambda tmp_path: assert_equal(_labels(_exported(tmp_path)), expected))


ALL_CONTROL = dict.fromkeys(("a", "b", "c"), "control")
LABELS: Cases = {
    "clean": ("l.jsonl", jsonl(LABEL_ROWS), _labels_are(ALL_CONTROL)),
    "truncated": ("l.jsonl", jsonl(LABEL_ROWS)[:-12], Refused(3, None, "invalid JSON")),
    "preferred_arm_is_a_number": (
        "l.jsonl",
        jsonl(_label_rows(1, preferred_arm=5)),
        Refused(2, "preferred_arm"),
    ),
    "scores_is_text": ("l.jsonl", jsonl(_label_rows(1, scores="high")), Refused(2, "scores")),
    "query_id_is_null": ("l.jsonl", jsonl(_label_rows(1, query_id=None)), Refused(2, "query_id")),
    "deep_nesting": (
        "l.jsonl",
        jsonl(LABEL_ROWS)[:-1] + b"\n" + b'{"query_id": "d", "scores": ' + DEEP.encode() + b"}\n",
        Refused(4, None, "nested deeper"),
    ),
    "huge_score": (
        "l.jsonl",
        jsonl(LABEL_ROWS) + b'{"query_id": "d", "scores": {"control": ' + HUGE.encode() + b"}}\n",
        Refused(4, None, "5,000 characters"),
    ),
    "nan_score": (
        "l.jsonl",
        jsonl(LABEL_ROWS) + b'{"query_id": "d", "scores": {"control": NaN}}\n',
        Refused(4, None, "NaN"),
    ),
    "raw_nul": (
        "l.jsonl",
        jsonl(LABEL_ROWS) + b'{"query_id": "d\x00"}\n',
        Refused(4, None, "control character"),
    ),
    "lone_surrogate_in_notes": (
        "l.jsonl",
        jsonl(LABEL_ROWS).replace(b'"control"}\n', b'"control", "notes": "n\\udc00"}\n', 1),
        Accepted(
            lambda tmp_path: assert_equal(
                _exported(tmp_path)[0].get("human.notes", "n\ufffd")[-1], "\ufffd"
            )
        ),
    ),
    "lone_surrogate_in_query_id": (
        "l.jsonl",
        jsonl(_label_rows(1, query_id="b\ud800")),
        _labels_are({"a": "control", "b": None, "c": "control"}),  # matches no item: left out
    ),
    **shared_jsonl_cases(
        "l.jsonl", LABEL_ROWS, _labels_are(ALL_CONTROL), id_field="query_id", spoil=b'"b"'
    ),
    "csv_ragged": (
        "l.csv",
        b"query_id,preferred_arm\na,control\nb,control,x\n",
        Refused(3, None, "3 cells"),
    ),
    "csv_duplicate_header": ("l.csv", b"query_id,query_id\na,b\n", Refused(1, None, "duplicate")),
}


@pytest.mark.parametrize("name", list(LABELS))
def test_the_labels_reader(run_folder: Path, tmp_path: Path, name: str) -> None:
    filename, content, expect = LABELS[name]
    path = tmp_path / filename
    path.write_bytes(content)
    result = cli("export", run_folder, "--human", path, "--out", tmp_path / "x.jsonl")
    judge(expect, result, path, tmp_path)


# --- the judgments reader ------------------------------------------------------------------------
def _spoil_record(run: Path, row: int, edit: Callable[[dict[str, Any]], Any]) -> bytes:
    lines = (run / "judgments.jsonl").read_text("utf-8").splitlines()
    record = json.loads(lines[row])
    edit(record)
    lines[row] = json.dumps(record)
    return ("\n".join(lines) + "\n").encode()


def _spoil_line(run: Path, row: int, line: str) -> bytes:
    lines = (run / "judgments.jsonl").read_text("utf-8").splitlines()
    lines[row] = line
    return ("\n".join(lines) + "\n").encode()


def _set(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda record: record.__setitem__(name, value)


def _rows_are(count: int) -> Accepted:
    return Accepted(lambda tmp_path: assert_equal(len(_exported(tmp_path)), count))


def _judgments_cases(run: Path) -> dict[str, tuple[bytes, Expect]]:
    original = (run / "judgments.jsonl").read_bytes()
    line = original.decode().splitlines()[1]
    return {
        "clean": (original, _rows_are(12)),
        "torn_last_line": (original[:-30], _rows_are(11)),  # a kill mid-write: skipped
        "truncated_line": (_spoil_line(run, 1, line[:80]), Refused(2, None, "JSON")),
        "status_is_a_number": (_spoil_record(run, 1, _set("status", 5)), Refused(2, "status")),
        "status_unknown": (_spoil_record(run, 1, _set("status", "great")), Refused(2, "status")),
        "positions_is_a_list": (
            _spoil_record(run, 1, _set("positions", ["A"])),
            Refused(2, "positions"),
        ),
        "repeat_is_text": (_spoil_record(run, 1, _set("repeat", "x")), Refused(2, "repeat")),
        "scores_is_text": (_spoil_record(run, 1, _set("scores", "x")), Refused(2, "scores")),
        "query_id_is_null": (_spoil_record(run, 1, _set("query_id", None)), Refused(2, "query_id")),
        "key_is_missing": (_spoil_record(run, 1, lambda r: r.pop("key")), Refused(2, "key")),
        "line_is_a_list": (_spoil_line(run, 1, "[1, 2]"), Refused(2)),
        "deep_nesting": (
            _spoil_line(run, 1, line[:-1] + ', "extra": ' + DEEP + "}"),
            Refused(2, None, "nested deeper"),
        ),
        "huge_number": (
            _spoil_line(run, 1, line.replace('"repeat": 0', '"repeat": ' + HUGE)),
            Refused(2, None, "5,000 characters"),
        ),
        "nan": (
            _spoil_line(run, 1, line.replace('"cost_usd": null', '"cost_usd": NaN')),
            Refused(2, None, "NaN"),
        ),
        "raw_nul": (_spoil_line(run, 1, line.replace('"ok"', '"o\x00k"')), Refused(2)),
        "lone_surrogate_in_raw_response": (
            _spoil_line(run, 1, line.replace('"raw_response": "{', '"raw_response": "\\ud800{')),
            Accepted(
                lambda tmp_path: assert_equal(
                    sum("\ufffd" in str(r["raw_response"]) for r in _exported(tmp_path)), 1
                )
            ),
        ),
        "bom": (b"\xef\xbb\xbf" + original, _rows_are(12)),
        "crlf": (original.replace(b"\n", b"\r\n"), _rows_are(12)),
        "not_utf8": (original.replace(b'"ok"', b'"\xffk"', 1), Refused(1, None, "UTF-8")),
        "duplicate_key": (
            original + original.splitlines(keepends=True)[0],
            _rows_are(12),
        ),  # one kept
    }


JUDGMENT_CASES = [
    "clean", "torn_last_line", "truncated_line", "status_is_a_number", "status_unknown",
    "positions_is_a_list", "repeat_is_text", "scores_is_text", "query_id_is_null", "key_is_missing",
    "line_is_a_list", "deep_nesting", "huge_number", "nan", "raw_nul",
    "lone_surrogate_in_raw_response", "bom", "crlf", "not_utf8", "duplicate_key",
]  # fmt: skip
ANALYZED = {
    "clean",
    "status_is_a_number",
    "scores_is_text",
    "deep_nesting",
    "huge_number",
    "not_utf8",
}


@pytest.mark.parametrize("name", JUDGMENT_CASES)
def test_the_judgments_reader(run_folder: Path, tmp_path: Path, name: str) -> None:
    content, expect = _judgments_cases(run_folder)[name]
    run = shutil.copytree(run_folder, tmp_path / "run")
    path = run / "judgments.jsonl"
    path.write_bytes(content)
    dataset = run_folder.parent / "d.jsonl"
    result = cli("export", run, "--dataset", dataset, "--out", tmp_path / "x.jsonl")
    judge(expect, result, path, tmp_path)
    if name in ANALYZED:
        result = cli(
            "analyze", run, "--dataset", dataset, "--out", tmp_path / "report", "--no-plots"
        )
        if isinstance(expect, Refused):
            expect.check(result, path)
        else:
            assert result.exit_code == 0, result.output
