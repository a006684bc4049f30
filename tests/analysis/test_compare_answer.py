"""The answer of ``jurybox compare``: better / worse / no evidence per judge, on the headline
figure's paired test (Holm over the judges), and what changed between the two configs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from jurybox.analysis import build_frame
from jurybox.analysis.compare import CompareOptions, RunInput, compare_runs
from jurybox.analysis.compare_answer import config_changes
from jurybox.analysis.model.compare import ConfigChange, Headline
from jurybox.records import Item, JudgeRecord, Status

from .test_compare import GOLD, _pairwise, _pairwise_run, _run, _scored

OPTIONS = CompareOptions(n_bootstrap=100)


def _headlines(a: RunInput, b: RunInput) -> dict[str, Headline]:
    headlines = compare_runs([a, b], OPTIONS).comparisons[0].headlines or []
    return {headline.judge_a: headline for headline in headlines}


def test_a_planted_gain_is_better_and_a_loss_worse() -> None:
    low = _run("A", _pairwise_run("j", 20), human=GOLD)
    high = _run("B", _pairwise_run("j", 32), human=GOLD)
    better = _headlines(low, high)["j"]
    assert (better.answer, better.measure) == ("better", "accuracy")
    assert (better.value_a, better.value_b, better.n_items) == (0.5, 0.8, 40)
    assert better.difference == pytest.approx(0.3)
    # the sign test over the 12 items that moved (not the 24 judgments: p 2 · 0.5^24)
    assert better.p_value == better.p_adjusted == pytest.approx(2 * 0.5**12)
    assert better.trust_a is not None and better.trust_b is not None
    worse = _headlines(high, low)["j"]
    assert worse.answer == "worse" and worse.difference == pytest.approx(-0.3)


def _flipped(judge: str, right_in_b: int, wrong_in_b: int) -> tuple[list[JudgeRecord], ...]:
    """A judge right on q00-q19 in A; in B, ``right_in_b`` more items right (q20 on) and
    ``wrong_in_b`` items it had right now wrong (q00 on), in both orders."""
    a = _pairwise_run(judge, 20)
    b = [
        _pairwise(
            judge,
            record.query_id,
            record.presentation_order,
            _b_winner(int(record.query_id[1:]), right_in_b, wrong_in_b),
        )
        for record in a
    ]
    return a, b


def _b_winner(index: int, right_in_b: int, wrong_in_b: int) -> str:
    right = wrong_in_b <= index < 20 or 20 <= index < 20 + right_in_b
    return "control" if right else "treatment"  # gold is control everywhere


def test_holm_over_the_judges_turns_a_lone_small_p_into_no_evidence() -> None:
    # y: 6 items (12 judgments) right only in B, exact sign test over items p = 2 / 2^6 =
    # 0.031 alone; z: 6 items gained and 6 lost, p = 1. Holm over both: 0.0625, not below 0.05.
    y_a, y_b = _flipped("y", 6, 0)
    z_a, z_b = _flipped("z", 6, 6)
    alone = _headlines(_run("A", y_a, human=GOLD), _run("B", y_b, human=GOLD))["y"]
    assert alone.answer == "better" and alone.p_value == pytest.approx(2 / 2**6)
    both = _headlines(_run("A", y_a + z_a, human=GOLD), _run("B", y_b + z_b, human=GOLD))
    assert both["y"].p_adjusted == pytest.approx(2 * 2 / 2**6)
    assert both["y"].n_tested == 2
    assert (both["y"].answer, both["z"].answer) == ("no evidence", "no evidence")


def test_without_labels_there_is_no_evidence_and_the_reason_says_why() -> None:
    headline = _headlines(_run("A", _pairwise_run("j", 20)), _run("B", _pairwise_run("j", 32)))
    assert headline["j"].answer == "no evidence"
    assert headline["j"].measure is None
    assert "no gold or human label" in (headline["j"].reason or "")


def test_a_scoring_judge_is_better_when_its_scores_come_closer_to_the_humans() -> None:
    items = [Item(f"i{i:02d}", f"question {i}", {"only": "x"}) for i in range(12)]
    human = {item.id: {"overall": {"only": 7.0}} for item in items}
    far = [_scored("j", item, {"quality": 3.0 + (i % 3) * 0.1}) for i, item in enumerate(items)]
    near = [_scored("j", item, {"quality": 6.5 + (i % 4) * 0.2}) for i, item in enumerate(items)]
    a = _run("A", far, items=items, human=human)
    b = _run("B", near, items=items, human=human)
    headline = _headlines(a, b)["j"]
    assert (headline.answer, headline.measure, headline.n_units) == ("better", "score error", 12)
    assert headline.n_items == 12
    assert headline.value_a == pytest.approx(3.9) and headline.value_b == pytest.approx(0.25)
    assert headline.difference == pytest.approx(-3.65)
    assert headline.test is not None and "paired t" in headline.test
    assert _headlines(b, a)["j"].answer == "worse"


def test_the_score_error_change_counts_items_not_their_responses() -> None:
    """Two responses per item with the same error: the paired t over 12 items, not over the 24
    responses as if independent (whose interval would be narrower by about sqrt(2))."""
    arms = ("left", "right")
    items = [Item(f"i{i:02d}", f"question {i}", dict.fromkeys(arms, "x")) for i in range(12)]
    human = {item.id: {"overall": dict.fromkeys(arms, 7.0)} for item in items}

    def scored(base: float, step: float, per_arm: tuple[str, ...]) -> list[JudgeRecord]:
        return [
            _scored("j", item, {"quality": base + (i % 4) * step}, arm=arm)
            for i, item in enumerate(items)
            for arm in per_arm
        ]

    def headline(arms_scored: tuple[str, ...]) -> Headline:
        a = _run("A", scored(5.0, 0.3, arms_scored), items=items, human=human)
        b = _run("B", scored(6.0, 0.1, arms_scored), items=items, human=human)
        return _headlines(a, b)["j"]

    two, one = headline(arms), headline(arms[:1])
    assert (two.n_units, two.n_items, one.n_units, one.n_items) == (24, 12, 12, 12)
    assert two.difference == pytest.approx(one.difference)
    assert (two.ci_low, two.ci_high) == pytest.approx((one.ci_low, one.ci_high))
    assert two.p_value == pytest.approx(one.p_value)


def _manifest(**task: Any) -> dict[str, Any]:
    config = {
        "judges": {"j": {"provider": "openai", "model": "m-1", "temperature": 0.0}},
        "task": {"mode": "pairwise", **task},
        "paths": {"dataset": "items.jsonl", "output_dir": "results/x"},
    }
    return {"config": config}


def test_config_changes_list_settings_and_diff_the_own_prompt() -> None:
    a = _manifest()
    b = _manifest(instructions="rules.md")
    b["config"]["judges"]["j"]["model"] = "m-2"
    b["config"]["paths"]["output_dir"] = "results/y"
    b["prompt"] = {"instructions": "Prefer the right number.\nThen the shorter.\n"}
    changes, why = config_changes(a, b)
    assert why is None
    assert [change.setting for change in changes] == ["task.instructions", "judges.j.model"]
    assert changes[0].value_a is None and changes[0].value_b == "text, 2 lines"
    assert changes[0].diff is not None and "+Prefer the right number." in changes[0].diff
    assert changes[1] == ConfigChange(setting="judges.j.model", value_a='"m-1"', value_b='"m-2"')
    template = {"system": {"path": "s", "text": "Judge.\n"}, "user": {"path": "u", "text": "x"}}
    edited = {**template, "user": {"path": "u", "text": "y"}}
    with_a = {**a, "prompt": {"instructions": None, "template": template}}
    with_b = {**a, "prompt": {"instructions": None, "template": edited}}
    changes, _ = config_changes(with_a, with_b)
    assert [change.setting for change in changes] == ["task.template.user"]
    assert config_changes(a, a) == ([], None)
    assert config_changes(a, None)[1] is not None  # an import keeps no config


def test_an_import_without_manifest_says_so() -> None:
    a = _run("A", _pairwise_run("j", 20), human=GOLD)
    b = dataclasses.replace(_run("B", _pairwise_run("j", 30), human=GOLD), manifest=_manifest())
    comparison = compare_runs([a, b], OPTIONS).comparisons[0]
    assert comparison.config_changes is None
    assert "manifest.json" in (comparison.config_skipped or "")


def test_failed_records_do_not_count_as_verdicts() -> None:
    records = _pairwise_run("j", 20)
    failed = [
        dataclasses.replace(r, status=Status.PROVIDER_ERROR, preferred_arm=None) for r in records
    ]
    headline = _headlines(_run("A", records, human=GOLD), _run("B", failed, human=GOLD))["j"]
    assert headline.answer == "no evidence"
    assert build_frame(failed).ok.empty
