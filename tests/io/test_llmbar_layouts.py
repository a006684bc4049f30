"""LLMBar's published tree imports from every level; every malformed entry is a clean error."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from verdict_trees import ROWS, llmbar_tree, vanilla, write_json

from jurybox.analysis.benchmarks import llmbar_benchmark
from jurybox.errors import DatasetError
from jurybox.io.verdicts import import_with_summary, load_imported
from jurybox.records import Item, JudgeRecord, Status

NATURAL = "LLMBar/Natural"
MT_BENCH = "Processed/MT-Bench"


def _import(source: Path, tmp_path: Path, **kwargs: Any) -> tuple[list[JudgeRecord], list[Item]]:
    out = tmp_path / "out" / "imported.jsonl"
    import_with_summary("llmbar", source, out, **kwargs)
    return load_imported(out)


@pytest.mark.parametrize(
    ("level", "judges"),
    [
        ("", {"GPT-4/Vanilla", "GPT-4/Rating", "PaLM2/Vanilla_NoRules"}),
        ("LLMBar", {"GPT-4/Vanilla", "GPT-4/Rating"}),
        ("LLMBar/Natural", {"GPT-4/Vanilla", "GPT-4/Rating"}),
        ("LLMBar/Natural/evaluators", {"GPT-4/Vanilla", "GPT-4/Rating"}),
        ("LLMBar/Natural/evaluators/GPT-4", {"GPT-4/Vanilla", "GPT-4/Rating"}),
        ("LLMBar/Natural/evaluators/GPT-4/Rating", {"GPT-4/Rating"}),
        ("LLMBar/Natural/evaluators/GPT-4/Rating/result.json", {"GPT-4/Rating"}),
        ("Processed", {"PaLM2/Vanilla_NoRules"}),
    ],
)
def test_every_level_of_the_published_tree_imports(
    tmp_path: Path, level: str, judges: set[str]
) -> None:
    dataset = llmbar_tree(tmp_path)
    records, items = _import(dataset / level if level else dataset, tmp_path)
    assert {r.judge_name for r in records} == judges
    assert len(records) == 2 * len(ROWS) * len(judges)
    # Ids are named from Dataset/ at every level, so two imports of one tree agree.
    subsets = {NATURAL} if "PaLM2/Vanilla_NoRules" not in judges else {MT_BENCH}
    if len(judges) == 3:
        subsets = {NATURAL, MT_BENCH}
    assert {i.metadata["subset"] for i in items} == subsets
    assert {i.id for i in items} == {f"{s}/{n}" for s in subsets for n in range(len(ROWS))}
    assert {r.query_id for r in records} <= {i.id for i in items}


def test_a_whole_tree_keeps_subsets_apart_and_ids_unique(tmp_path: Path) -> None:
    records, items = _import(llmbar_tree(tmp_path), tmp_path)
    assert len({i.id for i in items}) == len(items) == 2 * len(ROWS)
    assert len({r.key for r in records}) == len(records)
    assert {i.metadata["category"] for i in items} == {NATURAL, MT_BENCH}
    assert {r.run_id for r in records} == {f"import-llmbar-{NATURAL}", f"import-llmbar-{MT_BENCH}"}


def test_rating_strategy_is_not_shown_side_by_side_and_a_score_tie_is_a_tie(
    tmp_path: Path,
) -> None:
    records, _ = _import(llmbar_tree(tmp_path) / "LLMBar", tmp_path)
    rating = [r for r in records if r.judge_name == "GPT-4/Rating"]
    vanilla_records = [r for r in records if r.judge_name == "GPT-4/Vanilla"]
    assert not any(r.positions_shown for r in rating)
    assert all(r.positions_shown for r in vanilla_records)
    tied = {r.preferred_arm for r in rating if r.query_id == f"{NATURAL}/1"}
    assert tied == {"tie"}


def test_the_flat_layout_still_imports(tmp_path: Path) -> None:
    folder = tmp_path / "llmbar" / "Natural"
    write_json(folder / "dataset.json", ROWS)
    write_json(folder / "verdicts" / "GPT-4" / "result.json", vanilla([("1", "2")] * 3))
    for source in (tmp_path / "llmbar", folder, folder / "verdicts" / "GPT-4"):
        records, items = _import(source, tmp_path)
        assert {r.judge_name for r in records} == {"GPT-4"}
        assert [i.id for i in items] == ["Natural/0", "Natural/1", "Natural/2"]


def test_nfd_text_in_result_json_matches_nfc_items(tmp_path: Path) -> None:
    rows = [{"input": "Café?", "output_1": "Crème", "output_2": "Brûlée", "label": 1}]
    folder = tmp_path / "Natural"
    write_json(folder / "dataset.json", rows)
    nfd = {
        k: unicodedata.normalize("NFD", v) if isinstance(v, str) else v for k, v in rows[0].items()
    }
    entry = {**nfd, "results": [{"swap = False": {"winner": "1"}, "swap = True": {"winner": "1"}}]}
    assert entry["input"] != rows[0]["input"]  # the bytes differ, the text does not
    write_json(folder / "verdicts" / "GPT-4" / "result.json", [entry])
    records, items = _import(folder, tmp_path)
    assert [r.preferred_arm for r in records] == ["output_1", "output_1"]
    assert items[0].question == "Café?"


def _one_entry_tree(tmp_path: Path, entry: Any) -> Path:
    folder = tmp_path / "Natural"
    write_json(folder / "dataset.json", ROWS[:1])
    write_json(folder / "verdicts" / "GPT-4" / "result.json", [entry])
    return folder


_LAST = {"swap = False": {"winner": "1"}, "swap = True": {"winner": "2"}}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({**ROWS[0], "results": []}, r"entry 0: 'results' must be a non-empty list"),
        ({**ROWS[0], "results": None}, r"entry 0: 'results' must be a non-empty list"),
        ({**ROWS[0]}, r"field 'results'.*entry 0: no 'results'"),
        ({**ROWS[0], "results": ["text"]}, r"field 'results'.*expected an object, got text"),
        (
            {**ROWS[0], "results": [{**_LAST, "swap = False": "1"}]},
            r"field 'swap = False'.*got text",
        ),
        ({**ROWS[0], "results": [{"swap = True": {"winner": "1"}}]}, r"no 'swap = False'"),
        ({**ROWS[0], "input": "another question", "results": [_LAST]}, "matches no item"),
        ("a string", r"result.json:1: entry 0: expected an object, got text"),
    ],
)
def test_each_malformed_entry_names_file_entry_and_field(
    tmp_path: Path, entry: Any, message: str
) -> None:
    folder = _one_entry_tree(tmp_path, entry)
    with pytest.raises(DatasetError, match=message) as caught:
        _import(folder, tmp_path)
    assert caught.value.path is not None and caught.value.path.endswith("result.json")
    assert not (tmp_path / "out" / "imported.jsonl").exists()  # all or nothing


@pytest.mark.parametrize("content", ['{"not": "a list"}', "[1, 2", ""])
def test_a_result_file_that_is_not_a_list_is_a_clean_error(tmp_path: Path, content: str) -> None:
    folder = _one_entry_tree(tmp_path, {**ROWS[0], "results": [_LAST]})
    (folder / "verdicts" / "GPT-4" / "result.json").write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=r"result\.json"):
        _import(folder, tmp_path)


def test_unreadable_winners_are_counted_and_a_mostly_unreadable_import_is_refused(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "Natural"
    write_json(folder / "dataset.json", ROWS)
    winners = [("tie", "3"), ("A", "tie"), ("1", None)]
    entries = vanilla(winners)
    del entries[2]["results"][0]["swap = True"]["winner"]
    write_json(folder / "verdicts" / "GPT-4" / "result.json", entries)
    out = tmp_path / "o.jsonl"
    with pytest.raises(
        DatasetError, match=r"5 of 6 verdicts unreadable: 'tie' ×2, .*--allow-unparsed"
    ):
        import_with_summary("llmbar", folder, out)
    assert not out.exists()
    summary = import_with_summary("llmbar", folder, out, allow_unparsed=True)
    assert summary.unreadable == {"'tie'": 2, "'3'": 1, "'A'": 1, "missing": 1}
    assert summary.describe() == "5 of 6 verdicts unreadable: 'tie' ×2, '3' ×1, 'A' ×1, missing ×1"
    records, _ = load_imported(out)
    assert sum(r.status == Status.UNPARSED for r in records) == 5


def test_benchmark_figures_of_the_miniature_tree(tmp_path: Path) -> None:
    records, items = _import(llmbar_tree(tmp_path), tmp_path)
    figures = llmbar_benchmark(records, items).subsets
    vanilla_fig = figures[NATURAL]["GPT-4/Vanilla"]
    # winners (1,1) (2,1) (None,None) against labels 1, 2, 1
    assert (vanilla_fig.correct_False.count, vanilla_fig.correct_True.count) == (2, 1)
    assert vanilla_fig.correct_both.count == 1
    assert vanilla_fig.equal.count == 2  # two failed verdicts count as equal, as upstream
    assert vanilla_fig.correct_average == pytest.approx(50.0)
    rating_fig = figures[NATURAL]["GPT-4/Rating"]
    # the 6-6 tie went to the output shown second: 2 then 1, as upstream stored it
    assert (rating_fig.correct_False.count, rating_fig.correct_True.count) == (3, 2)
    assert rating_fig.equal.count == 2
    palm = figures[MT_BENCH]["PaLM2/Vanilla_NoRules"]
    assert (palm.correct_False.count, palm.correct_True.count, palm.equal.count) == (3, 2, 2)
    assert json.loads(llmbar_benchmark(records, items).model_dump_json())["subsets"][MT_BENCH]
