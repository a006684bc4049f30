"""Empty and degenerate input: every family says why it was skipped; nothing crashes or is NaN."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jurybox.analysis import FAMILIES, AnalysisOptions, build_frame
from jurybox.records import JudgeRecord, Status

from .helpers import analyze, assert_valid_report, get
from .synth import STAMP, JudgeSpec, make_world, pairwise_records, rubric_records


def _rubric(qid: str, judge: str, arm: str, scores: dict[str, float], **extra: Any) -> JudgeRecord:
    fields: dict[str, Any] = {
        "key": f"{qid}|{judge}|{arm}|r0",
        "run_id": "r",
        "query_id": qid,
        "judge_name": judge,
        "judge_model": "m",
        "judge_vendor": "",
        "mode": "rubric",
        "presentation_order": arm,
        "positions": {"A": arm},
        "status": Status.OK,
        "parse_success": True,
        "raw_response": "{}",
        "timestamp": STAMP,
        "scores": {arm: scores},
    }
    fields.update(extra)
    return JudgeRecord(**fields)


def test_empty_input_skips_every_family_with_a_reason() -> None:
    report = analyze([])
    assert_valid_report(report)
    for family in FAMILIES:
        assert report[family] == {"status": "skipped", "reason": "no records"}
    assert report["summary"]["n_records"] == 0
    assert report["verdict"]["level"] == "insufficient_evidence"
    assert report["verdict"]["trustworthy"] is None


def test_only_failures_are_counted_and_fail_the_verdict() -> None:
    records = [
        _rubric(f"q{i}", "j", "control", {}, status=status, parse_success=False)
        for i, status in enumerate([Status.UNPARSED] * 3 + [Status.PROVIDER_ERROR, Status.SKIPPED])
    ]
    report = analyze(records)
    assert_valid_report(report)
    summary = report["summary"]
    assert summary["n_ok"] == 0
    assert summary["excluded"]["by_status"] == {"unparsed": 3, "provider_error": 1, "skipped": 1}
    failures = summary["failures"]["j"]
    assert failures["parse_failure_rate"] == 1.0  # 3 unparsed of 3 answers
    assert failures["failure_rate"] == 1.0  # skipped records are not failures
    assert all(report[f]["status"] == "skipped" for f in FAMILIES)
    assert report["verdict"]["level"] == "not_trusted"
    assert "calls failed" in report["verdict"]["answer"]


def test_one_judge_one_arm_one_dimension() -> None:
    rng = np.random.default_rng(0)
    records = [
        _rubric(
            f"q{i}",
            "solo",
            "control",
            {"accuracy": float(rng.integers(1, 11))},
            overall={"control": 5.0},
        )
        for i in range(20)
    ]
    report = analyze(records)
    assert_valid_report(report)
    reasons = {
        "agreement": "a single judge",
        "effects": "a single arm",
        "human_calibration": "no human labels",
        "accuracy_vs_gold": "no gold preference",
    }
    for family, start in reasons.items():
        assert report[family]["status"] == "skipped"
        assert report[family]["reason"].startswith(start), report[family]["reason"]
    bias = report["bias"]
    assert bias["position"]["status"] == "skipped"
    assert "one response at a time" in bias["position"]["reason"]
    assert bias["verbosity"]["reason"].startswith("no items")
    assert bias["self_enhancement"]["status"] == "skipped"
    assert bias["leniency"]["range"]["reason"].startswith("a single judge")
    reliability = report["reliability"]
    assert reliability["test_retest"]["reason"].startswith("no retest records")
    assert reliability["internal_consistency"]["reason"].startswith("1 rubric dimension")
    assert reliability["confidence_calibration"]["reason"].startswith("no judgment states")
    panels = report["panels"]
    for section in ("majority_vote", "scores", "borda", "dawid_skene", "win_rates"):
        assert panels[section]["status"] == "skipped", section
    # Parsing passed but nothing speaks for accuracy: no labels, no retest, one order.
    assert report["verdict"]["level"] == "insufficient_evidence"
    assert "accuracy untested" in report["verdict"]["answer"]


def test_constant_scores_give_reasoned_nulls_not_nans() -> None:
    records = [
        _rubric(f"q{i}", judge, arm, {"accuracy": 5.0, "clarity": 5.0}, overall={arm: 5.0})
        for i in range(12)
        for judge in ("j1", "j2")
        for arm in ("control", "treatment")
    ]
    report = analyze(records)
    assert_valid_report(report)
    total = get(report, "effects.scores.overall.dimensions.total")
    assert total["wilcoxon"]["value"] is None and total["wilcoxon"]["reason"]
    assert total["cohens_d"]["value"] is None and total["cohens_d"]["reason"]
    alpha = get(report, "agreement.scores.dimensions.accuracy.krippendorff_alpha")
    assert alpha["value"] is None and alpha["reason"]
    kappa = get(report, "agreement.scores.dimensions.accuracy.pairs")[0]["cohen_kappa"]
    assert kappa["value"] is None and kappa["reason"]
    assert get(report, "panels.scores.judges_without_spread") == ["j1", "j2"]


def test_holistic_fallbacks_are_counted_and_kept_out_of_scores() -> None:
    records = [
        _rubric("q1", "j", "control", {"accuracy": 7.0}),
        _rubric("q2", "j", "control", {"accuracy": 3.0}, holistic_fallback=True),
    ]
    frame = build_frame(records)
    assert set(frame.scores["rec"]) == {0}
    report = analyze(records)
    assert report["summary"]["excluded"] == {
        "total": 1,
        "holistic_fallback": 1,
        "by_status": {},
    }


def test_input_forms_give_the_same_report(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    world = make_world(30, rng)
    records = pairwise_records(world, {"a": JudgeSpec(), "b": JudgeSpec(first_bias=0.3)}, rng)
    expected = analyze(records, items=world.items)
    as_dicts = analyze([r.to_dict() for r in records], items=world.items)
    path = tmp_path / "judgments.jsonl"
    path.write_text("\n".join(r.to_json() for r in records), encoding="utf-8")
    as_frame = analyze(pd.read_json(path, lines=True), items=world.items)
    for other in (as_dicts, as_frame):
        assert json.dumps(other["bias"], sort_keys=True) == json.dumps(
            expected["bias"], sort_keys=True
        )
        assert other["effects"] == expected["effects"]
        assert other["summary"]["n_ok"] == expected["summary"]["n_ok"]


def test_preference_is_derived_from_the_arm_when_missing() -> None:
    rng = np.random.default_rng(1)
    world = make_world(5, rng)
    records = [r.to_dict() for r in pairwise_records(world, {"a": JudgeSpec()}, rng)]
    for record in records:
        record["preference"] = None
    frame = build_frame(records)
    first = frame.records["preferred_arm"] == frame.records["first_arm"]
    assert (frame.records.loc[first, "preference"] == "A").all()
    assert (frame.records.loc[~first, "preference"] == "B").all()


def test_control_arm_option_flips_the_contrast() -> None:
    rng = np.random.default_rng(2)
    world = make_world(40, rng, effect={"accuracy": 2.0})
    records = rubric_records(world, {"j": JudgeSpec()}, rng)
    normal = get(analyze(records, items=world.items), "effects.scores.overall")
    flipped = analyze(records, items=world.items, options=AnalysisOptions(control_arm="treatment"))
    assert flipped["summary"]["control_arm"] == "treatment"
    reverse = get(flipped, "effects.scores.overall")
    a = normal["dimensions"]["accuracy"]["mean_difference"]
    assert reverse["dimensions"]["accuracy"]["mean_difference"] == pytest.approx(-a)


def test_random_single_order_still_measures_first_position_preference() -> None:
    rng = np.random.default_rng(3)
    world = make_world(120, rng)
    records = pairwise_records(world, {"lefty": JudgeSpec(first_bias=0.6)}, rng)
    keep = {(r.query_id, r.presentation_order) for r in records if rng.random() < 0.5}
    one_order = [r for r in records if (r.query_id, r.presentation_order) in keep]
    report = analyze(one_order, items=world.items)
    position = get(report, "bias.position.judges.lefty")
    assert position["first_position_rate"]["p_holm"] < 0.05
    swap = position["swap_consistency"]
    assert swap.get("status") == "skipped" or swap["n"] < 60  # few items kept both orders


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="alpha"):
        AnalysisOptions(alpha=1.5)
    with pytest.raises(ValueError, match="equivalence_margin"):
        AnalysisOptions(equivalence_margin=0)


def test_human_labels_as_dataframe_and_bad_verdicts() -> None:
    rng = np.random.default_rng(4)
    world = make_world(20, rng)
    records = pairwise_records(world, {"a": JudgeSpec(), "b": JudgeSpec()}, rng)
    labels = pd.DataFrame(
        {"query_id": [i.id for i in world.items], "preferred_arm": ["treatment"] * len(world.items)}
    )
    report = analyze(records, human=labels, items=world.items)
    assert get(report, "accuracy_vs_gold.n_labelled") == 20
    with pytest.raises(ValueError, match="Pass or Fail"):
        analyze(records, human={"q0000": {"verdict": "maybe"}}, items=world.items)


def test_retests_without_an_original_are_reported() -> None:
    record = _rubric("q1", "j", "control", {"accuracy": 5.0}, retest=True, overall={"control": 5.0})
    record = JudgeRecord(**{**record.__dict__, "key": record.key + "|retest"})
    report = analyze([record])
    retest = get(report, "reliability.test_retest")
    assert retest["status"] == "skipped" and retest["n_retest_records"] == 1


def _swapped_retest_records() -> list[JudgeRecord]:
    """One judge, two items; each retest gives each arm the other arm's score."""
    records = []
    for qid in ("q1", "q2"):
        first, swapped = {"control": 3.0, "treatment": 7.0}, {"control": 7.0, "treatment": 3.0}
        for retest, scores in ((False, first), (True, swapped)):
            for arm, score in scores.items():
                record = _rubric(
                    qid, "j", arm, {"accuracy": score}, retest=retest, overall={arm: score}
                )
                suffix = "|retest" if retest else ""
                records.append(JudgeRecord(**{**record.__dict__, "key": record.key + suffix}))
    return records


def test_a_retest_that_swaps_the_arms_scores_is_reported_not_a_crash() -> None:
    report = analyze(_swapped_retest_records())
    assert_valid_report(report)
    retest = get(report, "reliability.test_retest")
    assert retest["status"] == "computed" and retest["n_retest_records"] == 4
    icc = retest["judges"]["j"]
    # Every target's mean is 5: ICC(2,1) is undefined, kept in place with the reason.
    assert icc["value"] is None and "undefined" in icc["reason"]
    assert retest["dimensions"]["accuracy"]["reason"] == icc["reason"]
    checks = {c["check"]: c for c in report["verdict"]["judges"]["j"]["checks"]}
    assert checks["retest"]["status"] == "skipped" and checks["retest"]["message"]


def test_a_retest_equal_to_its_test_gives_icc_one_and_a_passed_check() -> None:
    records = []
    for i, s in enumerate((2.0, 5.0, 8.0)):
        for retest in (False, True):
            record = _rubric(
                f"q{i}", "j", "control", {"accuracy": s}, retest=retest, overall={"control": s}
            )
            suffix = "|retest" if retest else ""
            records.append(JudgeRecord(**{**record.__dict__, "key": record.key + suffix}))
    report = analyze(records)
    assert_valid_report(report)
    assert get(report, "reliability.test_retest.judges.j.value") == pytest.approx(1.0)
    checks = {c["check"]: c for c in report["verdict"]["judges"]["j"]["checks"]}
    assert checks["retest"]["status"] == "pass"
