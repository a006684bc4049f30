"""Length-controlled win rate: saturated-model values by hand, planted bias, seeded coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from jurybox.stats import length_controlled_win_rate


def test_two_lengths_by_hand() -> None:
    """Two length groups make the GLM saturated: β0 = (logit 0.5 + logit 0.8) / 2 = ln 2.

    So the rate at zero length difference is expit(ln 2) = 2/3, while the raw rate is 13/20.
    """
    diff = np.array([-1.0] * 10 + [1.0] * 10)
    outcomes = np.array([1.0] * 5 + [0.0] * 5 + [1.0] * 8 + [0.0] * 2)
    res = length_controlled_win_rate(outcomes, diff)
    assert res.estimate == pytest.approx(2 / 3, abs=1e-6)
    assert res.raw_rate == pytest.approx(0.65)
    assert res.length_coef > 0
    assert res.ci_low < 2 / 3 < res.ci_high


def test_no_length_effect_leaves_the_raw_rate() -> None:
    diff = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0])
    outcomes = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    res = length_controlled_win_rate(outcomes, diff)
    assert res.estimate == pytest.approx(res.raw_rate) == pytest.approx(2 / 3)
    assert res.length_coef == pytest.approx(0.0, abs=1e-8)


@pytest.mark.parametrize(
    ("outcome", "reason"), [(0.5, "every comparison is a tie"), (1.0, "separates perfectly")]
)
def test_constant_outcomes_are_a_value_error(outcome: float, reason: str) -> None:
    """All ties used to give a zero-width [0.5, 0.5] interval (sandwich SE 0) and a 0/0 warning."""
    with pytest.raises(ValueError, match=reason):
        length_controlled_win_rate([outcome] * 6, [1, 2, 3, -1, -5, 4])


def test_planted_length_bias_is_removed() -> None:
    """Equal quality (β0 = 0) but answers 300 chars longer and a judge that likes length."""
    rng = np.random.default_rng(5)
    diff = rng.normal(300, 400, 3000)
    outcomes = (rng.random(3000) < expit(1.5 * np.tanh(diff / 400))).astype(float)
    res = length_controlled_win_rate(outcomes, diff)
    assert res.raw_rate > 0.6
    assert res.ci_low < 0.5 < res.ci_high
    assert res.length_p_value < 1e-6


def test_length_controlled_coverage() -> None:
    """300 seeded data sets of 300 comparisons with 10% ties; truth = 0.9·expit(1) + 0.05."""
    rng = np.random.default_rng(20261123)
    truth, hits = 0.9 * float(expit(1.0)) + 0.05, 0
    for _ in range(300):
        diff = rng.normal(300, 400, 300)
        outcomes = (rng.random(300) < expit(1.0 + np.tanh(diff / 400))).astype(float)
        outcomes[rng.random(300) < 0.1] = 0.5
        res = length_controlled_win_rate(outcomes, diff)
        hits += res.ci_low <= truth <= res.ci_high
    assert 0.92 <= hits / 300 <= 0.98, f"coverage {hits / 300:.3f}"
