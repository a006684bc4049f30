"""The report finds every planted effect in synthetic records, and none of the absent ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from .helpers import analyze, assert_valid_report, get
from .synth import JudgeSpec, make_world, pairwise_records, rubric_records

RUBRIC_JUDGES = {
    "fair": JudgeSpec(family="gamma", confidence=True),
    "wordy": JudgeSpec(family="delta", verbosity=1.0),
    "selfish": JudgeSpec(family="alpha", self_bonus=1.5),
    "harsh": JudgeSpec(family="beta", leniency=-1.5),
}


@pytest.fixture(scope="module")
def rubric_report() -> dict[str, Any]:
    rng = np.random.default_rng(7)
    world = make_world(200, rng, effect={"accuracy": 1.0}, human=True)
    records = rubric_records(world, RUBRIC_JUDGES, rng, retest_items=40)
    return analyze(records, items=world.items)


@pytest.fixture(scope="module")
def pairwise_report() -> dict[str, Any]:
    rng = np.random.default_rng(11)
    # Arms differ by ~5 points of total quality at random; +3 makes treatment win ~72%.
    world = make_world(200, rng, effect={"accuracy": 3.0})
    judges = {
        "fair": JudgeSpec(noise=0.3, confidence=True),
        "lefty": JudgeSpec(first_bias=0.6),  # picks position A 0.6 + 0.4 / 2 = 80% of the time
        "wordy": JudgeSpec(verbosity=1.5),
    }
    return analyze(pairwise_records(world, judges, rng), items=world.items)


def test_reports_validate(rubric_report: dict[str, Any], pairwise_report: dict[str, Any]) -> None:
    assert_valid_report(rubric_report)
    assert_valid_report(pairwise_report)


def test_treatment_effect_found_on_the_planted_dimension_only(
    rubric_report: dict[str, Any],
) -> None:
    dims = get(rubric_report, "effects.scores.overall.dimensions")
    assert dims["accuracy"]["significant"] is True
    assert dims["accuracy"]["mean_difference"] == pytest.approx(1.0, abs=0.25)
    assert dims["accuracy"]["wilcoxon"]["p_holm"] < 0.001
    assert dims["accuracy"]["cohens_d"]["value"] > 0.3
    assert dims["accuracy"]["rank_biserial"]["value"] > 0.3
    for absent in ("clarity", "depth"):
        assert dims[absent]["significant"] is False
        assert dims[absent]["wilcoxon"]["p_holm"] >= dims[absent]["wilcoxon"]["p_value"]
    assert dims["total"]["significant"] is True
    for judge, test in get(rubric_report, "effects.scores.per_judge").items():
        assert test["mean_difference"] > 0, judge
    groups = get(rubric_report, "effects.scores.by_category.groups")
    assert set(groups) == {"math", "writing"}
    assert groups["math"]["dimensions"]["accuracy"]["n"] == 100


def test_equivalence_on_normal_items(rubric_report: dict[str, Any]) -> None:
    tost = get(rubric_report, "effects.scores.equivalence")
    assert tost["n_items"] == 80 and tost["margin"] == 0.5
    assert tost["dimensions"]["accuracy"]["equivalent"] is False
    assert tost["dimensions"]["clarity"]["equivalent"] is True


def test_gate_failures_mcnemar(rubric_report: dict[str, Any]) -> None:
    gates = get(rubric_report, "effects.scores.gate_failures")
    assert gates["control_failures"] > gates["treatment_failures"]
    assert gates["p_value"] < 0.05
    assert gates["n"] == 200


def test_verbosity_bias_found_only_in_the_wordy_judge(rubric_report: dict[str, Any]) -> None:
    judges = get(rubric_report, "bias.verbosity.judges")
    wordy = judges["wordy"]["scores"]
    assert wordy["detected"] is True and wordy["direction"] == "longer"
    assert wordy["ols"]["value"] > 0 and wordy["ols"]["p_value"] < 0.001
    assert wordy["partial_spearman"]["value"] > 0.4
    for judge in ("fair", "selfish", "harsh"):
        assert judges[judge]["scores"]["detected"] is False, judge


def test_self_enhancement_found_only_in_the_selfish_judge(rubric_report: dict[str, Any]) -> None:
    judges = get(rubric_report, "bias.self_enhancement.judges")
    selfish = judges["selfish"]
    assert selfish["family"] == "alpha"
    assert selfish["detected"] is True
    assert selfish["relative_test"]["excess"] == pytest.approx(1.5, abs=0.6)
    assert selfish["ratio"] > 1
    assert judges["harsh"]["detected"] is False  # another judge's self-bias must not leak
    for judge in ("fair", "wordy"):  # families that authored nothing
        assert judges[judge]["status"] == "skipped"
    assert set(get(rubric_report, "bias.self_enhancement.by_author")) == {
        "alpha-model",
        "beta-model",
    }


def test_leniency(rubric_report: dict[str, Any]) -> None:
    leniency = get(rubric_report, "bias.leniency")
    assert leniency["range"]["most_severe"] == "harsh"
    assert leniency["range"]["value"] > 1.0
    assert leniency["kruskal_wallis"]["p_value"] < 0.001


def test_reliability(rubric_report: dict[str, Any]) -> None:
    retest = get(rubric_report, "reliability.test_retest")
    for judge, icc in retest["judges"].items():
        # "fair" is sometimes unsure (4x noise, stated confidence 1): less reliable by design.
        assert icc["value"] > (0.6 if judge == "fair" else 0.8), judge
        assert icc["n"] == 80  # 40 items x 2 arms
    assert set(retest["dimensions"]) == {"accuracy", "clarity", "depth", "total"}
    assert get(rubric_report, "reliability.internal_consistency.pooled.value") > 0.7
    calib = get(rubric_report, "reliability.confidence_calibration.scores")
    fair = calib["judges"]["fair"]
    assert calib["target"].endswith("human; bins: share within one point")
    assert fair["spearman"]["value"] < -0.3  # confident -> smaller error
    by_level = {b["stated_confidence"]: b["value"] for b in fair["bins"]}
    assert by_level[5.0] > by_level[1.0]


def test_human_calibration_on_scores(rubric_report: dict[str, Any]) -> None:
    judges = get(rubric_report, "human_calibration.scores.judges")
    fair = judges["fair"]["dimensions"]["accuracy"]["weighted_quadratic"]["value"]
    harsh = judges["harsh"]["dimensions"]["accuracy"]["weighted_quadratic"]["value"]
    assert fair > 0.6 and harsh < fair
    assert get(rubric_report, "human_calibration.preferences.status") == "skipped"


def test_rubric_verdict_names_the_biased_judges(rubric_report: dict[str, Any]) -> None:
    verdict = rubric_report["verdict"]
    assert verdict["level"] in ("use_with_caution", "not_trusted")
    assert verdict["judges"]["wordy"]["level"] != "trusted"
    assert verdict["judges"]["selfish"]["level"] != "trusted"
    assert verdict["judges"]["fair"]["level"] == "trusted"
    checks = {(c["check"], c["judge"]): c["status"] for c in verdict["checks"]}
    assert checks[("length", "wordy")] in ("warn", "fail")
    assert checks[("self_preference", "selfish")] == "warn"
    assert checks[("length", "fair")] == "pass"


def test_position_bias_found_only_in_the_lefty_judge(pairwise_report: dict[str, Any]) -> None:
    judges = get(pairwise_report, "bias.position.judges")
    lefty = judges["lefty"]
    assert lefty["first_position_rate"]["value"] == pytest.approx(0.8, abs=0.06)
    assert lefty["first_position_rate"]["p_holm"] < 0.001
    assert lefty["swap_consistency"]["value"] < 0.8
    fair = judges["fair"]
    assert fair["first_position_rate"]["p_holm"] > 0.05
    assert fair["swap_consistency"]["value"] > 0.8
    verdict = pairwise_report["verdict"]
    assert verdict["level"] == "not_trusted"
    assert verdict["judges"]["lefty"]["level"] == "not_trusted"
    # No gold labels: a fair judge is at most "use with caution", and says why.
    assert verdict["judges"]["fair"]["level"] == "use_with_caution"
    assert verdict["judges"]["fair"]["reason"].startswith("accuracy untested")
    assert any(r.startswith("lefty: prefers the first-shown") for r in verdict["reasons"])


def test_pairwise_effect_win_rate_with_flip_as_tie(pairwise_report: dict[str, Any]) -> None:
    prefs = get(pairwise_report, "effects.preferences")
    assert prefs["panel"]["ci_low"] > 0.5
    assert prefs["judges"]["fair"]["value"] > 0.5
    lefty = prefs["judges"]["lefty"]
    assert lefty["ties"] > 0.25 * lefty["n"]  # its order flips become ties
    assert lefty["flip_is_tie"] is True


def test_pairwise_verbosity(pairwise_report: dict[str, Any]) -> None:
    judges = get(pairwise_report, "bias.verbosity.judges")
    assert judges["wordy"]["preferences"]["detected"] is True
    assert judges["wordy"]["preferences"]["detected_by"] == "logit"
    assert judges["fair"]["preferences"]["detected"] is False


def test_panels_on_preferences(pairwise_report: dict[str, Any]) -> None:
    panels = pairwise_report["panels"]
    majority = panels["majority_vote"]["preferences"]
    assert sum(majority["counts"].values()) + majority["no_majority"] == majority["n_items"] == 200
    ds = panels["dawid_skene"]["preferences"]["judges"]
    assert ds["fair"]["accuracy"] > ds["lefty"]["accuracy"]
    rates = {(r["arm"], r["rater"]): r for r in panels["win_rates"]["pairs"]}
    assert rates[("treatment", "panel")]["value"] > 0.5
    assert rates[("control", "panel")]["value"] == pytest.approx(
        1 - rates[("treatment", "panel")]["value"]
    )
    calib = get(pairwise_report, "reliability.confidence_calibration.preferences")
    assert calib["target"] == "consistent_across_orders"
    assert calib["judges"]["fair"]["spearman"]["value"] > 0


def test_agreement_families(pairwise_report: dict[str, Any], rubric_report: dict[str, Any]) -> None:
    prefs = get(pairwise_report, "agreement.preferences")
    assert len(prefs["pairs"]) == 3
    assert prefs["krippendorff_alpha"]["level"] == "nominal"
    dims = get(rubric_report, "agreement.scores.dimensions")
    assert set(dims) == {"accuracy", "clarity", "depth", "total"}
    assert dims["accuracy"]["krippendorff_alpha"]["level"] == "ordinal"
    assert dims["accuracy"]["fleiss_kappa"]["n"] == 400
    assert len(dims["accuracy"]["pairs"]) == 6


def test_no_effects_when_none_are_planted() -> None:
    rng = np.random.default_rng(3)
    world = make_world(150, rng, effect={}, human=True)
    judges = {name: JudgeSpec(family=name) for name in ("j1", "j2", "j3")}
    report = analyze(rubric_records(world, judges, rng, retest_items=30), items=world.items)
    assert_valid_report(report)
    dims = get(report, "effects.scores.overall.dimensions")
    assert not any(dims[d]["significant"] for d in ("accuracy", "clarity", "depth", "total"))
    for entry in get(report, "bias.verbosity.judges").values():
        assert entry["scores"]["detected"] is False
    assert get(report, "bias.self_enhancement.judges.j1.status") == "skipped"
    verdict = report["verdict"]
    assert verdict["level"] == "trusted", verdict["answer"]
    assert verdict["answer"].startswith("Yes")


def test_noisy_retests_lower_the_icc_and_warn() -> None:
    rng = np.random.default_rng(5)
    world = make_world(60, rng)
    judges = {"steady": JudgeSpec(noise=0.3)}
    records = rubric_records(world, judges, rng, retest_items=60, retest_noise=4.0)
    report = analyze(records, items=world.items)
    icc = get(report, "reliability.test_retest.judges.steady.value")
    assert icc < 0.5
    checks = {c["check"]: c["status"] for c in report["verdict"]["checks"]}
    assert checks["retest"] in ("warn", "fail")


def test_pairwise_self_preference_against_neutral_judges() -> None:
    rng = np.random.default_rng(13)
    world = make_world(200, rng, effect={})
    judges = {
        "selfish": JudgeSpec(family="alpha", self_bonus=1.5),
        "honest": JudgeSpec(family="beta"),
        "n1": JudgeSpec(family="gamma"),
        "n2": JudgeSpec(family="delta"),
    }
    report = analyze(pairwise_records(world, judges, rng), items=world.items)
    assert_valid_report(report)
    section = get(report, "bias.self_enhancement")
    assert section["judges"] == {} and section["scores_reason"]
    prefs = section["preferences"]["judges"]
    assert set(prefs) == {"selfish", "honest"}  # gamma and delta wrote nothing
    assert prefs["selfish"]["detected"] is True and prefs["selfish"]["excess"] > 0.15
    assert prefs["selfish"]["own_win_rate"]["value"] > 0.6
    assert prefs["honest"]["detected"] is False
    checks = {(c["check"], c["judge"]): c["status"] for c in report["verdict"]["checks"]}
    assert checks[("self_preference", "selfish")] == "warn"
    assert checks[("self_preference", "honest")] == "pass"
