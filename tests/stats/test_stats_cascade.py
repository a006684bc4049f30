"""Trust or Escalate calibration: thresholds by fixed-sequence testing, routing, the outcome, and
the guarantee by simulation (LLMBar splits: bench/cascade_replay.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats.cascade import (
    calibrate_cascade,
    calibrate_stage,
    cascade_outcome,
    route,
)


def _levels(*blocks: tuple[float, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, items, disagreements) blocks -> confidence and agree arrays."""
    conf, agree = [], []
    for level, n, wrong in blocks:
        conf += [level] * n
        agree += [False] * wrong + [True] * (n - wrong)
    return np.array(conf), np.array(agree)


def test_stage_threshold_is_the_lowest_level_the_binomial_test_reaches() -> None:
    # 20 items at 0.9 all right, 10 at 0.8 with 2 wrong, 10 at 0.5 with 5 wrong.
    conf, agree = _levels((0.9, 20, 0), (0.8, 10, 2), (0.5, 10, 5))
    stage = calibrate_stage(conf, agree, target=0.8, delta=0.1, min_selected=1)
    # Hand check with scipy: P(Bin(20, .2) ≤ 0) = 0.0115, P(Bin(30, .2) ≤ 2) = 0.0442 (both
    # ≤ 0.1: rejected), P(Bin(40, .2) ≤ 7) = 0.41 (not): the walk stops at 0.8.
    assert sps.binom.cdf(2, 30, 0.2) == pytest.approx(0.04418, abs=1e-4)
    assert sps.binom.cdf(7, 40, 0.2) > 0.1
    assert stage.threshold == 0.8
    assert (stage.n_reaching, stage.n_selected, stage.n_disagree, stage.n_tested) == (40, 30, 2, 3)
    # The bound is the one-sided 90 % Clopper–Pearson upper bound (statsmodels' two-sided 80 %).
    assert stage.risk_bound == pytest.approx(proportion_confint(2, 30, 0.2, "beta")[1])
    assert stage.risk_bound <= 0.2
    np.testing.assert_array_equal(stage.decides([0.95, 0.8, 0.79, np.nan]), [1, 1, 0, 0])


def test_fixed_sequence_stops_at_the_first_level_it_cannot_reject() -> None:
    # The top level fails (2 errors in 20); the lower one would pass on its own, but a fixed
    # sequence may not skip ahead (that would spend δ twice).
    conf, agree = _levels((0.99, 20, 2), (0.9, 300, 4))
    assert calibrate_stage(conf[20:], agree[20:], target=0.9, delta=0.1).threshold == 0.9
    stage = calibrate_stage(conf, agree, target=0.9, delta=0.1, min_selected=1)
    assert not stage.decides_any and math.isinf(stage.threshold)
    assert stage.n_selected == 0 and math.isnan(stage.risk_bound) and stage.n_tested == 1
    assert not stage.decides([1.0]).any()


def test_thresholds_selecting_too_few_items_are_not_tested() -> None:
    # Three items alone at the top could never pass and would end the walk before it starts.
    conf, agree = _levels((0.99, 3, 0), (0.9, 200, 4))
    assert not calibrate_stage(conf, agree, target=0.9, delta=0.1, min_selected=1).decides_any
    stage = calibrate_stage(conf, agree, target=0.9, delta=0.1)  # min_selected 30
    assert stage.threshold == 0.9 and stage.n_selected == 203 and stage.n_tested == 1


def test_items_without_a_verdict_are_never_selected() -> None:
    conf = np.array([1.0] * 30 + [np.nan] * 30)
    agree = np.array([True] * 30 + [False] * 30)
    stage = calibrate_stage(conf, agree, target=0.9, delta=0.1)
    assert stage.threshold == 1.0 and stage.n_selected == 30 and stage.n_reaching == 60


def test_cascade_calibrates_each_judge_on_what_the_earlier_ones_left() -> None:
    cheap_conf, cheap_agree = _levels((1.0, 60, 1), (0.5, 40, 20))
    strong_conf = np.r_[np.full(60, 0.5), np.full(40, 1.0)]
    strong_agree = np.r_[np.zeros(60, bool), np.ones(40, bool)]
    conf, agree = np.vstack([cheap_conf, strong_conf]), np.vstack([cheap_agree, strong_agree])
    calib = calibrate_cascade(conf, agree, target=0.9, delta=0.1)
    assert calib.thresholds == (1.0, 1.0)
    cheap, strong = calib.stages
    assert cheap.delta == pytest.approx(0.05) and strong.delta == pytest.approx(0.05)
    # The strong judge saw only the 40 items the cheap one left, where it is always right.
    assert (strong.n_reaching, strong.n_selected, strong.n_disagree) == (40, 40, 0)
    np.testing.assert_array_equal(calib.route(conf), np.r_[np.zeros(60), np.ones(40)])
    whole = calibrate_cascade(conf, agree, target=0.9, delta=0.1, split_delta=False)
    assert whole.stages[0].delta == pytest.approx(0.1) and "δ per judge" in whole.method


def test_a_stage_that_nothing_reaches_decides_nothing() -> None:
    conf = np.vstack([np.ones(50), np.ones(50)])
    calib = calibrate_cascade(conf, np.ones((2, 50), bool), target=0.9, delta=0.1)
    assert calib.stages[0].threshold == 1.0
    assert calib.stages[1].n_reaching == 0 and not calib.stages[1].decides_any


def test_route_takes_the_first_judge_that_is_confident_enough() -> None:
    conf = np.array([[0.9, 0.2, np.nan, 0.2], [0.1, 0.8, 0.9, 0.1]])
    np.testing.assert_array_equal(route([0.5, 0.7], conf), [0, 1, 1, -1])
    np.testing.assert_array_equal(route([math.inf, 0.7], conf), [-1, 1, 1, -1])
    with pytest.raises(ValueError, match="2 rows"):
        route([0.5, 0.5], conf[:1])


def test_outcome_counts_agreement_shares_and_the_cost_of_every_judge_called() -> None:
    decided_by = np.array([0, 0, 1, -1, 1])
    agree = np.array([[1, 0, 0, 0, 0], [0, 0, 1, 1, 0]], bool)
    cost = np.array([[1.0] * 5, [10.0] * 5])
    out = cascade_outcome(decided_by, agree, cost)
    assert out.n_decided == 4 and out.agreement == pytest.approx(2 / 4)
    low, high = proportion_confint(2, 4, 0.05, "beta")
    assert (out.ci_low, out.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert out.decided_share == (0.4, 0.4) and out.nobody_share == pytest.approx(0.2)
    # Cheap on all 5 items; strong on the 3 the cheap one left (the undecided one included).
    assert out.cost == 5 + 30 and out.cost_strongest == 50
    assert out.cost_ratio == pytest.approx(35 / 50)
    nobody = cascade_outcome(np.array([-1, -1]), np.zeros((2, 2), bool), np.ones((2, 2)))
    assert math.isnan(nobody.agreement) and nobody.nobody_share == 1.0 and nobody.cost == 4


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: calibrate_stage([0.5], [True, False], target=0.9, delta=0.1), "same shape"),
        (lambda: calibrate_stage([], [], target=0.9, delta=0.1), "no calibration items"),
        (lambda: calibrate_stage([0.5], [2], target=0.9, delta=0.1), "booleans or 0/1"),
        (lambda: calibrate_stage([np.inf], [1], target=0.9, delta=0.1), "finite"),
        (lambda: calibrate_stage([0.5], [1], target=1.0, delta=0.1), "target"),
        (lambda: calibrate_stage([0.5], [1], target=0.9, delta=0.0), "delta"),
        (lambda: calibrate_stage([0.5], [1], target=0.9, delta=0.1, min_selected=0), "min_sel"),
        (lambda: calibrate_cascade([0.5], [1], target=0.9, delta=0.1), "judges × items"),
        (lambda: cascade_outcome([0], [[1]], [[1, 2]]), "judges × items"),
        (lambda: cascade_outcome([2], [[1]], [[1]]), "decided_by must lie"),
        (lambda: cascade_outcome([], np.zeros((1, 0)), np.zeros((1, 0))), "no items"),
    ],
)
def test_bad_input_raises(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_one_judge_guarantee_holds_by_simulation() -> None:
    # Confidence c ~ U(0, 1) and P(agree | c) = 0.5 + 0.5 c, so the disagreement of the items at
    # or above λ is 0.25 (1 − λ): ≤ 0.1 (target 0.9) exactly when λ ≥ 0.6.
    rng = np.random.default_rng(7)
    runs, failures, decided = 2000, 0, 0
    for _ in range(runs):
        conf = rng.random(300)
        agree = rng.random(300) < 0.5 + 0.5 * conf
        stage = calibrate_stage(conf, agree, target=0.9, delta=0.1)
        failures += stage.threshold < 0.6
        decided += stage.decides_any
    # δ = 0.1; 2,000 runs put a true 0.1 above 0.12 with probability < 0.1 %.
    assert failures / runs <= 0.12
    assert decided / runs > 0.4  # not met by deciding nothing: about half the runs decide


def test_two_judge_cascade_guarantee_holds_with_correlated_difficulty() -> None:
    # Items have a difficulty both judges feel; the strong judge is better. The cascade's true
    # disagreement is measured on a large population routed by each calibration's thresholds.
    rng = np.random.default_rng(11)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        ease = rng.random(n)
        conf = np.vstack([np.clip(ease + rng.normal(0, s, n), 0, 1) for s in (0.3, 0.15)])
        skill = np.array([[0.55], [0.65]])
        agree = rng.random((2, n)) < skill + (1 - skill) * (0.4 * ease + 0.6 * conf)
        return np.round(conf, 2), agree

    pop_conf, pop_agree = draw(50_000)
    runs, failures = 400, 0
    for _ in range(runs):
        calib = calibrate_cascade(*draw(400), target=0.85, delta=0.1)
        who = calib.route(pop_conf)
        decided = who >= 0
        if decided.any():
            hits = pop_agree[who[decided], np.flatnonzero(decided)]
            failures += hits.mean() < 0.85
    # δ = 0.1: 400 runs put a true 0.1 above 0.14 with probability < 1 %.
    assert failures / runs <= 0.14


def test_agreement_interval_covers_the_true_agreement() -> None:
    # 1,000 test splits whose decided items agree with probability 0.85: the two-sided 95 %
    # Clopper–Pearson interval is exact-conservative, so it covers at least 95 % of the time.
    rng = np.random.default_rng(13)
    covered = 0
    for _ in range(1000):
        n = int(rng.integers(20, 200))
        agree = (rng.random((1, n)) < 0.85).astype(bool)
        out = cascade_outcome(np.zeros(n, dtype=np.intp), agree, np.ones((1, n)))
        covered += out.ci_low <= 0.85 <= out.ci_high
    assert covered / 1000 >= 0.94  # SE 0.007: a 0.95 interval falls below 0.94 by chance < 10 %
