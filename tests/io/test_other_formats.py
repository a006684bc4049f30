"""JudgeBench outputs/, AlpacaEval annotations and FastChat judgments, from every level."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from verdict_trees import (
    alpaca_annotations,
    fastchat_bench,
    jb_pair,
    judgebench_repo,
    write_json,
    write_jsonl,
)

from jurybox.analysis.benchmarks import (
    alpacaeval_benchmark,
    benchmark_figures,
    judgebench_benchmark,
)
from jurybox.errors import DatasetError
from jurybox.io.verdicts import import_with_summary, load_imported
from jurybox.records import Item, JudgeRecord, Status


def _import(
    kind: str, source: Path, tmp_path: Path, **kwargs: Any
) -> tuple[list[JudgeRecord], list[Item]]:
    out = tmp_path / "out" / "imported.jsonl"
    import_with_summary(kind, source, out, **kwargs)
    return load_imported(out)


# --- JudgeBench ----------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["outputs", "file"])
def test_judgebench_outputs_import_as_a_folder_or_a_file(tmp_path: Path, level: str) -> None:
    outputs = judgebench_repo(tmp_path) / "outputs"
    source = outputs if level == "outputs" else next(outputs.glob("*.jsonl"))
    records, items = _import("judgebench", source, tmp_path, allow_unparsed=False)
    assert {r.judge_name for r in records} == {"arena_hard/o1-mini"}
    assert len(records) == 8 and len(items) == 4
    failed = [r for r in records if r.status != Status.OK]
    assert [(r.query_id, r.status) for r in failed] == [("p3", Status.PROVIDER_ERROR)]
    score = judgebench_benchmark(records, items).judges["arena_hard/o1-mini"]
    assert (score.score.count, score.score.n) == (2, 4)  # p1, p2 right; p3, p4 wrong
    assert score.by_source["mmlu-pro-law"].count == 0


@pytest.mark.parametrize("level", ["", "data"])
def test_judgebench_root_or_data_says_where_verdicts_live(tmp_path: Path, level: str) -> None:
    repo = judgebench_repo(tmp_path)
    with pytest.raises(DatasetError, match=r"verdicts live in the repository's outputs/ folder"):
        _import("judgebench", repo / level if level else repo, tmp_path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({**jb_pair("p1", "A>B", ["A>B"]), "judgments": []}, "non-empty list"),
        ({**jb_pair("p1", "A>B", ["A>B"]), "judgments": ["A>B"]}, r"judgment 0 is not an object"),
        ({**jb_pair("p1", "A>B", ["A>B"]), "judgments": "A>B"}, "non-empty list"),
        ({"question": "no id"}, "no 'pair_id'"),
    ],
)
def test_judgebench_malformed_lines_are_clean_errors(
    tmp_path: Path, line: dict[str, Any], message: str
) -> None:
    path = write_jsonl(tmp_path / "outputs" / "x.jsonl", [line])
    with pytest.raises(DatasetError, match=message) as caught:
        _import("judgebench", path, tmp_path)
    assert caught.value.path == str(path) and caught.value.line == 1


def test_judgebench_unknown_decisions_are_counted(tmp_path: Path) -> None:
    lines = [jb_pair(f"p{i}", "A>B", ["A>B", "B>A"]) for i in range(3)]
    lines.append(jb_pair("p9", "A>B", ["A>>B", "maybe"]))
    path = write_jsonl(tmp_path / "x.jsonl", lines)
    summary = import_with_summary("judgebench", path, tmp_path / "o.jsonl")
    assert summary.unreadable == {"'maybe'": 1}
    assert summary.describe() == "1 of 8 verdicts unreadable: 'maybe' ×1"


# --- AlpacaEval ----------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["file", "folder"])
def test_alpacaeval_annotations_import_and_give_the_win_rate(tmp_path: Path, level: str) -> None:
    path = alpaca_annotations(tmp_path / "annotations" / "annotations.json")
    records, items = _import("alpacaeval", path if level == "file" else path.parent, tmp_path)
    assert len(records) == 5 and len(items) == 4  # "Say hi." judged by two annotators
    assert [r.preferred_arm for r in records] == ["output_2", "output_1", "tie", "tie", "output_2"]
    assert items[0].authors == {"output_1": "text_davinci_003", "output_2": "my_model"}
    assert {r.positions_shown for r in records} == {True}
    rates = alpacaeval_benchmark(records, items).judges
    gpt4 = rates["alpaca_eval_gpt4"]["my_model vs text_davinci_003"]
    assert (gpt4.n_wins, gpt4.n_wins_base, gpt4.n_draws, gpt4.n_total) == (1, 1, 2, 4)
    assert gpt4.win_rate == pytest.approx(50.0)
    assert rates["human_1"]["my_model vs text_davinci_003"].win_rate == pytest.approx(100.0)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"instruction": "x"}, "expected a JSON list, got an object"),
        (["text"], r"entry 0: expected an object, got text"),
        ([{"output_1": "a", "output_2": "b", "preference": 1}], r"field 'instruction'"),
    ],
)
def test_alpacaeval_malformed_files_are_clean_errors(
    tmp_path: Path, content: Any, message: str
) -> None:
    path = write_json(tmp_path / "a.json", content)
    with pytest.raises(DatasetError, match=message):
        _import("alpacaeval", path, tmp_path)


def test_alpacaeval_unreadable_preferences_are_counted(tmp_path: Path) -> None:
    row = {"instruction": "q", "output_1": "a", "output_2": "b", "annotator": "x"}
    rows = [{**row, "preference": 2}] * 3 + [{**row, "preference": "3"}, {**row}]
    path = write_json(tmp_path / "a.json", rows)
    summary = import_with_summary("alpacaeval", path, tmp_path / "o.jsonl")
    assert summary.describe() == "2 of 5 verdicts unreadable: '3' ×1, missing ×1"


# --- FastChat ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["bench", "model_judgment"])
def test_fastchat_pair_and_single_judgments_import(tmp_path: Path, level: str) -> None:
    bench = fastchat_bench(tmp_path)
    source = bench if level == "bench" else bench / "model_judgment"
    records, items = _import("fastchat", source, tmp_path)
    pairs = [r for r in records if r.mode == "pairwise"]
    singles = [r for r in records if r.mode == "rubric"]
    assert len(pairs) == 4 and len(singles) == 3
    first = [r for r in pairs if r.judge_name == "gpt-4/pair-v2"]
    assert [r.presentation_order for r in first] == ["model_1_first", "model_2_first"]
    assert [r.preferred_arm for r in first] == ["model_1", "model_1"]
    assert [r.preference for r in first] == ["A", "B"]  # g2 showed model_2 first
    multi = [r for r in pairs if r.judge_name == "gpt-4/pair-v2-multi-turn"]
    assert [r.preferred_arm for r in multi] == ["tie", None]
    assert {r.judge_model for r in records} == {"gpt-4"}
    by_id = {i.id: i for i in items}
    pair_item = by_id["mt_bench/81/turn1/vicuna-13b vs llama-13b"]
    assert pair_item.question == "Plan a trip."
    assert pair_item.responses == {"model_1": "Go to Hawaii.", "model_2": "Stay home."}
    assert [(r.presentation_order, r.overall, r.repeat) for r in singles] == [
        ("vicuna-13b", {"vicuna-13b": 9.0}, 0),
        ("llama-13b", None, 0),
        ("llama-13b", {"llama-13b": 3.0}, 1),
    ]
    assert by_id["mt_bench/81/turn1"].responses["llama-13b"] == "Stay home."


def test_fastchat_single_file_and_its_counts(tmp_path: Path) -> None:
    single = fastchat_bench(tmp_path) / "model_judgment" / "gpt-4_single.jsonl"
    summary = import_with_summary("fastchat", single, tmp_path / "o.jsonl")
    assert summary.written == 3
    assert summary.describe() == "1 of 3 verdicts unreadable: '-1' ×1"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"model_1": "a", "model_2": "b", "g1_winner": "tie"}, "no 'question_id'"),
        ({"question_id": 1, "model_1": "a", "g1_winner": "tie"}, "no 'model_2'"),
        ({"question_id": 1, "winner": "a"}, "neither a pair judgment"),
        ({"question_id": 1, "model": "a", "score": 3, "turn": "x"}, "'turn' must be"),
    ],
)
def test_fastchat_malformed_lines_are_clean_errors(
    tmp_path: Path, line: dict[str, Any], message: str
) -> None:
    path = write_jsonl(tmp_path / "model_judgment" / "gpt-4_pair.jsonl", [line])
    with pytest.raises(DatasetError, match=message) as caught:
        _import("fastchat", tmp_path, tmp_path)
    assert caught.value.path == str(path)


def test_fastchat_folder_without_judgments_says_what_it_expects(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"model_judgment/<judge>_pair\.jsonl"):
        _import("fastchat", tmp_path, tmp_path)


# --- PandaLM -------------------------------------------------------------------------------


def _pandalm(tmp_path: Path, verdicts: Any) -> Path:
    item = {
        "idx": 0,
        "motivation_app": "chat",
        "cmp_key": "m1_m2",
        "instruction": "Say hi.",
        "input": "",
        "response1": "Hi.",
        "response2": "Hello.",
        "annotator1": 1,
        "annotator2": 1,
        "annotator3": 0,
    }
    write_json(tmp_path / "pandalm" / "testset-v1.json", [item, {**item, "idx": 1}])
    write_json(tmp_path / "pandalm" / "judge-testset-v1.json", verdicts)
    return tmp_path / "pandalm"


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        ({"idx": 0}, "expected a JSON list, got an object"),
        ([{"idx": 0, "reason": "x"}], r"entry 0: no '\*_result' field"),
        (["1"], r"entry 0: expected an object, got text"),
        ([{"judge_result": "1"}], r"field 'idx'.*entry 0: no 'idx'"),
    ],
)
def test_pandalm_malformed_judge_files_are_clean_errors(
    tmp_path: Path, verdicts: Any, message: str
) -> None:
    with pytest.raises(DatasetError, match=message):
        _import("pandalm", _pandalm(tmp_path, verdicts), tmp_path)


def test_pandalm_garbage_is_counted(tmp_path: Path) -> None:
    verdicts = [{"idx": 0, "judge_result": "Tie"}, {"idx": 1, "judge_result": "garbage"}]
    summary = import_with_summary("pandalm", _pandalm(tmp_path, verdicts), tmp_path / "o.jsonl")
    assert summary.describe() == "1 of 2 verdicts unreadable: 'garbage' ×1"


def test_benchmark_figures_has_one_key_per_benchmark_imported(tmp_path: Path) -> None:
    jb_records, jb_items = _import("judgebench", judgebench_repo(tmp_path) / "outputs", tmp_path)
    path = alpaca_annotations(tmp_path / "a.json")
    al_records, al_items = _import("alpacaeval", path, tmp_path)
    figures = benchmark_figures(jb_records + al_records, jb_items + al_items)
    assert set(figures.model_dump()) == {"judgebench", "alpacaeval"}
    assert figures.judgebench is not None and figures.alpacaeval is not None
    assert figures.judgebench.judges["arena_hard/o1-mini"].score.percent == pytest.approx(50.0)
    assert set(figures.alpacaeval.judges) == {"alpaca_eval_gpt4", "human_1"}
    assert benchmark_figures([], []).model_dump() == {}
