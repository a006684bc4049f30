"""``jurybox.optimize.search``: the successive-halving plan under a budget, the cuts, the final
choice (sign test, then the simpler prompt) and the interval on items."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox.optimize.search import (
    Budget,
    Rung,
    item_interval,
    items_judged,
    plan_search,
    run_search,
    rungs_for,
    sign_test,
    survivors,
)
from jurybox.stats import wilson_interval


def test_survivors_halve_until_at_most_eta_are_left() -> None:
    assert survivors(7, 2) == [7, 4, 2]
    assert survivors(2, 2) == [2]
    assert survivors(1, 2) == [1]
    assert survivors(30, 3) == [30, 10, 4, 2]


def test_rungs_stop_once_the_whole_dev_split_is_reached() -> None:
    assert rungs_for(7, 48, 12, 2) == (Rung(0, 7, 12), Rung(1, 4, 24), Rung(2, 2, 48))
    assert rungs_for(7, 48, 24, 2) == (Rung(0, 7, 24), Rung(1, 4, 48))
    # a survivor keeps its judgments: 7 x 12, 4 more x 12, 2 more x 24
    assert items_judged(rungs_for(7, 48, 12, 2)) == 7 * 12 + 4 * 12 + 2 * 24


def test_the_plan_is_the_largest_start_the_budget_pays_for() -> None:
    plan = plan_search(
        7, 48, calls_per_item=2, usd_per_item=None, budget=Budget(calls=504), min_items=10
    )
    # 7 x 22 + 4 x 22 + 2 x 4 = 250 pairs = 500 calls; a start of 23 would need 514
    assert plan.rungs == (Rung(0, 7, 22), Rung(1, 4, 44), Rung(2, 2, 48))
    assert plan.calls == 500
    bigger = rungs_for(7, 48, 23, 2)
    assert 2 * items_judged(bigger) > 504


def test_without_a_budget_every_candidate_judges_every_dev_item() -> None:
    plan = plan_search(9, 40, calls_per_item=2, usd_per_item=0.01, budget=Budget())
    assert plan.rungs == (Rung(0, 9, 40),)
    assert plan.calls == 9 * 40 * 2 and plan.usd == pytest.approx(9 * 40 * 0.01)


def test_a_budget_in_dollars_bounds_the_plan_and_needs_prices() -> None:
    plan = plan_search(4, 100, calls_per_item=2, usd_per_item=0.01, budget=Budget(usd=2.0))
    assert plan.usd is not None and plan.usd <= 2.0
    with pytest.raises(ValueError, match="does not cover"):
        plan_search(4, 100, calls_per_item=2, usd_per_item=None, budget=Budget(usd=2.0))


def test_a_budget_too_small_for_the_first_rung_is_refused_with_what_it_needs() -> None:
    with pytest.raises(ValueError, match=r"7 candidates on 10 dev items first need 300 calls"):
        plan_search(7, 48, calls_per_item=2, usd_per_item=None, budget=Budget(calls=100))


def _search(scores: np.ndarray, complexity: list[tuple[int, int]], budget: Budget):  # type: ignore[no-untyped-def]
    plan = plan_search(
        len(scores), scores.shape[1], calls_per_item=1, usd_per_item=None, budget=budget,
        min_items=4,
    )  # fmt: skip
    asked: list[tuple[int, int]] = []

    def item_scores(candidate: int, n: int) -> np.ndarray:
        asked.append((candidate, n))
        return scores[candidate, :n]

    return run_search(plan, item_scores, complexity), asked


def test_halving_drops_the_worst_and_keeps_judging_the_best() -> None:
    rng = np.random.default_rng(3)
    scores = (rng.random((8, 64)) < np.linspace(0.2, 0.7, 8)[:, None]).astype(float)
    scores[7] = 1.0  # the last, most complex candidate is right everywhere
    result, asked = _search(scores, [(0, i) for i in range(8)], Budget(calls=200))
    assert [r.candidates for r in result.plan.rungs] == [8, 4, 2]
    assert result.choice.winner == 7
    assert (7, result.plan.rungs[-1].items) in asked
    first_rung = {c for c, n in asked if n == result.plan.rungs[0].items}
    assert first_rung == set(range(8))
    last_rung = {c for c, n in asked if n == result.plan.rungs[-1].items}
    assert len(last_rung) == 2


def test_a_tie_goes_to_the_simpler_prompt_and_a_clear_lead_does_not() -> None:
    scores = np.ones((2, 40))
    scores[0, :3] = 0.0  # candidate 0 (complex) right on 40 items, 1 (simple) on 37
    scores[1, 3:6] = 0.0
    scores[0, 3:6] = 1.0
    scores[1, :3] = 1.0
    scores[1, 6:9] = 0.0  # the simple one: wrong on 3 more
    complexity = [(4, 900), (0, 120)]
    result, _ = _search(scores, complexity, Budget())
    assert result.choice.leader == 0
    assert result.choice.p_values[1] == pytest.approx(sign_test(scores[0], scores[1]))
    assert result.choice.p_values[1] >= 0.05  # 6 items better, 3 worse: no evidence
    assert result.choice.winner == 1 and result.choice.tied == (1, 0)
    scores[1, 10:25] = 0.0  # now the simple one is wrong on 15 more items: a real difference
    result, _ = _search(scores, complexity, Budget())
    assert result.choice.p_values[1] < 0.05
    assert result.choice.winner == 0 and result.choice.tied == (0,)


def test_the_sign_test_counts_only_items_where_the_two_differ() -> None:
    same = np.array([1.0, 0.5, 0.0])
    assert sign_test(same, same) == 1.0
    better = np.array([1.0] * 10 + [0.5] * 5)
    worse = np.array([0.0] * 10 + [0.5] * 5)
    assert sign_test(better, worse) == pytest.approx(2 * 0.5**10)


def test_the_item_interval_is_wilson_on_items_for_right_or_wrong_items() -> None:
    scores = [1.0] * 30 + [0.0] * 10
    found = item_interval(scores)
    wilson = wilson_interval(30, 40)
    assert found.estimate == 0.75 and found.n == 40
    assert found.ci_low == pytest.approx(wilson.ci_low, abs=0.02)
    assert found.ci_high == pytest.approx(wilson.ci_high, abs=0.02)
    assert "effective number of items" in found.method


def test_half_right_items_carry_less_variance_than_a_coin_per_item() -> None:
    halves = item_interval([0.5] * 20 + [1.0] * 20)  # mean 0.75, every item at least half right
    coins = item_interval([0.0] * 10 + [1.0] * 30)  # mean 0.75 too
    assert halves.estimate == coins.estimate == 0.75
    assert halves.ci_high - halves.ci_low < coins.ci_high - coins.ci_low


def test_the_item_interval_covers_at_its_level() -> None:
    """Monte-Carlo: items right in both orders or one, p = 0.8, 60 items, 600 samples."""
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(600):
        both = rng.random(60) < 0.5
        shared = (rng.random(60) < 0.8).astype(float)
        one, two = rng.random(60) < 0.8, rng.random(60) < 0.8
        scores = np.where(both, shared, (one.astype(float) + two) / 2)
        found = item_interval(scores)
        covered += found.ci_low <= 0.8 <= found.ci_high
    assert 0.92 <= covered / 600 <= 0.98
