"""Importers: JudgeBench and generic tables (LLMBar and PandaLM run on ../shared elsewhere)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from jurybox.analysis import (
    companion_items_path,
    import_verdicts,
    load_imported,
)
from jurybox.errors import DatasetError
from jurybox.records import Status

from .helpers import analyze, assert_valid_report


def _judgment(decision: str | None) -> dict[str, Any]:
    return {
        "judgment": {"judge_model": "gpt-4o", "response": f"[[{decision}]]"},
        "decision": decision,
    }


def _jb_pair(pid: str, label: str, judgments: list[Any]) -> dict[str, Any]:
    return {
        "pair_id": pid,
        "original_id": 1,
        "source": "mmlu-pro-math",
        "question": "Q?",
        "response_model": "claude-3",
        "response_A": "short",
        "response_B": "much longer",
        "label": label,
        "judge_name": "arena_hard",
        "judgments": judgments,
    }


@pytest.fixture
def judgebench_file(tmp_path: Path) -> Path:
    pairs = [
        _jb_pair("p1", "A>B", [_judgment("A>B"), _judgment("B>A")]),  # consistent, right
        _jb_pair("p2", "B>A", [_judgment("A>B"), _judgment("A>B")]),  # flips with the order
        _jb_pair("p3", "A>B", [None, _judgment("A=B")]),  # failed call, then a tie
        _jb_pair("p4", "B>A", [_judgment(None)]),  # single game, unparsed
    ]
    path = tmp_path / "dataset=judgebench,judge_name=arena_hard,judge_model=gpt-4o.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in pairs), encoding="utf-8")
    return path


def test_judgebench_import_maps_swapped_decisions_back(
    judgebench_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out" / "judgments.jsonl"
    assert import_verdicts("judgebench", judgebench_file, out) == 7
    records, items = load_imported(out)
    assert companion_items_path(out).name == "judgments.items.jsonl"
    by_key = {(r.query_id, r.presentation_order): r for r in records}
    assert by_key[("p1", "response_B_first")].preferred_arm == "response_A"
    assert by_key[("p1", "response_B_first")].preference == "B"  # as shown
    assert by_key[("p2", "response_B_first")].preferred_arm == "response_B"
    assert by_key[("p3", "response_A_first")].status == Status.PROVIDER_ERROR
    assert by_key[("p3", "response_B_first")].preferred_arm == "tie"
    assert by_key[("p4", "response_A_first")].status == Status.UNPARSED
    assert records[0].judge_name == "arena_hard/gpt-4o" and records[0].judge_vendor == "openai"
    assert {i.id: i.human["preferred_arm"] for i in items} == {
        "p1": "response_A",
        "p2": "response_B",
        "p3": "response_A",
        "p4": "response_B",
    }
    report = analyze(records, items=items)
    assert_valid_report(report)
    judge = report["accuracy_vs_gold"]["judges"]["arena_hard/gpt-4o"]
    assert judge["orders"]["response_A_first"]["correct"] == 1  # p1 only
    assert judge["orders"]["response_A_first"]["n_total"] == 4
    assert judge["consolidated"]["correct"] == 1  # p1; p2 flipped = tie; p3 tie
    swap = report["bias"]["position"]["judges"]["arena_hard/gpt-4o"]["swap_consistency"]
    assert (swap["consistent"], swap["n"], swap["one_failed"]) == (1, 2, 1)
    assert report["summary"]["excluded"]["by_status"] == {"provider_error": 1, "unparsed": 1}


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_generic_csv_with_arm_numbering(tmp_path: Path) -> None:
    rows = [
        {"qid": "a", "model": "j1", "pick": "A", "swapped": "0", "truth": "A", "prompt": "x"},
        {"qid": "a", "model": "j1", "pick": "A", "swapped": "1", "truth": "A", "prompt": "x"},
        {"qid": "b", "model": "j1", "pick": "tie", "swapped": "0", "truth": "B", "prompt": "y"},
        {"qid": "b", "model": "j1", "pick": "", "swapped": "1", "truth": "B", "prompt": "y"},
    ]
    source = tmp_path / "verdicts.csv"
    _write_csv(source, rows)
    mapping = {
        "query_id": "qid",
        "judge": "model",
        "preferred": "pick",
        "swap": "swapped",
        "gold": "truth",
        "question": "prompt",
        "arm_a": "base",
        "arm_b": "tuned",
    }
    out = tmp_path / "j.jsonl"
    assert import_verdicts("generic", source, out, mapping) == 4
    records, items = load_imported(out)
    assert [r.preferred_arm for r in records] == ["base", "base", "tie", None]
    assert [r.preference for r in records] == ["A", "B", "tie", None]  # swapped: base shown second
    assert records[3].status == Status.UNPARSED
    assert {i.id: i.human["preferred_arm"] for i in items} == {"a": "base", "b": "tuned"}
    report = analyze(records, items=items)
    assert_valid_report(report)
    assert report["accuracy_vs_gold"]["judges"]["j1"]["pooled"]["correct"] == 2


def test_generic_jsonl_with_positional_preferences_and_repeats(tmp_path: Path) -> None:
    rows = [
        {"id": "q", "judge": "j", "winner": "A", "order": "BA"},
        {"id": "q", "judge": "j", "winner": "A", "order": "BA"},
    ]
    source = tmp_path / "verdicts.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    mapping = {
        "query_id": "id",
        "judge": "judge",
        "preferred": "winner",
        "order": "order",
        "preferred_is": "position",
    }
    import_verdicts("generic", source, tmp_path / "o.jsonl", mapping)
    records, _ = load_imported(tmp_path / "o.jsonl")
    assert [r.preferred_arm for r in records] == ["response_b", "response_b"]
    assert [r.repeat for r in records] == [0, 1]
    assert len({r.key for r in records}) == 2


@pytest.mark.parametrize(
    ("kind", "mapping", "message"),
    [
        ("nope", None, "unknown import kind"),
        ("generic", {"query_id": "q"}, "needs 'judge'"),
        ("generic", {"query_id": "q", "judge": "j", "preferred": "p", "colour": "c"}, "unknown"),
        ("judgebench", {"query_id": "q"}, "takes no column mapping"),
    ],
)
def test_bad_requests_raise_dataset_errors(
    tmp_path: Path, kind: str, mapping: dict[str, str] | None, message: str
) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text('{"q": "1"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        import_verdicts(kind, source, tmp_path / "o.jsonl", mapping)


def test_missing_columns_and_files_name_the_place(tmp_path: Path) -> None:
    source = tmp_path / "v.jsonl"
    source.write_text('{"q": "1", "j": "x"}\n', encoding="utf-8")
    mapping = {"query_id": "q", "judge": "j", "preferred": "p"}
    with pytest.raises(DatasetError, match=r"v.jsonl:1.*field 'preferred'"):
        import_verdicts("generic", source, tmp_path / "o.jsonl", mapping)
    with pytest.raises(DatasetError, match="not found"):
        import_verdicts("llmbar", tmp_path / "missing", tmp_path / "o.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"no dataset\.json"):
        import_verdicts("llmbar", tmp_path / "empty", tmp_path / "o.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair_id": "x", "judgments": [null]}\nnot json\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl:2"):
        import_verdicts("judgebench", bad, tmp_path / "o.jsonl")
