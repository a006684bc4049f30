"""What the importers refuse instead of changing it silently (issue 31 item 9): null ids, ragged
CSV rows and duplicate headers, bytes that are not UTF-8, lists where text belongs; and FastChat
model names are never paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from verdict_trees import fastchat_bench, jb_pair, write_json, write_jsonl

from jurybox.errors import DatasetError
from jurybox.io.verdicts import import_with_summary, load_imported

GENERIC = {"query_id": "q", "judge": "j", "preferred": "p"}


def _import(kind: str, source: Path, tmp_path: Path, mapping: dict[str, str] | None = None) -> Any:
    out = tmp_path / "out" / "judgments.jsonl"
    import_with_summary(kind, source, out, mapping)
    return load_imported(out)


def _refused(kind: str, source: Path, tmp_path: Path, **expect: Any) -> DatasetError:
    mapping = GENERIC if kind == "generic" else None
    with pytest.raises(DatasetError) as caught:
        _import(kind, source, tmp_path, mapping)
    error = caught.value
    for name, value in expect.items():
        got = error.reason if name == "reason" else getattr(error, name)
        assert (value in got) if name == "reason" else (got == value), (name, str(error))
    assert not (tmp_path / "out" / "judgments.jsonl").exists()  # all or nothing
    return error


# --- null ids ----------------------------------------------------------------------------------


def test_a_null_pandalm_idx_is_refused_not_the_id_none(tmp_path: Path) -> None:
    entry = {"idx": None, "instruction": "q", "response1": "a", "response2": "b", "annotator1": 1}
    write_json(tmp_path / "p" / "testset-v1.json", [entry])
    write_json(tmp_path / "p" / "gpt-testset-v1.json", [{"idx": None, "gpt_result": "1"}])
    path = str(tmp_path / "p" / "testset-v1.json")
    _refused("pandalm", tmp_path / "p", tmp_path, path=path, line=1, field="idx", reason="null")


@pytest.mark.parametrize("value", [None, "", "  ", True, 1.5, ["x"]])
def test_a_generic_query_id_that_is_no_id_is_refused(tmp_path: Path, value: Any) -> None:
    rows = [{"q": "ok", "j": "judge", "p": "A"}, {"q": value, "j": "judge", "p": "B"}]
    source = write_jsonl(tmp_path / "v.jsonl", rows)
    _refused("generic", source, tmp_path, path=str(source), line=2, field="q")


def test_a_null_judgebench_pair_id_and_fastchat_question_id_are_refused(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "jb" / "x.jsonl", [{**jb_pair("p1", "A>B", ["A>B"]), "pair_id": None}]
    )
    _refused("judgebench", source, tmp_path, line=1, field="pair_id")
    bench = fastchat_bench(tmp_path / "fc")
    judgments = bench / "model_judgment" / "gpt-4_pair.jsonl"
    lines = judgments.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "question_id": None})
    judgments.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _refused("fastchat", bench, tmp_path, path=str(judgments), line=2, field="question_id")


# --- the generic CSV ---------------------------------------------------------------------------


def test_a_generic_csv_with_ragged_rows_or_a_duplicate_header_is_refused(tmp_path: Path) -> None:
    # Six items; read by csv.DictReader, the second "q" column won and they collapsed into one.
    rows = "".join(f"{n},x,j,A\n" for n in range(6))
    source = tmp_path / "dup.csv"
    source.write_text("q,q,j,p\n" + rows, encoding="utf-8")
    _refused("generic", source, tmp_path, line=1, reason="duplicate 'q' column name")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("q,j,p\n1,j,A\n2,j,B,extra\n3,j\n", encoding="utf-8")
    _refused("generic", ragged, tmp_path, line=3, reason="4 cells but the header has 3")


def test_a_clean_generic_csv_keeps_every_item(tmp_path: Path) -> None:
    source = tmp_path / "ok.csv"
    source.write_text("q,j,p\n" + "".join(f"{n},j,A\n" for n in range(6)), encoding="utf-8")
    records, items = _import("generic", source, tmp_path, GENERIC)
    assert len(records) == len(items) == 6


# --- bytes and types ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_bytes_that_are_not_utf8_are_refused_not_replaced(tmp_path: Path, suffix: str) -> None:
    source = tmp_path / f"v.{suffix}"
    if suffix == "csv":
        source.write_bytes(b"q,j,p\n1,j,A\n2,caf\xe9,B\n")
    else:
        source.write_bytes(
            b'{"q": "1", "j": "j", "p": "A"}\n{"q": "2", "j": "caf\xe9", "p": "B"}\n'
        )
    line = 3 if suffix == "csv" else 2  # after the header, or the second object
    _refused("generic", source, tmp_path, line=line, reason="invalid UTF-8 (byte 0xe9")


def test_a_list_where_text_belongs_is_refused(tmp_path: Path) -> None:
    rows = [{"input": ["a", "list"], "output_1": "x", "output_2": "y", "label": 1}]
    folder = tmp_path / "Natural"
    write_json(folder / "dataset.json", rows)
    write_json(folder / "verdicts" / "GPT-4" / "result.json", [{**rows[0], "results": []}])
    _refused("llmbar", folder, tmp_path, line=1, field="input", reason="expected text, got a list")


# --- FastChat model names ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["m" * 300, "../../etc/passwd", "a/b", "nul\x00byte"])
def test_fastchat_model_names_are_never_paths(tmp_path: Path, name: str) -> None:
    bench = fastchat_bench(tmp_path)
    judgments = bench / "model_judgment" / "gpt-4_pair.jsonl"
    rows = [json.loads(line) for line in judgments.read_text(encoding="utf-8").splitlines()]
    write_jsonl(judgments, [{**row, "model_2": name} for row in rows])
    records, items = _import("fastchat", bench / "model_judgment" / "gpt-4_pair.jsonl", tmp_path)
    assert {record.response_b_label for record in records[:1]} == {"model_2"}
    item = next(i for i in items if name in i.id)
    assert item.authors["model_2"] == name
    assert item.responses == {"model_1": "Go to Hawaii.", "model_2": ""}  # no answer file
