"""Rating-derived LLMBar verdicts: each output scored alone, so no position was ever shown."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from jurybox.analysis import analyze_records, import_verdicts, load_imported
from jurybox.records import JudgeRecord, Status
from jurybox.reporting import render_markdown

from .helpers import analyze


def _folder(tmp_path: Path, last: dict[str, object], judge: str = "GPT-4") -> Path:
    folder = tmp_path / "Natural"
    entry = {"input": "q", "output_1": "short", "output_2": "a longer answer", "label": 1}
    (folder / "verdicts" / judge).mkdir(parents=True)
    (folder / "dataset.json").write_text(json.dumps([entry]), encoding="utf-8")
    result = {**entry, "results": [last]}
    (folder / "verdicts" / judge / "result.json").write_text(json.dumps([result]))
    return folder


def _import(tmp_path: Path, last: dict[str, object]) -> list[JudgeRecord]:
    out = tmp_path / "j.jsonl"
    import_verdicts("llmbar", _folder(tmp_path, last), out)
    records, _ = load_imported(out)
    return sorted(records, key=lambda r: r.presentation_order)


def test_a_score_tie_is_imported_as_a_tie_without_positions(tmp_path: Path) -> None:
    last = {
        "score_1": ["7", "stop"],
        "score_2": ["7", "stop"],
        "swap = False": {"winner": "1"},  # upstream's fixed tie-break, not the judge's choice
        "swap = True": {"winner": "1"},
    }
    records = _import(tmp_path, last)
    assert [r.preferred_arm for r in records] == ["tie", "tie"]
    assert [r.preference for r in records] == ["tie", "tie"]
    assert not any(r.positions_shown for r in records)


def test_a_rating_with_a_winner_keeps_it_but_is_marked(tmp_path: Path) -> None:
    last = {
        "score_1": ["8", "stop"],
        "score_2": ["3", "stop"],
        "swap = False": {"winner": "1"},
        "swap = True": {"winner": "1"},
    }
    records = _import(tmp_path, last)
    assert [r.preferred_arm for r in records] == ["output_1", "output_1"]
    assert not any(r.positions_shown for r in records)


def test_side_by_side_verdicts_say_positions_were_shown(tmp_path: Path) -> None:
    last = {"swap = False": {"winner": "2"}, "swap = True": {"winner": "1"}}
    records = _import(tmp_path, last)
    assert [r.preferred_arm for r in records] == ["output_2", "output_1"]
    assert all(r.positions_shown for r in records)
    assert JudgeRecord.from_dict({**records[0].to_dict()}).positions_shown


def test_a_call_without_a_score_is_a_failure_with_its_text(tmp_path: Path) -> None:
    last = {
        "score_1": ["I cannot rate this response.", "stop"],
        "score_2": ["6", "stop"],
        "swap = False": {"winner": "2"},  # upstream's fallback, not the judge's verdict
        "swap = True": {"winner": "2"},
    }
    records = _import(tmp_path, last)
    assert [r.status for r in records] == [Status.UNPARSED, Status.UNPARSED]
    assert [r.preferred_arm for r in records] == [None, None]
    assert records[0].raw_response == "score_1: I cannot rate this response.\nscore_2: 6"


def test_a_score_cut_at_the_length_limit_is_truncated(tmp_path: Path) -> None:
    last = {
        "score_1": ["8", "stop"],
        "score_2": ["Let me think about", "length"],
        "swap = False": {"winner": "1"},
        "swap = True": {"winner": "1"},
    }
    records = _import(tmp_path, last)
    assert [r.status for r in records] == [Status.TRUNCATED, Status.TRUNCATED]


def test_scores_keep_their_text_as_the_raw_answer(tmp_path: Path) -> None:
    last = {
        "score_1": ["8", "stop"],
        "score_2": ["3", "stop"],
        "swap = False": {"winner": "1"},
        "swap = True": {"winner": "1"},
    }
    assert _import(tmp_path, last)[0].raw_response == "score_1: 8\nscore_2: 3"


@pytest.mark.shared_data
def test_ties_are_shown_under_both_conventions_beside_llmbars_figure(tmp_path: Path) -> None:
    from shared_paths import require_shared

    root = require_shared("data/llmbar-upstream")
    strategy = root / "Dataset/LLMBar/Natural/evaluators/ChatGPT/Rating"
    out = tmp_path / "j.jsonl"
    import_verdicts("llmbar", strategy, out)
    records, items = load_imported(out)
    report = analyze_records(records, items=items)
    accuracy = report.model_dump(mode="json")["accuracy_vs_gold"]
    ties = accuracy["judges"]["ChatGPT/Rating"]["ties"]
    published = json.loads((strategy / "statistics.json").read_text(encoding="utf-8"))
    # 47 of 100 items have equal scores: a tie in both orders. LLMBar's own 68.5 % gives each
    # such tie to the output shown second, right in one order of two: half credit.
    assert ties["ties"] == 94 and ties["n_total"] == 200
    assert 100 * ties["ties_half"] == pytest.approx(float(published["correct_average"][:-1]))
    assert ties["ties_wrong"] == pytest.approx(ties["ties_half"] - 0.47 / 2)
    assert "counts half" in accuracy["ties_note"]
    text = " ".join(render_markdown(report).split())
    assert "| ChatGPT/Rating | 94/200 | 0.450 | 0.685 |" in text
    assert "A tie counts half in a benchmark's own figure" in text


def test_benchmark_arms_get_no_treatment_effect(tmp_path: Path) -> None:
    last = {"swap = False": {"winner": "2"}, "swap = True": {"winner": "2"}}
    out = tmp_path / "j.jsonl"
    import_verdicts("llmbar", _folder(tmp_path, last), out)
    records, items = load_imported(out)
    assert items[0].metadata["arms_are_treatments"] is False
    report = analyze(records, items=items)
    assert report["effects"]["status"] == "skipped"
    assert "not a treatment and a control" in report["effects"]["reason"]
    assert report["summary"].get("treatment_arm") is None
    # The same verdicts on arms of an experiment: the win rate is computed.
    plain = [dataclasses.replace(i, metadata={}) for i in items]
    assert analyze(records, items=plain)["effects"]["status"] == "computed"
