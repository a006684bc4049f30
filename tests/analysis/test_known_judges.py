"""Judges of known quality on every shared LLMBar subset (issue #12).

Three parts:

1. The generator's own properties (``known_judges``): each synthetic judge is what its name says.
   These run now.
2. The trust rules (``jurybox.analysis.trust``) on evidence computed straight from the records:
   each judge gets its deserved level. These run now.
3. The end-to-end validation the issue demands: the report's trust verdict gives each judge the
   level its quality deserves (``verdict.judges.<judge>.level``); rating-derived verdicts are not
   tested for position; a rubric run with no labels and no retest is never trusted.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from jurybox.analysis import analyze_records
from jurybox.analysis.model import Skipped
from jurybox.analysis.trust import assess_panel
from jurybox.records import Item, JudgeRecord, Status
from jurybox.stats import length_preference_given_truth, position_preference_given_truth
from shared_paths import require_shared

from .known_judges import (
    JUDGES,
    ORDERS,
    RIGHT_RATE,
    accuracy,
    gold_arm,
    judge_records,
    load_items,
    longer_arm,
    panel_evidence,
    panel_records,
    shared_subsets,
)
from .synth import JudgeSpec, make_world, rubric_records

pytestmark = pytest.mark.shared_data

SUBSETS = ("FairEval", "MT-Bench", "Natural")  # the shared ones; all are found and checked below


@pytest.fixture(scope="module")
def subsets() -> dict[str, list[Item]]:
    root = require_shared("data/llmbar")
    found = {folder.name: load_items(folder) for folder in shared_subsets(root)}
    assert set(SUBSETS) <= set(found), found.keys()
    return found


# --- 1. the generator ------------------------------------------------------------------------


def test_every_item_is_judged_once_in_each_order(subsets: dict[str, list[Item]]) -> None:
    for items in subsets.values():
        for judge in JUDGES:
            records = judge_records(judge, items)
            assert len(records) == 2 * len(items)
            assert len({r.key for r in records}) == len(records)
            shown = Counter((r.query_id, r.positions["A"]) for r in records)
            assert set(shown.values()) == {1}
            assert {(r.positions["A"], r.positions["B"]) for r in records} == set(ORDERS)


def test_gold_comes_from_the_dataset(subsets: dict[str, list[Item]]) -> None:
    root = require_shared("data/llmbar")
    for name, items in subsets.items():
        entries = json.loads((root / name / "dataset.json").read_text(encoding="utf-8"))
        assert [gold_arm(item) for item in items] == [f"output_{e['label']}" for e in entries]


def test_fixed_judges_have_their_exact_accuracy(subsets: dict[str, list[Item]]) -> None:
    for items in subsets.values():
        assert accuracy(judge_records("always_right", items), items) == 1.0
        assert accuracy(judge_records("always_wrong", items), items) == 0.0
        # First-shown is right in exactly one of the two orders of every item.
        assert accuracy(judge_records("always_first_shown", items), items) == 0.5
        longer_is_gold = np.mean([longer_arm(item) == gold_arm(item) for item in items])
        assert accuracy(judge_records("always_longer", items), items) == longer_is_gold
        silent = judge_records("never_answers", items)
        assert {r.status for r in silent} == {Status.PROVIDER_ERROR}
        assert all(r.preferred_arm is None and not r.parse_success for r in silent)
        assert accuracy(silent, items) == 0.0


def test_random_judges_are_near_their_rate_and_reproducible(
    subsets: dict[str, list[Item]],
) -> None:
    for items in subsets.values():
        n = 2 * len(items)
        for judge, rate in (("right_92", RIGHT_RATE), ("coin_flip", 0.5)):
            observed = accuracy(judge_records(judge, items), items)
            assert abs(observed - rate) <= 4 * np.sqrt(rate * (1 - rate) / n), (judge, observed)
            again = judge_records(judge, items)
            assert [r.preferred_arm for r in again] == [
                r.preferred_arm for r in judge_records(judge, items)
            ]
        other_seed = judge_records("coin_flip", items, seed=99)
        assert [r.preferred_arm for r in other_seed] != [
            r.preferred_arm for r in judge_records("coin_flip", items)
        ]


def test_positions_and_preferences_agree(subsets: dict[str, list[Item]]) -> None:
    items = subsets["Natural"]
    for record in panel_records(items):
        if record.status == Status.OK:
            letter = "A" if record.preferred_arm == record.positions["A"] else "B"
            assert record.preference == letter
            assert record.positions[letter] == record.preferred_arm


def _length_test(judge: str, items: list[Item]) -> Any:
    by_id = {item.id: item for item in items}
    records = judge_records(judge, items)
    picked = [r.preferred_arm == longer_arm(by_id[r.query_id]) for r in records]
    gold = [gold_arm(by_id[r.query_id]) == longer_arm(by_id[r.query_id]) for r in records]
    return length_preference_given_truth(picked, gold)


def _position_test(judge: str, items: list[Item]) -> Any:
    by_id = {item.id: item for item in items}
    records = judge_records(judge, items)
    picked = [r.preferred_arm == r.positions["A"] for r in records]
    gold = [gold_arm(by_id[r.query_id]) == r.positions["A"] for r in records]
    return position_preference_given_truth(picked, gold)


def test_truth_conditioned_bias_tests_read_the_judges_right(
    subsets: dict[str, list[Item]],
) -> None:
    for items in subsets.values():
        # Right every time: no length or position preference beyond the labels, whatever the
        # raw share of longer winners on this subset.
        assert _length_test("always_right", items).difference == 0.0
        assert _position_test("always_right", items).difference == 0.0
        longer = _length_test("always_longer", items)
        assert longer.difference == 1.0 and longer.p_value < 1e-6
        first = _position_test("always_first_shown", items)
        assert first.difference == 1.0 and first.p_value < 1e-6
        assert _position_test("always_longer", items).difference == 0.0
        assert abs(_length_test("right_92", items).difference) < 0.15


# --- 2. the trust rules on evidence built straight from the records (runs now) ---------------


@pytest.mark.parametrize("subset", SUBSETS)
def test_trust_rules_give_each_known_judge_its_level(
    subsets: dict[str, list[Item]], subset: str
) -> None:
    items = subsets[subset]
    panel = assess_panel(panel_evidence(panel_records(items), items))
    levels = {j.judge: j.level for j in panel.judges}
    _assert_levels(levels, items, subset)
    assert panel.line == "1 of 7 judges can be trusted: always_right" or (
        levels["right_92"] == "trusted"
        and panel.line == "2 of 7 judges can be trusted: always_right, right_92"
    )


def _assert_levels(levels: dict[str, str], items: list[Item], subset: str) -> None:
    for judge, never in EXPECTED_NEVER.items():
        assert levels[judge] not in never, (subset, judge, levels)
    assert levels["always_right"] == "trusted"
    longer_right = accuracy(judge_records("always_longer", items), items)
    if longer_right < 0.6:
        assert levels["always_longer"] == "not_trusted", (subset, longer_right, levels)
    assert levels["right_92"] != "not_trusted"


# --- 3. end-to-end: the report's verdict -----------------------------------------------------

EXPECTED_NEVER = {
    "always_right": {"use_with_caution", "not_trusted", "insufficient_evidence"},
    "right_92": {"not_trusted"},
    "always_first_shown": {"trusted", "use_with_caution", "insufficient_evidence"},
    "coin_flip": {"trusted", "use_with_caution", "insufficient_evidence"},
    "always_wrong": {"trusted", "use_with_caution", "insufficient_evidence"},
    "never_answers": {"trusted", "use_with_caution"},
}


# The levels each known judge got before issue 33 (intervals over items, not judgments): the
# wider intervals must not move any of them on the shared subsets.
LEVELS_BEFORE_ISSUE_33 = {
    "always_right": "trusted",
    "right_92": "trusted",
    "always_first_shown": "not_trusted",
    "always_longer": "not_trusted",
    "coin_flip": "not_trusted",
    "always_wrong": "not_trusted",
    "never_answers": "not_trusted",
}


def _level(report: Any, judge: str) -> str:
    """``verdict.judges.<judge>.level`` of a report dict or of the typed report model."""
    data = report.model_dump(mode="json") if hasattr(report, "model_dump") else report
    return str(data["verdict"]["judges"][judge]["level"])


@pytest.mark.parametrize("subset", SUBSETS)
def test_each_known_judge_gets_the_level_its_quality_deserves(
    subsets: dict[str, list[Item]], subset: str
) -> None:
    items = subsets[subset]
    report = analyze_records(panel_records(items), items=items)
    levels = {judge: _level(report, judge) for judge in JUDGES}
    _assert_levels(levels, items, subset)
    assert levels == LEVELS_BEFORE_ISSUE_33  # intervals over items moved no level
    _count_items(report, items)


@pytest.mark.parametrize("subset", SUBSETS)
def test_the_bias_section_flags_length_only_beyond_the_labels(
    subsets: dict[str, list[Item]], subset: str
) -> None:
    """The bias section agrees with the verdict: an always-right judge is never "length bias
    detected" (on LLMBar the gold is often the shorter answer), an always-longer one always is."""
    items = subsets[subset]
    report = analyze_records(panel_records(items), items=items)
    verbosity = report.bias.verbosity
    assert not isinstance(verbosity, Skipped) and verbosity.judges is not None
    flags = {}
    for judge, entry in verbosity.judges.items():
        if entry.preferences is not None and entry.preferences.detected is not None:
            assert entry.preferences.detected_by == "given_truth"
            flags[judge] = entry.preferences.detected
    assert flags["always_longer"] is True
    for judge in ("always_right", "right_92", "coin_flip", "always_wrong"):
        assert flags[judge] is False, judge


def test_rating_derived_verdicts_are_not_tested_for_position(
    subsets: dict[str, list[Item]],
) -> None:
    """Each response scored alone (LLMBar Rating*): no position existed, so none is tested."""
    items = subsets["MT-Bench"]
    records = [
        JudgeRecord.from_dict({**r.to_dict(), "positions_shown": False})
        for r in judge_records("always_first_shown", items)
    ]
    report = analyze_records(records, items=items)
    entry = report.verdict.judges["always_first_shown"]
    assert entry.position is None and entry.swap_consistency is None
    assert not entry.positions_shown
    checks = {c.check: c for c in entry.checks}
    assert checks["position"].status == "skipped"
    assert "never saw both responses together" in checks["position"].message
    first = report.bias.position.judges["always_first_shown"].first_position_rate  # type: ignore[union-attr,index]
    assert isinstance(first, Skipped)
    # Its accuracy is still measured, and at 0.5 it is still not trusted.
    assert entry.accuracy is not None and entry.accuracy.value == 0.5
    assert entry.level == "not_trusted"


@pytest.mark.parametrize("noise", [0.6, 50.0])
def test_a_rubric_run_without_labels_or_retest_is_never_trusted(noise: float) -> None:
    rng = np.random.default_rng(3)
    world = make_world(60, rng)
    records = rubric_records(world, {"solo": JudgeSpec(noise=noise)}, rng)
    entry = analyze_records(records, items=world.items).verdict.judges["solo"]
    assert entry.level in ("use_with_caution", "insufficient_evidence")
    assert entry.accuracy is None and entry.kappa is None
    assert "accuracy untested" in entry.reason


def test_report_evidence_matches_the_reference_built_from_records(
    subsets: dict[str, list[Item]],
) -> None:
    """The report's figures are the ones ``panel_evidence`` computes straight from the records;
    its bias p-values are Holm-adjusted over every judge and test at once, so never smaller."""
    items = subsets["Natural"]
    records = panel_records(items)
    verdict = analyze_records(records, items=items).verdict
    for ref in panel_evidence(records, items):
        got = verdict.judges[ref.judge]
        assert got.failure_rate == pytest.approx(ref.failure_rate)
        assert got.swap_consistency == pytest.approx(ref.swap_consistency)
        assert got.swap_consistency_parsed == pytest.approx(ref.swap_consistency_parsed)
        assert got.accuracy is not None and ref.accuracy is not None
        assert got.accuracy.value == pytest.approx(ref.accuracy.value)
        assert got.accuracy.ci_low == pytest.approx(ref.accuracy.ci_low)
        for kind in ("position", "length"):
            mine, theirs = getattr(got, kind), getattr(ref, kind)
            assert (mine is None) == (theirs is None), (ref.judge, kind)
            if mine is not None:
                # The reference calls output_1 longer on a tie (Natural/13 is one); the report
                # drops equally long pairs from the length test, so effects differ by a hair.
                assert mine.effect == pytest.approx(theirs.effect, abs=0.01)
                assert mine.p_holm >= theirs.p_adjusted - 1e-12
                assert mine.conditioned_on_truth


def _count_items(report: Any, items: list[Item]) -> None:
    """Every accuracy interval the verdict read counts the items, not their judgments."""
    for judge in JUDGES:
        entry = report.verdict.judges[judge]
        if entry.accuracy is not None and entry.failure_rate == 0:
            pooled = report.accuracy_vs_gold.judges[judge].pooled
            assert pooled.n_clusters == len(items) and pooled.n == 2 * len(items)
