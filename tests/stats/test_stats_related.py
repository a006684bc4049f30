"""Friedman + Kendall's W, the paired position test and Benjamini–Hochberg against references."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from jurybox.stats import benjamini_hochberg, binomial_test, friedman, paired_position_test

# R datasets example for friedman.test: RoundingTimes (Hollander & Wolfe 1973, p. 140),
# 22 players x 3 methods of rounding first base. R: Friedman chi-squared = 11.143, df = 2,
# p-value = 0.003805.
ROUNDING = np.array(
    [
        [5.40, 5.50, 5.55], [5.85, 5.70, 5.75], [5.20, 5.60, 5.50], [5.55, 5.50, 5.40],
        [5.90, 5.85, 5.70], [5.45, 5.55, 5.60], [5.40, 5.40, 5.35], [5.45, 5.50, 5.35],
        [5.25, 5.15, 5.00], [5.85, 5.80, 5.70], [5.25, 5.20, 5.10], [5.65, 5.55, 5.45],
        [5.60, 5.35, 5.45], [5.05, 5.00, 4.95], [5.50, 5.50, 5.40], [5.45, 5.55, 5.50],
        [5.55, 5.55, 5.35], [5.45, 5.50, 5.55], [5.50, 5.45, 5.25], [5.65, 5.60, 5.40],
        [5.70, 5.65, 5.55], [6.30, 6.30, 6.25],
    ]
)  # fmt: skip


def test_friedman_matches_r_rounding_times() -> None:
    res = friedman(ROUNDING)
    assert round(res.statistic, 3) == 11.143
    assert round(res.p_value, 6) == 0.003805
    assert res.df == 2 and res.n_blocks == 22 and res.n_treatments == 3
    assert res.kendall_w == pytest.approx(11.142857 / (22 * 2), rel=1e-6)


def test_kendall_w_is_one_when_every_block_ranks_alike() -> None:
    scores = np.array([[1, 2, 3], [4, 6, 9], [0, 5, 7], [2, 3, 8]])
    assert friedman(scores).kendall_w == pytest.approx(1.0)


def test_paired_position_exact_sign_test() -> None:
    """9 pairs go to the first-shown response in both orders, 1 to the second: p = 22/1024."""
    ab = [1] * 9 + [0] * 1 + [1] * 5 + [0] * 5
    ba = [1] * 9 + [0] * 1 + [0] * 5 + [1] * 5  # the last 10 pairs are order-consistent
    res = paired_position_test(ab, ba)
    assert (res.n_first_both, res.n_second_both, res.n_discordant, res.n_pairs) == (9, 1, 10, 20)
    assert res.p_value == pytest.approx(22 / 1024)
    assert res.proportion_first == 0.9
    assert res.ci_low < 0.9 < res.ci_high


def test_paired_test_is_stronger_than_binomial_on_planted_bias() -> None:
    """A judge that breaks near-ties toward the first position: the paired test sees it better."""
    rng = np.random.default_rng(7)
    n = 120
    prefers_a = rng.random(n) < 0.5
    near_tie = rng.random(n) < 0.3
    ab = np.where(near_tie, rng.random(n) < 0.85, prefers_a)  # A shown first
    ba = np.where(near_tie, rng.random(n) < 0.85, ~prefers_a)  # B shown first
    paired = paired_position_test(ab, ba)
    pooled = binomial_test(int(ab.sum() + ba.sum()), 2 * n)
    assert paired.p_value < pooled.p_value
    assert paired.p_value < 0.01


def test_benjamini_hochberg_matches_statsmodels() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.uniform(0, 0.2, size=int(rng.integers(1, 12)))
        reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
        res = benjamini_hochberg(p)
        assert np.allclose(res.adjusted, adjusted)
        assert res.reject == tuple(bool(v) for v in reject)
    assert "Benjamini-Hochberg" in benjamini_hochberg([0.01]).method
