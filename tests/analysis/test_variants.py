"""The variant each design calls for: weighted kappa on the scale, no kappa on means, AC beside
kappa, alpha with its interval."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from jurybox.analysis import AnalysisOptions

from .helpers import analyze, assert_valid_report, get
from .synth import JudgeSpec, make_world, pairwise_records, rubric_records


def _rubric(options: AnalysisOptions | None = None) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    world = make_world(60, rng)
    judges = {"a": JudgeSpec(), "b": JudgeSpec(noise=1.5)}
    return analyze(rubric_records(world, judges, rng), items=world.items, options=options)


def test_the_total_is_interval_level_without_kappa_on_means() -> None:
    report = _rubric()
    assert_valid_report(report)
    total = get(report, "agreement.scores.dimensions.total")
    assert total["level"] == "interval"
    assert not {"fleiss_kappa", "pairs", "percent_agreement", "gwet_ac"} & set(total)
    assert 0 < total["icc"]["value"] <= 1 and total["icc"]["kind"] == "2,1"
    ci = total["krippendorff_alpha_ci"]
    assert ci["value"] == total["krippendorff_alpha"]["value"]
    assert ci["ci_low"] <= ci["value"] <= ci["ci_high"]


def test_dimension_scores_get_linear_weighted_kappa_and_ac2_over_the_scale() -> None:
    observed = get(_rubric(), "agreement.scores.dimensions.accuracy")
    assert observed["level"] == "ordinal"
    kappa = observed["pairs"][0]["cohen_kappa"]
    assert kappa["weights"] == "linear" and "observed span" in kappa["method"]
    assert observed["gwet_ac"]["weights"] == "linear"
    declared = get(
        _rubric(AnalysisOptions(score_scale=(0, 20))), "agreement.scores.dimensions.accuracy"
    )
    kappa = declared["pairs"][0]["cohen_kappa"]
    assert kappa["categories"] == list(range(21)) and "declared scale 0-20" in kappa["method"]
    assert declared["gwet_ac"]["n_categories"] == 21


def test_preferences_get_unweighted_kappa_and_ac1() -> None:
    rng = np.random.default_rng(6)
    world = make_world(60, rng)
    records = pairwise_records(world, {"a": JudgeSpec(), "b": JudgeSpec()}, rng)
    block = get(analyze(records, items=world.items), "agreement.preferences")
    assert block["pairs"][0]["cohen_kappa"]["weights"] is None
    assert block["gwet_ac"]["weights"] is None and "AC1" in block["gwet_ac"]["method"]
    assert block["fleiss_kappa"]["value"] is not None


def test_weighted_kappa_against_human_scores_uses_every_point_of_the_scale() -> None:
    rng = np.random.default_rng(8)
    world = make_world(60, rng, human=True)
    records = rubric_records(world, {"a": JudgeSpec()}, rng)
    options = AnalysisOptions(score_scale=(0, 20))
    report = analyze(records, items=world.items, options=options)
    judges = get(report, "human_calibration.scores.judges")
    dims = judges["a"]["dimensions"]
    entry = next(d for name, d in dims.items() if name != "total")
    for key, weights in (("weighted_linear", "linear"), ("weighted_quadratic", "quadratic")):
        assert entry[key]["weights"] == weights
        assert entry[key]["categories"] == list(range(21))


def test_leniency_of_judges_who_scored_the_same_items_is_friedman_with_kendalls_w() -> None:
    rng = np.random.default_rng(9)
    world = make_world(40, rng)
    judges = {"a": JudgeSpec(), "b": JudgeSpec(), "c": JudgeSpec(leniency=1.5)}
    leniency = get(analyze(rubric_records(world, judges, rng), items=world.items), "bias.leniency")
    friedman = leniency["friedman"]
    assert friedman["n_treatments"] == 3 and friedman["n_blocks"] == 80
    assert friedman["p_value"] < 0.05 and 0 < friedman["kendall_w"] <= 1
    two = get(_rubric(), "bias.leniency.friedman")
    assert two["status"] == "skipped" and "three" in two["reason"]


def test_verbosity_flags_are_holm_corrected_over_the_family() -> None:
    rng = np.random.default_rng(10)
    world = make_world(80, rng)
    judges = {"fair": JudgeSpec(), "wordy": JudgeSpec(verbosity=1.5), "calm": JudgeSpec()}
    verbosity = get(
        analyze(rubric_records(world, judges, rng), items=world.items), "bias.verbosity"
    )
    assert "Holm" in verbosity["multiplicity"]
    entries = {j: e["scores"] for j, e in verbosity["judges"].items()}
    assert entries["wordy"]["detected"] is True
    for entry in entries.values():
        raw = entry["partial_spearman"]["p_value"]
        assert raw <= entry["p_holm"] <= min(1.0, 3 * raw) + 1e-12
        assert entry["detected"] == (entry["p_holm"] < 0.05)


def test_self_enhancement_flags_are_holm_corrected_over_the_family() -> None:
    rng = np.random.default_rng(12)
    world = make_world(80, rng)
    judges = {
        "selfish": JudgeSpec(family="alpha", self_bonus=2.0),
        "other": JudgeSpec(family="beta"),
        "neutral": JudgeSpec(family="gamma"),
    }
    node = get(analyze(rubric_records(world, judges, rng), items=world.items), "bias")
    found = node["self_enhancement"]
    assert "Holm" in found["multiplicity"]
    tested = {j: e for j, e in found["judges"].items() if "p_holm" in e}
    assert tested["selfish"]["detected"] is True
    for entry in tested.values():
        assert entry["p_holm"] >= entry["relative_test"]["p_value"]
        assert entry["detected"] == (
            entry["p_holm"] < 0.05 and entry["relative_test"]["excess"] > 0
        )


def test_the_paired_position_test_sits_beside_the_binomial_one() -> None:
    rng = np.random.default_rng(13)
    world = make_world(120, rng)
    judges = {"fair": JudgeSpec(), "lefty": JudgeSpec(first_bias=0.4)}
    position = get(
        analyze(pairwise_records(world, judges, rng), items=world.items), "bias.position"
    )
    lefty = position["judges"]["lefty"]["paired_position_test"]
    assert lefty["value"] > 0.5 and lefty["p_holm"] < 0.05
    assert lefty["n_first_both"] + lefty["n_second_both"] == lefty["n_discordant"]
    fair = position["judges"]["fair"]["paired_position_test"]
    assert fair["p_holm"] >= fair["p_value"]


def test_treatment_effect_heterogeneity_across_subgroups() -> None:
    rng = np.random.default_rng(14)
    world = make_world(80, rng, effect={"accuracy": 2.0})
    report = analyze(rubric_records(world, {"a": JudgeSpec()}, rng), items=world.items)
    assert_valid_report(report)
    by_category = get(report, "effects.scores.by_category")
    het = by_category["heterogeneity"]["accuracy"]
    assert {e["subgroup"] for e in het["effects"]} == {"math", "writing"}
    assert het["value"] > 0.01  # the planted effect is the same in both categories
    for effect in het["effects"]:
        assert effect["p_holm"] >= effect["p_value"] and effect["median_difference"] > 0


def test_length_controlled_win_rate_beside_the_raw_one() -> None:
    rng = np.random.default_rng(15)
    world = make_world(120, rng, effect={"accuracy": 2.0})
    records = pairwise_records(world, {"a": JudgeSpec(), "b": JudgeSpec()}, rng)
    prefs = get(analyze(records, items=world.items), "effects.preferences")
    for judge in ("a", "b"):
        lc, raw = prefs["length_controlled"][judge], prefs["judges"][judge]
        assert lc["raw_rate"] == pytest.approx(raw["value"])
        assert lc["ci_low"] <= lc["value"] <= lc["ci_high"]
    assert prefs["panel_length_controlled"]["n"] > 0
