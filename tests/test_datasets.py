"""jurybox.io.datasets: the same dataset read from every format, column mapping, labels, export."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from jurybox.config import DatasetConfig, LabelsConfig, config_from_mapping
from jurybox.errors import DatasetError
from jurybox.io.datasets import (
    dataset_hash,
    export_pairs,
    label_lines,
    load_dataset,
    load_human_labels,
)
from jurybox.records import Item

ROWS: list[dict[str, Any]] = [
    {
        "id": "q1",
        "question": "What is 2 + 2?",
        "responses": {"control": "4", "treatment": "Four."},
        "contexts": ["Arithmetic facts."],
        "expected_answer": "4",
        "metadata": {"category": "math", "difficulty": "easy", "normal": True},
        "authors": {"control": "openai", "treatment": "anthropic"},
        "human": {"preferred_arm": "tie", "verdict": {"control": "Pass", "treatment": "Pass"}},
    },
    {
        "id": "q2",
        "question": "Capital of France?",
        "responses": {"control": "Lyon.", "treatment": "Paris."},
        "metadata": {"category": "factual", "difficulty": "easy"},
        "authors": {"control": "openai", "treatment": "anthropic"},
        "human": {
            "preferred_arm": "treatment",
            "scores": {"control": {"overall": 2}},
            "verdict": {"control": "Fail"},
        },
    },
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def flat_rows() -> tuple[list[str], list[list[str]]]:
    """ROWS as a flat CSV: dotted columns, one JSON cell, one JSON list."""
    header = [
        "id",
        "question",
        "responses.control",
        "responses.treatment",
        "contexts",
        "expected_answer",
        "metadata.category",
        "metadata.difficulty",
        "metadata.normal",
        "authors",
        "human.preferred_arm",
        "human.verdict.control",
        "human.verdict.treatment",
        "human.scores.control.overall",
    ]
    authors = json.dumps({"control": "openai", "treatment": "anthropic"})
    first = ["q1", "What is 2 + 2?", "4", "Four.", '["Arithmetic facts."]', "4", "math", "easy"]
    second = ["q2", "Capital of France?", "Lyon.", "Paris.", "", "", "factual", "easy", ""]
    rows = [
        [*first, "true", authors, "tie", "Pass", "Pass", ""],
        [*second, authors, "treatment", "Fail", "", "2"],
    ]
    return header, rows


def assert_rows(items: list[Item]) -> None:
    assert [item.id for item in items] == ["q1", "q2"]
    first, second = items
    assert first.responses == {"control": "4", "treatment": "Four."}
    assert first.arms == ("control", "treatment")
    assert first.contexts == ("Arithmetic facts.",)
    assert first.expected_answer == "4"
    assert first.metadata == {"category": "math", "difficulty": "easy", "normal": True}
    assert first.authors == {"control": "openai", "treatment": "anthropic"}
    assert first.human == {
        "preferred_arm": "tie",
        "verdict": {"control": "Pass", "treatment": "Pass"},
    }
    assert second.contexts == ()
    assert second.expected_answer is None
    assert second.metadata == {"category": "factual", "difficulty": "easy"}
    assert second.human == {
        "preferred_arm": "treatment",
        "scores": {"control": {"overall": 2.0}},
        "verdict": {"control": "Fail"},
    }


def test_jsonl_reads_every_field(tmp_path: Path) -> None:
    assert_rows(load_dataset(write_jsonl(tmp_path / "d.jsonl", ROWS)))


def test_json_list_reads_every_field(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps(ROWS, indent=2), encoding="utf-8")
    assert_rows(load_dataset(path))


def test_csv_dotted_and_json_columns(tmp_path: Path) -> None:
    header, rows = flat_rows()
    assert_rows(load_dataset(write_csv(tmp_path / "d.csv", header, rows)))


def test_parquet_struct_map_and_list_columns(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": ["q1", "q2"],
            "question": [ROWS[0]["question"], ROWS[1]["question"]],
            "responses": [ROWS[0]["responses"], ROWS[1]["responses"]],
            "contexts": [["Arithmetic facts."], None],
            "expected_answer": ["4", None],
            # a struct column: the row without `normal` reads back as normal=None, then absent
            "metadata": [ROWS[0]["metadata"], ROWS[1]["metadata"]],
            "authors": pa.array(
                [list(ROWS[0]["authors"].items()), list(ROWS[1]["authors"].items())],
                type=pa.map_(pa.string(), pa.string()),
            ),
            # nested structs: absent arms and keys read back as nulls, which mean "absent"
            "human": [ROWS[0]["human"], ROWS[1]["human"]],
        }
    )
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    assert_rows(load_dataset(path))


def test_parquet_json_text_cells(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": [1],
            "question": ["q"],
            "responses": [json.dumps({"a": "x", "b": "y"})],
            "human": [json.dumps({"preferred_arm": "b"})],
        }
    )
    pq.write_table(table, tmp_path / "d.parquet")
    (item,) = load_dataset(tmp_path / "d.parquet")
    assert (item.id, dict(item.responses), dict(item.human)) == (
        "1",
        {"a": "x", "b": "y"},
        {"preferred_arm": "b"},
    )


def test_parquet_reads_past_one_batch_and_counts_rows(tmp_path: Path) -> None:
    rows = 2500  # more than one record batch
    table = pa.table(
        {
            "id": list(range(rows)),
            "question": [f"q{i}" for i in range(rows)],
            "responses": [{"a": "x"}] * rows,
        }
    )
    path = tmp_path / "big.parquet"
    pq.write_table(table, path, row_group_size=700)
    items = load_dataset(path)
    assert len(items) == rows
    assert items[-1].id == str(rows - 1)  # ints become strings

    table = table.set_column(0, "id", pa.array([*range(rows - 1), 5]))
    pq.write_table(table, path, row_group_size=700)
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert (caught.value.line, caught.value.field) == (rows, "id")
    assert "first on row 6" in str(caught.value)
    assert f"Parquet row {rows}" in str(caught.value)


def test_column_mapping_renames_jsonl_keys(tmp_path: Path) -> None:
    rows = [
        {"qid": 7, "prompt": "Hi?", "a": "hello", "b": "hey", "topic": "chat"},
        {"qid": 8, "prompt": "Bye?", "a": "bye", "b": "ciao", "topic": "chat"},
    ]
    config = DatasetConfig(
        columns={"id": "qid", "question": "prompt", "metadata.topic": "topic"},
        response_columns={"base": "a", "new": "b"},
    )
    items = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows), config)
    assert items[0] == Item(
        id="7",
        question="Hi?",
        responses={"base": "hello", "new": "hey"},
        metadata={"topic": "chat"},
    )
    assert items[1].arms == ("base", "new")


def test_column_mapping_for_csv_and_a_swap(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "d.csv", ["question", "id", "r1"], [["q-7", "What?", "x"]])
    config = DatasetConfig(
        columns={"id": "question", "question": "id"}, response_columns={"only": "r1"}
    )
    (item,) = load_dataset(path, config)
    assert (item.id, item.question, dict(item.responses)) == ("q-7", "What?", {"only": "x"})


def test_mapped_column_missing_names_the_column(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "1", "responses": {"a": "x"}}])
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, DatasetConfig(columns={"question": "prompt"}))
    assert caught.value.field == "question"
    assert "column 'prompt'" in str(caught.value)


def test_mapping_to_an_unknown_field_is_refused(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    with pytest.raises(DatasetError) as caught:
        load_dataset(path, DatasetConfig(columns={"prompt": "question"}))
    assert caught.value.field == "dataset.columns.prompt"


def test_arms_are_aligned_to_the_first_item(tmp_path: Path) -> None:
    rows = [
        {"id": "1", "question": "q", "responses": {"a": "x", "b": "y"}},
        {"id": "2", "question": "q", "responses": {"b": "y2", "a": "x2"}},
    ]
    items = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    assert [item.arms for item in items] == [("a", "b"), ("a", "b")]
    assert items[1].responses["a"] == "x2"


def test_shorthands_and_normalisation(tmp_path: Path) -> None:
    rows = [
        {
            "id": 1,
            "question": "q",
            "responses": {"solo": ""},  # an empty response is data, not an error
            "contexts": "one passage",
            "expected_answer": 42,
            "human": {"verdict": "pass", "scores": {"solo": 7}, "annotator": 3, "notes": None},
        }
    ]
    (item,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    assert item.id == "1"
    assert item.responses == {"solo": ""}
    assert item.contexts == ("one passage",)
    assert item.expected_answer == "42"
    assert item.human == {
        "verdict": {"solo": "Pass"},
        "scores": {"solo": {"overall": 7.0}},
        "annotator": "3",
    }


def test_csv_literals_only_in_metadata_and_human(tmp_path: Path) -> None:
    header = ["id", "question", "responses.a", "expected_answer", "metadata.zip", "metadata.n"]
    path = write_csv(tmp_path / "d.csv", header, [["1", "q", "true", "12", "01234", "3.5"]])
    (item,) = load_dataset(path)
    assert item.responses == {"a": "true"}
    assert item.expected_answer == "12"
    assert item.metadata == {"zip": "01234", "n": 3.5}


def test_csv_multiline_cells_bom_and_blank_lines(tmp_path: Path) -> None:
    text = '\ufeffid,question,responses.a\n1,"two\nlines",x\n\n2,q,"a\nb\nc"\n3,q,'
    path = tmp_path / "d.csv"
    path.write_text(text + '"unterminated\n', encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert caught.value.line == 8  # the physical line where the reader gave up
    path.write_text(text + "y\n", encoding="utf-8")
    items = load_dataset(path)
    assert [item.id for item in items] == ["1", "2", "3"]
    assert items[0].question == "two\nlines"
    assert items[1].responses == {"a": "a\nb\nc"}
    path.write_text(text + "y\n" + "4,q\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert caught.value.line == 9  # record 4 starts after the three-line cell of record 2


def test_json_list_errors_name_the_element_line(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    good = json.dumps(ROWS[0])
    path.write_text(f'[\n  {good},\n\n  {{"id": "x", "question": 5}}\n]', encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert (caught.value.line, caught.value.field) == (4, "question")
    path.write_text(f"[\n  {good}\n  {good}\n]", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert caught.value.line == 3
    assert "invalid JSON" in str(caught.value)


def test_jsonl_and_csv_are_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading never loads the whole file: whole-file reads are made to fail."""
    jsonl = write_jsonl(tmp_path / "d.jsonl", ROWS)
    header, rows = flat_rows()
    flat = write_csv(tmp_path / "d.csv", header, rows)

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("read the whole file")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    monkeypatch.setattr(Path, "read_text", refuse)
    assert len(load_dataset(jsonl)) == len(load_dataset(flat)) == 2


def test_dataset_hash_is_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", ROWS)
    assert dataset_hash(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    before = dataset_hash(path)
    path.write_bytes(path.read_bytes() + b"\n")
    assert dataset_hash(path) != before
    with pytest.raises(DatasetError, match="cannot read"):
        dataset_hash(tmp_path / "missing.jsonl")


def test_export_pairs_default_arms_and_authors(tmp_path: Path) -> None:
    items = load_dataset(write_jsonl(tmp_path / "d.jsonl", ROWS))
    pairs = export_pairs(items)
    assert pairs[1] == {
        "task_id": "q2",
        "question": "Capital of France?",
        "expected_answer": None,
        "response_a": "Lyon.",
        "response_b": "Paris.",
        "model_a": "openai",
        "model_b": "anthropic",
    }
    swapped = export_pairs(items, ("treatment", "control"))
    assert swapped[0]["response_a"] == "Four."
    assert swapped[0]["model_b"] == "openai"


def test_export_pairs_refuses_other_than_two_arms(tmp_path: Path) -> None:
    rows = [{"id": "1", "question": "q", "responses": {"a": "1", "b": "2", "c": "3"}}]
    items = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    with pytest.raises(DatasetError, match="exactly two arms") as caught:
        export_pairs(items)
    assert caught.value.field == "arms"
    pairs = export_pairs(items, ["c", "a"])
    assert (pairs[0]["response_a"], pairs[0]["model_a"], pairs[0]["model_b"]) == ("3", "c", "a")
    with pytest.raises(DatasetError, match="no response for arm 'z'"):
        export_pairs(items, ("a", "z"))
    with pytest.raises(DatasetError, match="two different arms"):
        export_pairs(items, ("a", "a"))


def test_human_labels_from_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = write_jsonl(
        tmp_path / "h.jsonl",
        [
            {"query_id": "q1", "preferred_arm": "Tie", "annotator": "ann1"},
            {"query_id": 2, "verdict": {"control": "fail"}, "scores": {"control": {"acc": 3}}},
        ],
    )
    labels = load_human_labels(jsonl)
    assert labels == {
        "q1": {"preferred_arm": "tie", "annotator": "ann1"},
        "2": {"verdict": {"control": "Fail"}, "scores": {"control": {"acc": 3.0}}},
    }
    header = ["query_id", "preferred_arm", "verdict.control", "scores.control.overall"]
    flat = write_csv(tmp_path / "h.csv", header, [["q1", "control", "Pass", "4.5"]])
    assert load_human_labels(flat) == {
        "q1": {
            "preferred_arm": "control",
            "verdict": {"control": "Pass"},
            "scores": {"control": {"overall": 4.5}},
        }
    }


def test_human_label_file_errors(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "h.jsonl",
        [{"query_id": "q1", "preferred_arm": "a"}, {"query_id": "q1", "preferred_arm": "b"}],
    )
    with pytest.raises(DatasetError) as caught:
        load_human_labels(path)
    assert (caught.value.line, caught.value.field) == (2, "query_id")
    assert "first on line 1" in str(caught.value)
    write_jsonl(path, [{"query_id": "q1", "annotator": "x"}])
    with pytest.raises(DatasetError, match="no label"):
        load_human_labels(path)
    write_jsonl(path, [{"preferred_arm": "a"}])
    with pytest.raises(DatasetError, match="missing") as caught:
        load_human_labels(path)
    assert caught.value.field == "query_id"
    write_jsonl(path, [{"query_id": "q", "verdict": "Pass"}])
    with pytest.raises(DatasetError) as caught:
        load_human_labels(path)
    assert caught.value.field == "verdict"  # a bare verdict needs the arm, which a label file lacks
    write_jsonl(path, [{"query_id": "q", "prefered_arm": "a"}])
    with pytest.raises(DatasetError) as caught:
        load_human_labels(path)
    assert caught.value.field == "prefered_arm"


# --- label value maps and the hints of a column or value that matches nothing ------------------


def _csv(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_label_values_map_to_arms_inline_and_in_a_label_file(tmp_path: Path) -> None:
    items = _csv(tmp_path / "d.csv", "qid,prompt,a,b,winner\nx1,Q?,one,two,A\nx2,Q?,one,two,2\n")
    mapping = DatasetConfig(
        columns={"id": "qid", "question": "prompt", "human.preferred_arm": "winner"},
        response_columns={"old": "a", "new": "b"},
    )
    labels = LabelsConfig(values={"A": "old", "2": "new"})
    loaded = load_dataset(items, mapping, labels)
    assert [item.human["preferred_arm"] for item in loaded] == ["old", "new"]
    with pytest.raises(DatasetError) as refused:  # without the map: "A" names no arm
        load_dataset(items, mapping)
    said = str(refused.value)
    assert "'A' is not an arm (allowed: old, new, tie)" in said
    assert "`labels: {values: {A: ARM}}`" in said and refused.value.line == 2
    file = _csv(tmp_path / "l.csv", "id,winner,annotator\nx1,B,ann\nx2,draw,ann\n")
    read = LabelsConfig(
        columns={"query_id": "id", "preferred_arm": "winner"},
        values={"A": "old", "B": "new", "draw": "tie"},
    )
    assert load_human_labels(file, read) == {
        "x1": {"preferred_arm": "new", "annotator": "ann"},
        "x2": {"preferred_arm": "tie", "annotator": "ann"},
    }


def test_a_mapped_label_file_keeps_its_annotators_lines(tmp_path: Path) -> None:
    """``labels:`` maps each line; the lines then merge as any label file's do: a later line
    by the same annotator supersedes, several annotators' preferences go to ``annotators``."""
    file = _csv(
        tmp_path / "l.csv",
        "id,winner,annotator\nx1,A,ann\nx1,B,bob\nx2,A,ann\nx2,draw,ann\nx1,B,ann\n",
    )
    read = LabelsConfig(
        columns={"query_id": "id", "preferred_arm": "winner"},
        values={"A": "old", "B": "new", "draw": "tie"},
    )
    lines = list(label_lines(file, read))
    assert [(line.query_id, line.human["preferred_arm"]) for line in lines] == [
        ("x1", "old"),
        ("x1", "new"),
        ("x2", "old"),
        ("x2", "tie"),
        ("x1", "new"),
    ]
    labels = load_human_labels(file, read)
    assert labels["x1"]["annotators"] == {"ann": "new", "bob": "new"}
    assert labels["x2"] == {"preferred_arm": "tie", "annotator": "ann"}
    with pytest.raises(DatasetError, match=r"`labels: \{columns: \{query_id: id\}\}`"):
        load_human_labels(file)  # unmapped, the file's own column names are refused


def test_yaml_number_keys_of_a_value_map_are_read_as_text() -> None:
    config = config_from_mapping(
        {"judges": {"j": {"provider": "fake"}}, "paths": {"dataset": "d.jsonl"},
         "labels": {"values": {1: "old", 2: "new"}}}
    )  # fmt: skip
    assert config.labels.values == {"1": "old", "2": "new"}


@pytest.mark.parametrize(
    ("header", "config", "field", "hint"),
    [
        # a column near a field's name: the field, and the mapping that reads it
        ("qid,question,responses.a", {}, "qid", "did you mean 'id'? To read column 'qid' as id, "
         "map it: `dataset: {columns: {id: qid}}`"),
        # no near name: the required field it may hold
        ("id,prompt,responses.a", {}, "prompt",
         "if 'prompt' holds the question, map it: `dataset: {columns: {question: prompt}}`"),
        ("id,question,answer_a", {}, "answer_a",
         "map it to its arm: `dataset: {response_columns: {ARM: answer_a}}`"),
        # a mapped column that is not there, one near it that is
        ("id,prompt,responses.a", {"columns": {"question": "promt"}}, "question",
         "no column 'promt' (dataset.columns.question); did you mean 'prompt'?"),
        ("id,question,answer_a,answer_b",
         {"response_columns": {"old": "answer_a", "new": "answer_c"}}, "responses.new",
         "missing response column 'answer_c'; did you mean 'answer_b'?"),
    ],
)  # fmt: skip
def test_a_column_that_matches_nothing_names_the_nearest_field_and_the_mapping(
    tmp_path: Path, header: str, config: dict[str, Any], field: str, hint: str
) -> None:
    width = len(header.split(","))
    path = _csv(tmp_path / "d.csv", header + "\n" + ",".join(["x"] * width) + "\n")
    with pytest.raises(DatasetError) as refused:
        load_dataset(path, DatasetConfig.model_validate(config))
    assert refused.value.field == field and refused.value.line == 2
    assert hint in str(refused.value)


def test_a_label_file_column_that_matches_nothing_suggests_the_labels_mapping(
    tmp_path: Path,
) -> None:
    path = _csv(tmp_path / "l.csv", "id,winner\nx1,A\n")
    with pytest.raises(DatasetError, match=r"`labels: \{columns: \{query_id: id\}\}`"):
        load_human_labels(path)
    with pytest.raises(DatasetError, match=r"`labels: \{columns: \{preferred_arm: winner\}\}`"):
        load_human_labels(path, LabelsConfig(columns={"query_id": "id"}))
    with pytest.raises(DatasetError, match=r"did you mean 'preferred_arm'\?") as typo:
        load_human_labels(path, LabelsConfig(columns={"prefered_arm": "winner"}))
    assert typo.value.field == "labels.columns.prefered_arm"
