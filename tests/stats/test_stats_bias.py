"""Truth-conditioned bias tests: golden values by hand, library cross-checks, interval coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import special, stats

from jurybox.stats import (
    conditional_preference,
    holm,
    length_logit,
    length_preference_given_truth,
    position_preference_given_truth,
)


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson's score interval written out (Wilson 1927), independent of statsmodels."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def verdicts(toward: int, n_without: int, away: int, n_with: int) -> tuple[list[int], list[int]]:
    """picked/gold arrays with the given error counts on each side."""
    gold = [0] * n_without + [1] * n_with
    picked = [1] * toward + [0] * (n_without - toward) + [0] * away + [1] * (n_with - away)
    return picked, gold


def test_always_right_judge_shows_no_length_preference() -> None:
    # An accurate judge on data whose gold is mostly the shorter: a raw "longer wins" rate of
    # 0.2 would read as a bias against length; conditioned on the truth there is none.
    gold_longer = [1] * 20 + [0] * 80
    result = length_preference_given_truth(gold_longer, gold_longer)
    assert (result.rate_toward, result.rate_away, result.difference) == (0.0, 0.0, 0.0)
    assert result.p_value == 1.0 and result.ci_low < 0 < result.ci_high


def test_always_longer_judge_is_all_toward_length() -> None:
    gold_longer = np.array([1] * 30 + [0] * 70)
    result = length_preference_given_truth(np.ones(100, dtype=bool), gold_longer)
    assert result.rate_toward == 1.0 and result.rate_away == 0.0 and result.difference == 1.0
    assert (result.errors_toward, result.n_gold_without) == (70, 70)
    assert (result.errors_away, result.n_gold_with) == (0, 30)
    assert result.p_value < 1e-20 and result.ci_low > 0.8


def test_fisher_p_value_by_hand() -> None:
    # [[3, 0], [0, 3]]: P(table) = 1 / C(6, 3) = 1/20; the only table as extreme on the other
    # side is [[0, 3], [3, 0]], so the two-sided p is 2/20.
    picked, gold = verdicts(3, 3, 0, 3)
    result = conditional_preference(picked, gold)
    assert result.p_value == pytest.approx(0.1)
    assert result.difference == 1.0


def test_newcombe_interval_matches_the_formula() -> None:
    picked, gold = verdicts(12, 40, 5, 50)
    result = position_preference_given_truth(picked, gold, confidence=0.9)
    z = stats.norm.ppf(0.95)
    p1, p2 = 12 / 40, 5 / 50
    l1, u1 = wilson(12, 40, z)
    l2, u2 = wilson(5, 50, z)
    low = (p1 - p2) - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = (p1 - p2) + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    assert result.difference == pytest.approx(p1 - p2)
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), rel=1e-9)
    table = [[12, 28], [5, 45]]
    assert result.p_value == pytest.approx(stats.fisher_exact(table).pvalue)
    assert result.confidence == 0.9 and "Newcombe" in result.method


@pytest.mark.parametrize(
    ("picked", "gold", "message"),
    [
        ([], [], "empty"),
        ([1, 0], [1, 0, 1], "same length"),
        ([1, 2], [1, 0], "0/1"),
        ([1, 0, 1], [1, 1, 1], "lack it"),
        ([1, None], [1, 0], "missing"),
    ],
)
def test_conditional_preference_refuses_bad_input(
    picked: list[object], gold: list[object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        conditional_preference(picked, gold)


def test_newcombe_interval_covers_at_its_level() -> None:
    rng = np.random.default_rng(20261123)
    n_without, n_with, p_toward, p_away = 60, 45, 0.3, 0.15
    gold = np.array([0] * n_without + [1] * n_with, dtype=bool)
    covered = 0
    reps = 800
    for _ in range(reps):
        errors = np.where(gold, rng.random(gold.size) < p_away, rng.random(gold.size) < p_toward)
        picked = np.where(gold, ~errors, errors)
        result = conditional_preference(picked, gold)
        covered += result.ci_low <= p_toward - p_away <= result.ci_high
    assert 0.93 <= covered / reps <= 0.985


def test_fisher_test_holds_its_size_under_no_bias() -> None:
    rng = np.random.default_rng(7)
    gold = np.array([0] * 50 + [1] * 50, dtype=bool)
    reps, rejected = 400, 0
    for _ in range(reps):
        errors = rng.random(gold.size) < 0.25  # the same error rate on both sides
        picked = np.where(gold, ~errors, errors)
        rejected += conditional_preference(picked, gold).p_value < 0.05
    assert rejected / reps <= 0.06  # exact conditional test: at most the nominal size


def simulate_logit(
    rng: np.random.Generator, n: int, b_gold: float, b_len: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gold = rng.random(n) < 0.5
    ratio = rng.normal(0.0, 0.7, n)
    p = special.expit(-b_gold / 2 + b_gold * gold + b_len * ratio)
    return rng.random(n) < p, gold, ratio


def test_length_logit_matches_a_binomial_glm() -> None:
    picked, gold, ratio = simulate_logit(np.random.default_rng(3), 300, 2.0, 0.8)
    result = length_logit(picked, gold, ratio)
    design = np.column_stack([np.ones(300), gold.astype(float), ratio])
    glm = sm.GLM(picked.astype(float), design, family=sm.families.Binomial()).fit()
    assert result.coefficient == pytest.approx(glm.params[2], rel=1e-6)
    assert result.gold_coefficient == pytest.approx(glm.params[1], rel=1e-6)
    assert (result.ci_low, result.ci_high) == pytest.approx(tuple(glm.conf_int()[2]), rel=1e-5)
    assert result.p_value == pytest.approx(glm.pvalues[2], rel=1e-5)
    assert result.odds_ratio == pytest.approx(math.exp(result.coefficient))
    assert result.n == 300 and result.ci_low > 0


def test_length_logit_of_a_two_point_design_by_hand() -> None:
    # Four cells (gold, ratio) -> picked k of n. Across ratio 0 and ratio 1 the picked totals are
    # equal (4 of 8 each), so b_len = 0 solves its score equation; b_gold is then the logit gap
    # between the gold margins, 5/8 and 3/8: logit(5/8) - logit(3/8) = 2 logit(5/8).
    cells = {(0, 0.0): (1, 4), (0, 1.0): (2, 4), (1, 0.0): (3, 4), (1, 1.0): (2, 4)}
    picked, gold, ratio = [], [], []
    for (g, x), (k, n) in cells.items():
        picked += [1] * k + [0] * (n - k)
        gold += [g] * n
        ratio += [x] * n
    result = length_logit(picked, gold, ratio)
    assert result.coefficient == pytest.approx(0.0, abs=1e-8)
    assert result.gold_coefficient == pytest.approx(2 * special.logit(0.625), rel=1e-6)


def test_length_logit_interval_covers_at_its_level() -> None:
    rng = np.random.default_rng(11)
    reps, covered = 250, 0
    for _ in range(reps):
        picked, gold, ratio = simulate_logit(rng, 250, 1.5, 0.5)
        result = length_logit(picked, gold, ratio)
        covered += result.ci_low <= 0.5 <= result.ci_high
    assert 0.92 <= covered / reps <= 0.985


@pytest.mark.parametrize(
    ("picked", "gold", "ratio", "message"),
    [
        ([1, 0, 1, 0], [1, 0, 1, 0], [0.1, 0.2, -0.3, 0.0], "separates"),  # always right
        ([0, 1, 0, 1], [1, 0, 1, 0], [0.1, 0.2, -0.3, 0.0], "separates"),  # always wrong
        ([1, 0, 0, 0], [1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5], "constant"),
        ([1, 0, 0, 0], [1, 1, 1, 1], [0.1, 0.2, -0.3, 0.0], "one value"),
        ([1, 0, 0], [1, 1, 0, 0], [0.1, 0.2, -0.3, 0.0], "same length"),
        ([1, 0, 0, 1], [1, 1, 0, 0], [0.1, np.nan, -0.3, 0.0], "NaN"),
    ],
)
def test_length_logit_refuses_what_it_cannot_fit(
    picked: list[int], gold: list[int], ratio: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        length_logit(picked, gold, ratio)


def test_length_logit_refuses_separation_by_length() -> None:
    # Every error goes to the longer side and length alone explains the rest: no finite MLE.
    picked = [1, 1, 0, 0, 1, 0]
    gold = [1, 0, 0, 1, 1, 0]
    ratio = [1.0, 2.0, -1.0, -2.0, 3.0, -3.0]
    with pytest.raises(ValueError, match=r"not converge|separates"):
        length_logit(picked, gold, ratio)


def test_holm_across_judges_controls_the_family() -> None:
    # The flags per judge go through the existing Holm step-down, as the report does.
    rng = np.random.default_rng(5)
    gold = np.array([0] * 40 + [1] * 40, dtype=bool)
    pvalues = []
    for toward in (0.25, 0.25, 0.6):
        errors = np.where(gold, rng.random(80) < 0.25, rng.random(80) < toward)
        pvalues.append(conditional_preference(np.where(gold, ~errors, errors), gold).p_value)
    adjusted = holm(pvalues)
    assert adjusted.reject[2] and not any(adjusted.reject[:2])
