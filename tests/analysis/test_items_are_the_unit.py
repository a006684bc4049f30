"""Issue 33 end to end: the report's intervals and tests count items, not judgments; human scores
that are fractional are read on their own scale; bad numbers are named."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox.analysis import analyze_records
from jurybox.records import Item
from jurybox.stats import clustered_proportion, wilson_interval

from .known_judges import ORDERS, judge_record
from .synth import JudgeSpec, make_world, rubric_records


def _pairwise(n_items: int, right_items: int) -> tuple[list[Item], list]:  # type: ignore[type-arg]
    """A judge that picks the gold on the first ``right_items`` items in both orders and the
    other arm in both orders elsewhere."""
    items = [
        Item(
            id=f"q{i:03d}",
            question=f"question {i}",
            responses={"output_1": "a" * (10 + i % 7), "output_2": "b" * (12 + i % 5)},
            human={"preferred_arm": "output_1" if i % 2 else "output_2"},
        )
        for i in range(n_items)
    ]
    records = []
    for index, item in enumerate(items):
        gold = str(item.human["preferred_arm"])
        other = "output_2" if gold == "output_1" else "output_1"
        winner = gold if index < right_items else other
        records += [judge_record("judge", item, shown, winner) for shown in ORDERS]
    return items, records


def test_accuracy_interval_is_the_per_item_one() -> None:
    """100 items, right on 75 in both orders: the verdict reads 75 of 100 items (lower bound
    about 0.66), not 150 of 200 judgments (0.69)."""
    items, records = _pairwise(100, 75)
    verdict = analyze_records(records, items=items).verdict.judges["judge"]
    assert verdict.accuracy is not None and verdict.accuracy.value == pytest.approx(0.75)
    per_item = clustered_proportion(np.repeat([1.0] * 75 + [0.0] * 25, 2), np.repeat(range(100), 2))
    assert verdict.accuracy.ci_low == pytest.approx(per_item.ci_low)
    assert verdict.accuracy.ci_low == pytest.approx(0.66, abs=0.005)
    assert wilson_interval(150, 200).ci_low == pytest.approx(0.69, abs=0.005)
    assert verdict.accuracy.ci_low < 0.665
    # the swap interval counts items too; every pair is consistent here
    assert verdict.swap_consistency == 1.0 and verdict.swap_consistency_interval is not None
    report = analyze_records(records, items=items)
    pooled = report.accuracy_vs_gold.judges["judge"].pooled  # type: ignore[index]
    assert (pooled.n, pooled.n_clusters, pooled.design_effect) == (200, 100, 2.0)


def _scored(human_step: float) -> tuple[list[Item], list]:  # type: ignore[type-arg]
    """A rubric judge close to human total scores that are multiples of ``human_step``."""
    rng = np.random.default_rng(5)
    world = make_world(40, rng, human=True)
    records = rubric_records(world, {"judge": JudgeSpec(noise=0.3)}, rng)
    items = []
    for item in world.items:
        scores = {
            arm: {"total": round(float(np.mean(list(dims.values()))) / human_step) * human_step}
            for arm, dims in (item.human or {}).get("scores", {}).items()
        }
        items.append(Item(id=item.id, question=item.question, responses=item.responses,
                          human={"scores": scores}))  # fmt: skip
    return items, records


def test_fractional_human_scores_are_read_through_the_icc() -> None:
    """Human totals in halves: kappa is undefined (a reason, never a rank-of-values weighting),
    and the verdict's agreement check reads the ICC(2,1) of the total instead of skipping."""
    items, records = _scored(0.5)
    report = analyze_records(records, items=items)
    scores = report.human_calibration.scores
    entry = scores.judges["judge"]  # type: ignore[union-attr,index]
    total = entry.dimensions["total"]
    assert total.value is None and total.continuous
    assert "fractional" in (total.reason or "") and total.weighted_quadratic is not None
    assert total.weighted_quadratic.value is None
    assert entry.total_icc is not None and entry.total_icc.value is not None
    verdict = report.verdict.judges["judge"]
    assert verdict.kappa_is_icc and verdict.kappa is not None
    assert verdict.kappa.value == pytest.approx(entry.total_icc.value)
    check = next(c for c in verdict.checks if c.check == "kappa")
    assert check.status != "skipped" and "ICC(2,1)" in check.message


def test_whole_human_scores_keep_kappa_with_a_bootstrap_over_items() -> None:
    items, records = _scored(1.0)
    entry = analyze_records(records, items=items).human_calibration.scores.judges["judge"]  # type: ignore[union-attr,index]
    quadratic = entry.dimensions["total"].weighted_quadratic
    assert quadratic is not None and quadratic.value is not None
    assert quadratic.n_clusters == 40 and "bootstrap over items" in (quadratic.method or "")


def test_length_on_scores_counts_each_item_once() -> None:
    """The verdict's length test on scores takes one value per item: with two responses per
    item, the difference between them. Long items that every response scores high on (the
    item, not the length, drives the score) are no length bias within items; per response
    they looked like one, with twice the values."""
    import pandas as pd

    from jurybox import stats
    from jurybox.analysis.evidence import _per_item

    rng = np.random.default_rng(8)
    items = 60
    item_length = rng.normal(size=items) * 200 + 1000
    rows = []
    for i in range(items):
        for arm in ("control", "treatment"):
            length = item_length[i] + rng.normal() * 20
            for order in (0, 1):  # both orders: one judgment each
                score = 5 + item_length[i] / 200 + rng.normal()
                rows.append((f"q{i:02d}", arm, order, length, score))
    frame = pd.DataFrame(rows, columns=["query_id", "arm", "order", "length", "score"])
    length, score = _per_item(frame, ["length", "score"])
    assert len(length) == items
    first = frame[(frame["query_id"] == "q00")].groupby("arm")[["length", "score"]].mean()
    assert length[0] == pytest.approx(
        first.loc["control", "length"] - first.loc["treatment", "length"]
    )
    assert stats.spearman(length, score).p_value > 0.05
    per_response = frame.groupby(["query_id", "arm"])[["length", "score"]].mean()
    assert stats.spearman(per_response["length"], per_response["score"]).p_value < 1e-6
