"""ICC and Cronbach's alpha against Shrout & Fleiss (1979) and R psych::ICC."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox.stats import cronbach_alpha, icc

# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges.
SF = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        # ICC and F from Shrout & Fleiss (1979), Table 4 and text; the intervals are those
        # printed by R psych::ICC(sf) (the same data ships as psych's `sf` example).
        ("1,1", (0.17, 1.79, 18, -0.13, 0.72)),
        ("2,1", (0.29, 11.03, 15, 0.02, 0.76)),
        ("3,1", (0.71, 11.03, 15, 0.34, 0.95)),
        ("1,k", (0.44, 1.79, 18, -0.88, 0.91)),
        ("2,k", (0.62, 11.03, 15, 0.07, 0.93)),
        ("3,k", (0.91, 11.03, 15, 0.68, 0.99)),
    ],
)
def test_icc_shrout_fleiss(kind: str, expected: tuple[float, float, int, float, float]) -> None:
    value, f, df2, low, high = expected
    res = icc(SF, kind)  # type: ignore[arg-type]
    assert round(res.icc, 2) == value
    assert round(res.f, 2) == f
    assert (res.df1, res.df2) == (5, df2)
    assert round(res.ci_low, 2) == low
    assert round(res.ci_high, 2) == high
    assert res.kind == kind and kind in res.method


def test_icc_p_values() -> None:
    """psych::ICC(sf): p = 0.16477 (one-way), 0.00013 (two-way)."""
    assert round(icc(SF, "1,1").p_value, 5) == 0.16477
    assert round(icc(SF, "2,1").p_value, 5) == 0.00013


def test_cronbach_alpha_equals_icc3k_with_feldt_interval() -> None:
    """Cronbach's alpha is ICC(3,k) and Feldt's interval is its F interval (McGraw & Wong 1996)."""
    alpha, icc3k = cronbach_alpha(SF), icc(SF, "3,k")
    assert alpha.alpha == pytest.approx(icc3k.icc)
    assert alpha.ci_low == pytest.approx(icc3k.ci_low)
    assert alpha.ci_high == pytest.approx(icc3k.ci_high)
    assert round(alpha.alpha, 2) == 0.91


def test_cronbach_alpha_textbook_formula() -> None:
    rng = np.random.default_rng(5)
    data = rng.normal(size=(40, 1)) + rng.normal(scale=0.8, size=(40, 5))
    k = data.shape[1]
    expected = k / (k - 1) * (1 - data.var(axis=0, ddof=1).sum() / data.sum(1).var(ddof=1))
    assert cronbach_alpha(data).alpha == pytest.approx(expected)


@pytest.mark.parametrize("kind", ["1,1", "2,1", "3,1", "1,k", "2,k", "3,k"])
def test_icc_perfect_agreement_is_one(kind: str) -> None:
    """Identical raters: every ICC form is 1 with a collapsed interval and F = ∞ (p = 0)."""
    res = icc([[1, 1], [2, 2], [3, 3]], kind)  # type: ignore[arg-type]
    assert res.icc == pytest.approx(1.0)
    assert (res.ci_low, res.ci_high) == (1.0, 1.0)
    assert res.p_value == 0.0


def test_icc_constant_offset_absolute_agreement() -> None:
    """Raters one point apart: ICC(A,1) = MSR / (MSR + k·MSC/n) = 5.8333 / 6.8333 = 0.8537.

    By hand (pingouin's ICC2 formula): MSR = 17.5/3, MSC = 2, MSE = 0. Consistency ICC(3,1) is 1.
    """
    data = [[1, 2], [2, 3], [3, 4], [5, 6]]
    res = icc(data, "2,1")
    assert round(res.icc, 4) == 0.8537
    assert res.icc == pytest.approx((17.5 / 3) / (17.5 / 3 + 2 * 2 / 4))
    assert res.ci_low < res.icc < res.ci_high <= 1.0
    assert icc(data, "3,1").icc == pytest.approx(1.0)


def test_icc_swapped_scores_raise_value_error_not_zero_division() -> None:
    """Two targets with the same mean: ICC(A,1) = −MSE / 0 is undefined, so ValueError says why."""
    with pytest.raises(ValueError, match="same mean"):
        icc([[1, 2], [2, 1]], "2,1")
    # With more targets the swap is a defined (negative) ICC, not an error.
    assert icc([[1, 2], [2, 1], [1, 2]], "2,1").icc < 0
