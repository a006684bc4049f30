"""``compare_runs`` on runs with planted differences: the paired figures find them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.analysis import build_frame
from jurybox.analysis.compare import CompareOptions, RunInput, compare_runs, pair_judges
from jurybox.records import Item, JudgeRecord, Status
from jurybox.reporting.render.compare import render_compare_html, render_compare_markdown

ARMS = ("control", "treatment")
ORDERS = {"control_first": ARMS, "treatment_first": ARMS[::-1]}


def _pairwise(judge: str, qid: str, order: str, winner: str) -> JudgeRecord:
    shown = ORDERS[order]
    return JudgeRecord(
        key=f"{qid}|{judge}|{order}|r0",
        run_id="run",
        query_id=qid,
        judge_name=judge,
        judge_model="m",
        judge_vendor="fake",
        mode="pairwise",
        presentation_order=order,
        positions={"A": shown[0], "B": shown[1]},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
        preference="A" if shown[0] == winner else "B",
        preferred_arm=winner,
    )


def _pairwise_run(judge: str, n_right: int, n_items: int = 40) -> list[JudgeRecord]:
    """Gold is control everywhere; the judge picks it on the first ``n_right`` items."""
    return [
        _pairwise(judge, f"q{i:02d}", order, "control" if i < n_right else "treatment")
        for i in range(n_items)
        for order in ORDERS
    ]


def _run(label: str, records: list[JudgeRecord], **frame_args: Any) -> RunInput:
    return RunInput(label, f"{label}.jsonl", build_frame(records, **frame_args), len(records))


GOLD = {f"q{i:02d}": {"preferred_arm": "control"} for i in range(40)}


def test_judges_pair_by_name_then_by_order() -> None:
    pairs, unpaired = pair_judges(["x", "y", "z"], ["y", "w"])
    assert [(p.judge_a, p.judge_b, p.matched_by) for p in pairs] == [
        ("y", "y", "name"),
        ("x", "w", "order"),
    ]
    assert unpaired == ["A:z"]


def test_planted_accuracy_gain_is_found_with_mcnemar_and_a_paired_interval() -> None:
    a = _run("A", _pairwise_run("judge_v1", 20), human=GOLD)
    b = _run("B", _pairwise_run("judge_v2", 32), human=GOLD)
    report = compare_runs([a, b], CompareOptions(n_bootstrap=200))
    (judge,) = report.comparisons[0].judges
    assert (judge.judge_a, judge.judge_b, judge.matched_by) == ("judge_v1", "judge_v2", "order")
    verdicts = judge.verdicts
    assert verdicts is not None and verdicts.accuracy is not None
    acc = verdicts.accuracy
    assert acc.n_units == 80
    assert (acc.accuracy_a.value, acc.accuracy_b.value) == (0.5, 0.8)
    assert acc.difference.value == pytest.approx(0.3)
    assert acc.difference.ci_low is not None and acc.difference.ci_high is not None
    assert 0 < acc.difference.ci_low < 0.3 < acc.difference.ci_high
    # 24 discordant units, all in B's favour: exact binomial p = 2 · 0.5^24
    assert (acc.mcnemar.b, acc.mcnemar.c) == (0, 24)
    assert acc.mcnemar.p_value == pytest.approx(2 * 0.5**24)
    assert acc.mcnemar.method is not None and acc.mcnemar.method.startswith("exact")
    assert verdicts.n_changed == 24
    assert [u.item_id for u in verdicts.changed[:2]] == ["q20", "q20"]
    assert verdicts.changed[0].gold == "control"
    # every item has the same winner in both orders in both runs: no position change to test
    assert verdicts.position is not None
    assert verdicts.position.difference.value == 0.0
    assert verdicts.position.mcnemar.value is None
    assert "no discordant pairs" in (verdicts.position.mcnemar.reason or "")
    text = json.dumps(report.model_dump(mode="json"), allow_nan=False)
    assert '"matched_by": "order"' in text


def test_many_discordant_units_use_the_asymptotic_mcnemar() -> None:
    a = _run("A", _pairwise_run("j", 5), human=GOLD)
    b = _run("B", _pairwise_run("j", 40), human=GOLD)
    acc = compare_runs([a, b]).comparisons[0].judges[0].verdicts.accuracy  # type: ignore[union-attr]
    assert acc is not None and acc.mcnemar.n_discordant == 70
    assert acc.mcnemar.method is not None and acc.mcnemar.method.startswith("asymptotic")
    assert acc.mcnemar.p_value == pytest.approx(sps.chi2.sf(70.0, 1))


def _criterion(qid: str, arm: str, verdict: str) -> JudgeRecord:
    return JudgeRecord(
        key=f"{qid}|judge|{arm}|r0|c:helpful",
        run_id="run",
        query_id=qid,
        judge_name="judge",
        judge_model="m",
        judge_vendor="fake",
        mode="criterion",
        presentation_order=arm,
        positions={"A": arm},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
        criterion="helpful",
        verdict=verdict,
    )


def test_criterion_verdicts_are_compared_per_arm_against_the_arm_label() -> None:
    """Human: control passes, treatment fails. A says Pass to everything; B gets treatment
    right on the first 10 items. Units are item × arm; there is no order to be consistent in."""
    human = {f"q{i:02d}": {"verdict": {"control": "Pass", "treatment": "Fail"}} for i in range(20)}
    a = [_criterion(f"q{i:02d}", arm, "Pass") for i in range(20) for arm in ARMS]
    b = [
        _criterion(f"q{i:02d}", arm, "Fail" if arm == "treatment" and i < 10 else "Pass")
        for i in range(20)
        for arm in ARMS
    ]
    report = compare_runs([_run("A", a, human=human), _run("B", b, human=human)])
    verdicts = report.comparisons[0].judges[0].verdicts
    assert verdicts is not None and verdicts.accuracy is not None
    assert verdicts.n_units == 40 and verdicts.n_changed == 10
    assert (verdicts.accuracy.accuracy_a.value, verdicts.accuracy.accuracy_b.value) == (0.5, 0.75)
    assert verdicts.position is None
    assert {unit.gold for unit in verdicts.changed} == {"Fail"}


# --- ADR-016: a rubric run whose dimensions judges agree on, a holistic run they do not -------

N_ITEMS = 40


def _items(rng: np.random.Generator) -> list[Item]:
    lengths = rng.integers(40, 1200, size=N_ITEMS)
    return [
        Item(f"i{i:02d}", f"question {i}", {"only": "x" * int(n)}) for i, n in enumerate(lengths)
    ]


def _scored(judge: str, item: Item, scores: dict[str, float]) -> JudgeRecord:
    overall = float(np.mean(list(scores.values())))
    return JudgeRecord(
        key=f"{item.id}|{judge}|only|r0",
        run_id="run",
        query_id=item.id,
        judge_name=judge,
        judge_model="m",
        judge_vendor="fake",
        mode="rubric",
        presentation_order="only",
        positions={"A": "only"},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
        scores={"only": scores},
        overall={"only": overall},
    )


def _study_runs() -> tuple[RunInput, RunInput]:
    rng = np.random.default_rng(16)
    items = _items(rng)
    quality = rng.normal(6, 1.5, size=N_ITEMS)
    lengths = np.array([len(item.responses["only"]) for item in items])
    concise = 10 - lengths / 150
    judges = ("j1", "j2", "j3")
    rubric = [
        _scored(
            judge,
            item,
            {
                "accuracy": float(quality[i] + rng.normal(0, 0.4)),
                "conciseness": float(concise[i] + rng.normal(0, 0.4)),
            },
        )
        for judge in judges
        for i, item in enumerate(items)
    ]
    holistic = [
        _scored(judge, item, {"overall": float(quality[i] + rng.normal(0, 2.5))})
        for judge in judges
        for i, item in enumerate(items)
    ]
    return _run("A", rubric, items=items), _run("B", holistic, items=items)


def test_adr016_study_finds_the_planted_differences() -> None:
    report = compare_runs(list(_study_runs()), CompareOptions(n_bootstrap=400, seed=3))
    study = report.comparisons[0].study
    assert study is not None, report.comparisons[0].study_skipped
    assert (study.rubric_run, study.holistic_run, study.holistic_dimension) == ("A", "B", "overall")
    by_dim = {row.dimension: row for row in study.dimensions}
    assert by_dim["accuracy"].lower_variance is True
    assert by_dim["conciseness"].lower_variance is True
    diff = study.ranking_stability_difference
    assert diff.value is not None and diff.ci_low is not None and diff.ci_low > 0
    rubric = next(s for s in report.studies if s.run == "A")
    assert rubric.conciseness_dimension == "conciseness"
    rho = rubric.conciseness_length
    assert rho is not None and rho.ci_high is not None and rho.ci_high < 0
    assert rubric.kendall_w.kendall_w is not None and rubric.kendall_w.kendall_w > 0.5
    holistic = next(s for s in report.studies if s.run == "B")
    alphas = {row.dimension: row.alpha.value for row in holistic.reliability}
    assert alphas["total"] is not None and alphas["total"] < by_dim["accuracy"].alpha  # type: ignore[operator]


def test_compare_pages_escape_user_text_and_load_nothing(tmp_path: Path) -> None:
    a = _run("A", _pairwise_run("<script>alert(1)</script>", 20), human=GOLD)
    b = _run("B", _pairwise_run("<script>alert(1)</script>", 30), human=GOLD)
    b = dataclasses.replace(b, report=str(tmp_path / "runs" / "b x" / "report.html"))
    report = compare_runs([a, b], CompareOptions(n_bootstrap=200))
    html = render_compare_html(report, tmp_path / "out")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "default-src 'none'" in html
    # B's items link to its own report, from where the page is written; A has none to link
    assert 'href="../runs/b%20x/report.html#items?item=q20">q20</a>' in html
    assert "A: no report.html found in the run folder" in html
    assert "`jurybox analyze RUN` (into RUN/report)" in html  # analyze's default folder
    markdown = render_compare_markdown(report)
    assert "<script>" not in markdown
    assert "Verdict accuracy" in markdown
