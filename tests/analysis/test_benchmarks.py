"""Benchmark conventions as numbers: each benchmark's own figures, reproduced by its own rules."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jurybox.analysis.benchmarks import (
    Count,
    alpacaeval_win_rate,
    judgebench_flip,
    judgebench_pair_correct,
    llmbar_benchmark,
    llmbar_figures,
    macro_scores,
    pandalm_benchmark,
)
from jurybox.io.verdicts import import_verdicts, load_imported
from shared_paths import require_shared

_COUNTED = ("correct_False", "correct_True", "correct_both", "equal")


# --- JudgeBench: utils/metrics.py's rule ---------------------------------------------------


@pytest.mark.parametrize(
    ("label", "decisions", "right"),
    [
        ("A>B", ["A>B", "A>B"], True),  # +1 +1
        ("A>B", ["A>B", "B>A"], False),  # +1 -1 = 0: inconsistent is wrong
        ("A>B", ["A>B", "A=B"], True),  # a tie in one order counts 0: +1
        ("A>B", ["A=B", "B>A"], False),  # 0 -1
        ("B>A", [None, "B>A"], True),  # a failed call (null judgment) in one order counts 0
        ("B>A", ["B>A", None], True),
        ("B>A", [None, "A>B"], False),  # 0 -1
        ("A>B", ["A=B", "A=B"], False),  # two ties: 0
        ("A>B", [None, None], False),
        ("A>B", ["A>B"], True),  # a single game (reward models)
        ("A>B", ["garbage", "A>B"], True),  # an unknown decision counts 0 like a tie
    ],
)
def test_judgebench_rule(label: str, decisions: list[str | None], right: bool) -> None:
    assert judgebench_pair_correct(label, decisions) is right


def test_judgebench_flip() -> None:
    assert [judgebench_flip(d) for d in ("A>B", "B>A", "A=B", None)] == ["B>A", "A>B", "A=B", None]


# --- LLMBar: statistics.json ----------------------------------------------------------------


def test_llmbar_figures_count_failures_as_the_benchmark_does() -> None:
    winners = [("output_1", "output_1"), (None, None), ("output_2", None), ("output_1", "output_2")]
    golds = ["output_1", "output_1", "output_2", "output_2"]
    figures = llmbar_figures(winners, golds)
    assert figures.correct_False == Count.of(2, 4)
    assert figures.correct_True == Count.of(2, 4)
    assert figures.correct_both == Count.of(1, 4)
    assert figures.equal == Count.of(2, 4)  # (None, None) is "equal" upstream
    assert figures.correct_average == pytest.approx(50.0)


def _published(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    counts: dict[str, Any] = {}
    for key in _COUNTED:
        match = re.match(r"(\d+) / (\d+)", data[key])
        assert match is not None
        counts[key] = (int(match[1]), int(match[2]))
    counts["correct_average"] = float(data["correct_average"].rstrip("%"))
    return counts


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("tree", "verdicts"), [("llmbar", "verdicts"), ("llmbar-upstream/Dataset", "evaluators")]
)
def test_shared_llmbar_reproduces_every_statistics_json(
    tmp_path: Path, tree: str, verdicts: str
) -> None:
    root = require_shared(f"data/{tree}")
    out = tmp_path / "imported.jsonl"
    import_verdicts("llmbar", root, out)
    records, items = load_imported(out)
    subsets = llmbar_benchmark(records, items).subsets
    expected = sorted(root.glob(f"**/{verdicts}/**/statistics.json"))
    checked = 0
    for path in expected:
        # <subset>/verdicts/<judge>/ or <subset>/evaluators/<judge>/<strategy>/
        flat = verdicts == "verdicts"
        subset_dir = path.parents[2] if flat else path.parents[3]
        judge = path.parent.name if flat else f"{path.parent.parent.name}/{path.parent.name}"
        subset = subset_dir.relative_to(root).as_posix()
        figures = subsets[subset][judge]
        published = _published(path)
        for key in _COUNTED:
            count = getattr(figures, key)
            assert (count.count, count.n) == published[key], (subset, judge, key)
        assert figures.correct_average == pytest.approx(published["correct_average"]), (
            subset,
            judge,
        )
        checked += 1
    assert checked == len(expected) and checked >= 12
    palm = subsets["MT-Bench" if verdicts == "verdicts" else "Processed/MT-Bench"]
    palm_judge = "PaLM2" if verdicts == "verdicts" else "PaLM2/Vanilla_NoRules"
    assert (palm[palm_judge].equal.count, palm[palm_judge].equal.n) == (147, 200)


# --- AlpacaEval and PandaLM ----------------------------------------------------------------


def test_alpacaeval_win_rate_counts_a_draw_as_half_and_leaves_failures_out() -> None:
    rate = alpacaeval_win_rate(["output_2", "output_2", "output_1", "tie", None])
    assert (rate.n_wins, rate.n_wins_base, rate.n_draws, rate.n_total) == (2, 1, 1, 4)
    assert rate.win_rate == pytest.approx(62.5)
    assert alpacaeval_win_rate([None]).win_rate is None


def test_macro_scores_by_hand() -> None:
    precision, recall, f1 = macro_scores(["1", "1", "2", "0"], ["1", "2", "2", None])
    # class 0: p 0, r 0; class 1: p 1, r .5; class 2: p .5, r 1
    assert precision == pytest.approx(0.5)
    assert recall == pytest.approx(0.5)
    assert f1 == pytest.approx((0 + 2 / 3 + 2 / 3) / 3)


@pytest.mark.shared_data
def test_shared_pandalm_reproduces_the_published_annotator_agreement(tmp_path: Path) -> None:
    out = tmp_path / "imported.jsonl"
    import_verdicts("pandalm", require_shared("data/pandalm"), out)
    records, items = load_imported(out)
    figures = pandalm_benchmark(records, items)
    kappas = {pair: round(k or 0, 2) for pair, k in figures.annotator_kappa.items()}
    assert kappas == {
        "annotator1-annotator2": 0.85,
        "annotator1-annotator3": 0.88,
        "annotator2-annotator3": 0.86,
    }
    assert figures.majority_counts == {"0": 105, "1": 422, "2": 472}
    assert set(figures.judges) == {"gpt-3.5-turbo", "pandalm-7b"}
    assert all(j.accuracy.n == 999 for j in figures.judges.values())


def test_pandalm_annotators_who_used_one_category_give_an_undefined_kappa_not_a_crash(
    tmp_path: Path,
) -> None:
    """A valid PandaLM import whose annotators all said "1" (issue 31 item 7): `analyze` used
    to stop on "kappa is undefined"; the report now says so for each pair."""
    from click.testing import CliRunner

    from jurybox.cli import main

    source = tmp_path / "pandalm"
    source.mkdir()
    items = [
        {
            "idx": i,
            "cmp_key": "m1_m2",
            "instruction": f"q{i}",
            "input": "",
            "response1": f"a{i}",
            "response2": f"b{i}",
            **{f"annotator{n}": 1 for n in (1, 2, 3)},
        }
        for i in range(12)
    ]
    verdicts = [{"idx": i, "gpt_result": ["1", "2", "Tie"][i % 3]} for i in range(12)]
    (source / "testset-v1.json").write_text(json.dumps(items), encoding="utf-8")
    (source / "gpt-testset-v1.json").write_text(json.dumps(verdicts), encoding="utf-8")
    run = tmp_path / "run" / "judgments.jsonl"
    assert (
        CliRunner().invoke(main, ["import", "pandalm", str(source), "--out", str(run)]).exit_code
        == 0
    )
    report = tmp_path / "report"
    result = CliRunner().invoke(main, ["analyze", str(run), "--out", str(report), "--no-plots"])
    assert result.exit_code == 0, result.output
    figures = json.loads((report / "analysis_report.json").read_text("utf-8"))["benchmarks"][
        "pandalm"
    ]
    assert figures["annotator_kappa"] == dict.fromkeys(
        ("annotator1-annotator2", "annotator1-annotator3", "annotator2-annotator3")
    )
    assert all(
        "both raters used only one category" in why
        for why in figures["annotator_kappa_undefined"].values()
    )
    assert len(figures["annotator_kappa_undefined"]) == 3
    assert "both raters used only one category" in (report / "summary_tables.md").read_text("utf-8")
