"""Issue 18's estimators in the report: corrected win rate, PPI++ mean, Friedman by author, arm
indicators in the verbosity model, the all-ties length-controlled rate, and a swapped retest
through ``jurybox analyze``'s use case."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jurybox import stats
from jurybox.analysis import build_frame
from jurybox.analysis.model import Report
from jurybox.analysis.pairs import consolidated
from jurybox.app import analyze_to_dir
from jurybox.io.judgments import record_json
from jurybox.records import Item, JudgeRecord, Status
from jurybox.reporting import render_markdown

from .helpers import analyze, assert_valid_report, get
from .synth import DIMS, STAMP, JudgeSpec, World, make_world, pairwise_records, rubric_records


def _true_winner(world: World, qid: str) -> str:
    totals = {a: sum(world.quality[(qid, a, d)] for d in DIMS) for a in ("control", "treatment")}
    return max(totals, key=lambda a: totals[a])


def _gold_on_first(world: World, n_labelled: int) -> list[Item]:
    return [
        dataclasses.replace(item, human={"preferred_arm": _true_winner(world, item.id)})
        if index < n_labelled
        else item
        for index, item in enumerate(world.items)
    ]


def test_corrected_win_rate_per_judge_from_the_labelled_pairs() -> None:
    rng = np.random.default_rng(31)
    world = make_world(240, rng, effect={"accuracy": 2.0})
    items = _gold_on_first(world, 90)
    judges = {"fair": JudgeSpec(), "lefty": JudgeSpec(first_bias=0.35)}
    records = pairwise_records(world, judges, rng)
    report = analyze(records, items=items)
    assert_valid_report(report)
    prefs = get(report, "effects.preferences")
    unlabelled = [_true_winner(world, item.id) for item in world.items[90:]]
    truth = unlabelled.count("treatment") / len(unlabelled)
    for judge in judges:
        corrected = prefs["corrected"][judge]
        assert corrected["n_labelled"] == 90 and corrected["n_unlabelled"] == 150
        # the gold has no tie, the judges' flipped verdicts are ties: true A/B x verdict A/B/tie
        assert corrected["classes"] == ["treatment", "control"]
        assert len(corrected["confusion"][0]) == 3 and "least squares" in corrected["method"]
        assert corrected["ci_low"] <= truth <= corrected["ci_high"]
    # The figure is stats.corrected_win_rate on each judge's consolidated verdicts.
    verdicts = consolidated(build_frame(records, items=items)).set_index("query_id")
    gold = [_true_winner(world, item.id) for item in world.items[:90]]
    for judge in judges:
        labels = verdicts[verdicts["judge"] == judge]["label"]
        expected = stats.corrected_win_rate(
            gold,
            labels.loc[[i.id for i in world.items[:90]]].to_numpy(),
            labels.loc[[i.id for i in world.items[90:]]].to_numpy(),
            classes=("treatment", "control", "tie"),
            rng=0,
        )
        found = prefs["corrected"][judge]
        assert found["value"] == pytest.approx(expected.estimate)
        assert found["ci_low"] == pytest.approx(expected.ci_low)
        assert found["raw_rate"] == pytest.approx(expected.raw_rate)
    markdown = render_markdown(Report.model_validate(report))
    assert "Win rate corrected for each judge's errors on human-labelled pairs" in markdown


def test_corrected_win_rate_skipped_when_every_pair_is_labelled() -> None:
    rng = np.random.default_rng(32)
    world = make_world(40, rng)
    report = analyze(
        pairwise_records(world, {"a": JudgeSpec()}, rng), items=_gold_on_first(world, 40)
    )
    corrected = get(report, "effects.preferences.corrected.a")
    assert corrected["status"] == "skipped" and "every item" in corrected["reason"]
    plain = analyze(pairwise_records(world, {"a": JudgeSpec()}, rng), items=world.items)
    assert "corrected" not in get(plain, "effects.preferences")


def _true_human_mean(world: World, arm: str, dim: str) -> float:
    values = [int(np.clip(round(world.quality[(i.id, arm, dim)]), 1, 10)) for i in world.items]
    return float(np.mean(values))


def test_prediction_powered_mean_score_from_a_human_scored_subset() -> None:
    rng = np.random.default_rng(33)
    world = make_world(150, rng, human=True)
    items = [
        item if index < 40 else dataclasses.replace(item, human={})
        for index, item in enumerate(world.items)
    ]
    records = rubric_records(world, {"lenient": JudgeSpec(leniency=1.0)}, rng)
    report = analyze(records, items=items)
    assert_valid_report(report)
    ppi = get(report, "human_calibration.scores.prediction_powered.lenient")
    humans = {(i.id, a): i.human["scores"][a] for i in items[:40] for a in ("control", "treatment")}
    for arm in ("control", "treatment"):
        for dim in DIMS:
            entry = ppi[arm][dim]
            assert entry["n_labelled"] == 40 and entry["n_unlabelled"] == 110
            labelled = [humans[(i.id, arm)][dim] for i in items[:40]]
            assert entry["classical_estimate"] == pytest.approx(np.mean(labelled))
            truth = _true_human_mean(world, arm, dim)
            assert entry["ci_low"] <= truth <= entry["ci_high"]
            assert entry["judge_mean"] > truth + 0.5  # the judge alone is a point too lenient
    markdown = render_markdown(Report.model_validate(report))
    assert "Mean score from the human-scored subset and the judge (PPI++)" in markdown


def test_prediction_powered_mean_skipped_when_humans_scored_everything() -> None:
    rng = np.random.default_rng(34)
    world = make_world(30, rng, human=True)
    report = analyze(rubric_records(world, {"a": JudgeSpec()}, rng), items=world.items)
    entry = get(report, "human_calibration.scores.prediction_powered.a.control.accuracy")
    assert entry["status"] == "skipped" and "every response" in entry["reason"]


def test_by_author_comparisons_of_judges_who_scored_the_same_responses_are_friedman() -> None:
    rng = np.random.default_rng(35)
    world = make_world(60, rng)
    judges = {
        "harsh": JudgeSpec(family="alpha", leniency=-1.5),
        "mid": JudgeSpec(family="beta"),
        "soft": JudgeSpec(family="gamma", leniency=1.5),
    }
    node = get(analyze(rubric_records(world, judges, rng), items=world.items), "bias")
    friedman = node["self_enhancement"]["by_author_friedman"]
    assert set(friedman) == {"alpha-model", "beta-model"}
    for entry in friedman.values():
        assert entry["n_treatments"] == 3 and entry["n_blocks"] == 60
        assert entry["p_value"] < 1e-6 and 0.5 < entry["kendall_w"] <= 1
    two = {"a": JudgeSpec(family="alpha"), "b": JudgeSpec(family="beta")}
    node = get(analyze(rubric_records(world, two, rng), items=world.items), "bias")
    skipped = node["self_enhancement"]["by_author_friedman"]["alpha-model"]
    assert skipped["status"] == "skipped" and "three" in skipped["reason"]


def _three_arm_records() -> tuple[list[JudgeRecord], list[Item], dict[str, np.ndarray]]:
    """One judge scoring three arms whose quality is not ordered as the arms' names."""
    rng = np.random.default_rng(36)
    bonus = {"a": 0.0, "b": 3.0, "c": 1.0}
    records, items = [], []
    data: dict[str, list[Any]] = {"length": [], "score": [], "arm": []}
    for i in range(60):
        qid = f"q{i:03d}"
        lengths = {arm: int(rng.integers(100, 2000)) for arm in bonus}
        items.append(Item(id=qid, question="q", responses={a: "x" * n for a, n in lengths.items()}))
        for arm, extra in bonus.items():
            score = float(round(5 + extra + rng.normal(0, 1)))
            data["length"].append(lengths[arm])
            data["score"].append(score)
            data["arm"].append(arm)
            records.append(
                JudgeRecord(
                    key=f"{qid}|j|{arm}|r0",
                    run_id="r",
                    query_id=qid,
                    judge_name="j",
                    judge_model="m",
                    judge_vendor="",
                    mode="rubric",
                    presentation_order=arm,
                    positions={"A": arm},
                    status=Status.OK,
                    parse_success=True,
                    raw_response="{}",
                    timestamp=STAMP,
                    scores={arm: {"quality": score}},
                    overall={arm: score},
                )
            )
    return records, items, {k: np.asarray(v) for k, v in data.items()}


def test_verbosity_controls_for_arm_with_one_indicator_per_arm() -> None:
    records, items, data = _three_arm_records()
    scores = get(analyze(records, items=items), "bias.verbosity.judges.j.scores")
    indicators = np.column_stack([data["arm"] == "b", data["arm"] == "c"]).astype(float)
    expected = stats.partial_spearman(data["length"], data["score"], indicators)
    assert scores["partial_spearman"]["value"] == pytest.approx(expected.rho)
    codes = np.unique(data["arm"], return_inverse=True)[1].astype(float)
    ordinal = stats.partial_spearman(data["length"], data["score"], codes)
    assert expected.rho != pytest.approx(ordinal.rho, abs=1e-3)


def test_a_judge_that_only_ties_gets_a_reason_for_its_length_controlled_rate() -> None:
    rng = np.random.default_rng(37)
    world = make_world(40, rng)
    records = pairwise_records(world, {"lefty": JudgeSpec(first_bias=1.0)}, rng)
    report = analyze(records, items=world.items)
    assert_valid_report(report)
    controlled = get(report, "effects.preferences.length_controlled.lefty")
    assert controlled["value"] is None and "every comparison is a tie" in controlled["reason"]


def _swapped_retest_records() -> list[JudgeRecord]:
    """One judge, two items; each retest gives each arm the other arm's score."""
    records = []
    for qid in ("q1", "q2"):
        first, swapped = {"control": 3.0, "treatment": 7.0}, {"control": 7.0, "treatment": 3.0}
        for retest, scores in ((False, first), (True, swapped)):
            for arm, score in scores.items():
                records.append(
                    JudgeRecord(
                        key=f"{qid}|j|{arm}|r0" + ("|retest" if retest else ""),
                        run_id="r",
                        query_id=qid,
                        judge_name="j",
                        judge_model="m",
                        judge_vendor="",
                        mode="rubric",
                        presentation_order=arm,
                        positions={"A": arm},
                        status=Status.OK,
                        parse_success=True,
                        raw_response="{}",
                        timestamp=STAMP,
                        retest=retest,
                        scores={arm: {"accuracy": score}},
                        overall={arm: score},
                    )
                )
    return records


def test_analyze_completes_on_a_retest_that_swaps_the_arms_scores(tmp_path: Path) -> None:
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text(
        "".join(record_json(r) + "\n" for r in _swapped_retest_records()), encoding="utf-8"
    )
    paths = analyze_to_dir(
        judgments, human=None, dataset=None, out_dir=tmp_path / "report", plots=False
    )
    report = json.loads(paths.json.read_text(encoding="utf-8"))
    retest = get(report, "reliability.test_retest")
    assert retest["status"] == "computed" and retest["n_retest_records"] == 4
    assert retest["judges"]["j"]["value"] is None and retest["judges"]["j"]["reason"]
    checks = {c["check"]: c for c in report["verdict"]["judges"]["j"]["checks"]}
    assert checks["retest"]["status"] == "skipped" and checks["retest"]["message"]
