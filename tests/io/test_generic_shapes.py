"""``import generic``: pairwise, rubric scores and Pass/Fail labels; documented --map keys; CLI."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from verdict_trees import llmbar_tree, write_jsonl

from jurybox.cli import main
from jurybox.errors import DatasetError
from jurybox.io.verdicts import import_with_summary, load_imported
from jurybox.io.verdicts.generic import MAP_KEYS
from jurybox.records import Status


def _csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_binary_labels_in_every_spelling_become_pass_fail_records(tmp_path: Path) -> None:
    labels = ["yes", "No", "TRUE", "false", "1", "0", "pass", "Fail"]
    rows = [
        {"doc": f"d{i}", "rater": "qags-gpt", "answer": v, "human": "yes", "summary": "text"}
        for i, v in enumerate(labels)
    ]
    source = _csv(tmp_path / "qags.csv", rows)
    mapping = {"query_id": "doc", "judge": "rater", "label": "answer", "gold": "human"}
    mapping["response"] = "summary"
    summary = import_with_summary("generic", source, tmp_path / "o.jsonl", mapping)
    assert summary.unreadable == {}
    records, items = load_imported(tmp_path / "o.jsonl")
    assert [r.verdict for r in records] == ["Pass", "Fail"] * 4
    assert {(r.mode, r.criterion, r.presentation_order) for r in records} == {
        ("criterion", "label", "response")
    }
    assert items[0].human == {"verdict": {"response": "Pass"}}
    assert items[0].responses == {"response": "text"}


def test_a_generic_import_that_reads_nothing_is_refused(tmp_path: Path) -> None:
    rows = [{"doc": f"d{i}", "rater": "x", "answer": "maybe"} for i in range(4)]
    source = _csv(tmp_path / "v.csv", rows)
    mapping = {"query_id": "doc", "judge": "rater", "label": "answer"}
    with pytest.raises(DatasetError, match=r"4 of 4 verdicts unreadable: 'maybe' ×4"):
        import_with_summary("generic", source, tmp_path / "o.jsonl", mapping)
    summary = import_with_summary(
        "generic", source, tmp_path / "o.jsonl", mapping, allow_unparsed=True
    )
    assert summary.written == 4


def test_rubric_scores_become_overall_scores_per_response(tmp_path: Path) -> None:
    rows = [
        {"id": "q1", "judge": "j", "arm": "base", "score": 7, "gold": 8},
        {"id": "q1", "judge": "j", "arm": "tuned", "score": "9.5", "gold": 9},
        {"id": "q2", "judge": "j", "arm": "base", "score": "n/a"},
    ]
    source = write_jsonl(tmp_path / "scores.jsonl", rows)
    mapping = {"query_id": "id", "judge": "judge", "score": "score", "arm": "arm", "gold": "gold"}
    summary = import_with_summary("generic", source, tmp_path / "o.jsonl", mapping)
    assert summary.describe() == "1 of 3 verdicts unreadable: 'n/a' ×1"
    records, items = load_imported(tmp_path / "o.jsonl")
    assert [r.overall for r in records] == [{"base": 7.0}, {"tuned": 9.5}, None]
    assert [r.mode for r in records] == ["rubric"] * 3
    assert records[2].status == Status.UNPARSED
    assert items[0].human == {"overall": {"base": 8.0, "tuned": 9.0}}


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"query_id": "q", "judge": "j", "winner": "w"}, r"unknown --map key\(s\) \['winner'\]"),
        ({"query_id": "q", "judge": "j"}, "exactly one verdict key"),
        ({"query_id": "q", "judge": "j", "score": "s", "label": "l"}, "exactly one verdict key"),
    ],
)
def test_mapping_errors_list_the_known_keys(
    tmp_path: Path, mapping: dict[str, str], message: str
) -> None:
    source = write_jsonl(tmp_path / "v.jsonl", [{"q": "1", "j": "x", "s": 1}])
    with pytest.raises(DatasetError, match=message) as caught:
        import_with_summary("generic", source, tmp_path / "o.jsonl", mapping)
    if "unknown" in message:
        assert all(key in str(caught.value) for key in MAP_KEYS)


def test_cli_help_lists_every_map_key() -> None:
    result = CliRunner().invoke(main, ["import", "generic", "--help"])
    assert result.exit_code == 0
    for key in MAP_KEYS:
        assert f"  {key} " in result.output


def test_cli_prints_unreadable_values_and_refuses_with_exit_2(tmp_path: Path) -> None:
    rows = [{"q": str(i), "j": "x", "p": v} for i, v in enumerate(["A", "B", "tie", "3", "3"])]
    source = write_jsonl(tmp_path / "v.jsonl", rows)
    args = ["import", "generic", str(source), "--out", str(tmp_path / "o.jsonl")]
    args += ["--map", "query_id=q", "--map", "judge=j", "--map", "preferred=p"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "wrote 5 records" in result.output
    assert "2 of 5 verdicts unreadable: '3' ×2" in result.output
    refused = CliRunner().invoke(main, [*args[:-1], "preferred=j"])
    assert refused.exit_code == 2
    assert "--allow-unparsed" in refused.output and "Traceback" not in refused.output


@pytest.mark.parametrize(
    "level", ["Dataset", "Dataset/LLMBar/Natural/evaluators", "Dataset/Processed/MT-Bench"]
)
def test_cli_imports_llmbar_from_any_level(tmp_path: Path, level: str) -> None:
    llmbar_tree(tmp_path)
    out = tmp_path / "o.jsonl"
    result = CliRunner().invoke(
        main, ["import", "llmbar", str(tmp_path / level), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert out.exists() and "wrote" in result.output


def test_cli_crash_cases_exit_2_with_a_message(tmp_path: Path) -> None:
    folder = tmp_path / "Natural"
    (folder / "verdicts" / "GPT-4").mkdir(parents=True)
    (folder / "dataset.json").write_text(
        '[{"input": "q", "output_1": "a", "output_2": "b", "label": 1}]'
    )
    result_json = folder / "verdicts" / "GPT-4" / "result.json"
    result_json.write_text('[{"input": "q", "output_1": "a", "output_2": "b", "results": []}]')
    result = CliRunner().invoke(
        main, ["import", "llmbar", str(folder), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "entry 0: 'results' must be a non-empty list" in result.output
    assert "Traceback" not in result.output
