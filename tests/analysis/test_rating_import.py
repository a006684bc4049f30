"""Rating-derived LLMBar verdicts: each output scored alone, so no position was ever shown."""

from __future__ import annotations

import json
from pathlib import Path

from jurybox.analysis import import_verdicts, load_imported
from jurybox.records import JudgeRecord


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
