"""Ranking and criterion modes: Borda, top-position bias, TPR/TNR and the corrected pass rate."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jurybox.analysis import AnalysisOptions
from jurybox.records import JudgeRecord, Status

from .helpers import analyze, assert_valid_report, get
from .synth import STAMP

RANK_ARMS = ("a", "b", "c")


def _ranking_records(n_items: int, rng: np.random.Generator) -> list[JudgeRecord]:
    """Arm c is best, then b, then a; 'topfirst' puts the first-shown arm on top 70% of the time."""
    quality = {"a": 0.0, "b": 1.0, "c": 2.0}
    out = []
    for i in range(n_items):
        order = tuple(rng.permutation(RANK_ARMS))
        for judge in ("fair", "topfirst"):
            noisy = {arm: quality[arm] + rng.normal(0, 0.8) for arm in RANK_ARMS}
            ranking = sorted(RANK_ARMS, key=lambda arm: -noisy[arm])
            if judge == "topfirst" and rng.random() < 0.7:
                ranking = [order[0], *[arm for arm in ranking if arm != order[0]]]
            out.append(
                JudgeRecord(
                    key=f"q{i}|{judge}|{'>'.join(order)}|r0",
                    run_id="rank",
                    query_id=f"q{i}",
                    judge_name=judge,
                    judge_model=judge,
                    judge_vendor="",
                    mode="ranking",
                    presentation_order=">".join(order),
                    positions={letter: arm for letter, arm in zip("ABC", order, strict=True)},
                    status=Status.OK,
                    parse_success=True,
                    raw_response="{}",
                    timestamp=STAMP,
                    ranking=ranking,
                    overall={arm: 5 + 2 * quality[arm] for arm in RANK_ARMS},
                )
            )
    return out


@pytest.fixture(scope="module")
def ranking_report() -> dict[str, Any]:
    return analyze(_ranking_records(150, np.random.default_rng(2)))


def test_ranking_borda_and_win_rates(ranking_report: dict[str, Any]) -> None:
    assert_valid_report(ranking_report)
    borda = get(ranking_report, "panels.borda")
    assert borda["judges"]["fair"]["ranking"] == ["c", "b", "a"]
    assert borda["panel"]["n_rankings"] == 300
    rates = get(ranking_report, "panels.win_rates.pairs")
    c_over_a = next(
        r for r in rates if (r["arm"], r["opponent"], r["source"]) == ("c", "a", "rankings")
    )
    assert c_over_a["value"] > 0.75 and c_over_a["n"] == 300


def test_ranking_top_position_bias(ranking_report: dict[str, Any]) -> None:
    top = get(ranking_report, "bias.position.top_position_rate")
    assert top["topfirst|k=3"]["value"] > 0.7
    assert top["topfirst|k=3"]["null_proportion"] == pytest.approx(1 / 3)
    assert top["topfirst|k=3"]["p_value"] < 0.001
    assert top["fair|k=3"]["p_value"] > 0.01


def test_three_arms_need_a_named_treatment(ranking_report: dict[str, Any]) -> None:
    effects = ranking_report["effects"]
    assert effects["status"] == "skipped"
    assert "treatment_arm" in effects["reason"]
    records = _ranking_records(30, np.random.default_rng(4))
    named = analyze(records, options=AnalysisOptions(control_arm="a", treatment_arm="c"))
    total = get(named, "effects.scores.overall.dimensions.total")
    assert total["mean_difference"] == pytest.approx(4.0)


def _criterion_records(rng: np.random.Generator) -> tuple[list[JudgeRecord], dict[str, Any]]:
    """100 items x 2 arms; truth Pass with p 0.6 (control) / 0.8 (treatment); humans label 60."""
    records, human = [], {}
    rates = {"good": (0.9, 0.9), "lenient": (0.98, 0.3)}
    for i in range(100):
        truth = {arm: rng.random() < p for arm, p in (("control", 0.6), ("treatment", 0.8))}
        if i < 60:
            human[f"q{i}"] = {"verdict": {arm: "Pass" if t else "Fail" for arm, t in truth.items()}}
        for judge, (tpr, tnr) in rates.items():
            for arm, passed in truth.items():
                says_pass = rng.random() < tpr if passed else rng.random() > tnr
                records.append(
                    JudgeRecord(
                        key=f"q{i}|{judge}|{arm}|r0|c:concise",
                        run_id="crit",
                        query_id=f"q{i}",
                        judge_name=judge,
                        judge_model=judge,
                        judge_vendor="",
                        mode="criterion",
                        presentation_order=arm,
                        positions={"A": arm},
                        status=Status.OK,
                        parse_success=True,
                        raw_response="{}",
                        timestamp=STAMP,
                        criterion="concise",
                        verdict="Pass" if says_pass else "Fail",
                    )
                )
    return records, human


def test_criterion_tpr_tnr_and_corrected_pass_rate() -> None:
    records, human = _criterion_records(np.random.default_rng(9))
    report = analyze(records, human=human)
    assert_valid_report(report)
    judges = get(report, "human_calibration.criterion.judges")
    good, lenient = judges["good|concise"], judges["lenient|concise"]
    assert good["tpr_tnr"]["tpr"]["value"] > 0.8 and good["tpr_tnr"]["tnr"]["value"] > 0.7
    assert lenient["tpr_tnr"]["tnr"]["value"] < 0.5
    assert good["tpr_tnr"]["n"] == 120
    corrected = good["corrected_pass_rate"]
    assert corrected["n_unlabelled"] == 80 and corrected["n_labelled"] == 120
    assert corrected["ci_low"] < 0.7 < corrected["ci_high"]  # true pass rate is 0.7
    assert judges["lenient|concise"]["judge_pass_rate"]["value"] > 0.75
    ds = get(report, "panels.dawid_skene.verdicts")
    assert set(ds["judges"]) == {"good", "lenient"}
    assert get(report, "agreement.verdicts.pairs")[0]["raters"] == ["good", "lenient"]
    assert get(report, "panels.majority_vote.verdicts.n_items") == 200


def test_criterion_labels_covering_everything_skip_the_correction() -> None:
    records, human = _criterion_records(np.random.default_rng(9))
    labelled = {r.query_id for r in records}
    everything = {qid: human.get(qid, {"verdict": "Pass"}) for qid in labelled}
    report = analyze(records, human=everything)
    entry = get(report, "human_calibration.criterion.judges.good|concise")
    assert entry["corrected_pass_rate"]["status"] == "skipped"
    assert "human_pass_rate" in entry["corrected_pass_rate"]["reason"]
