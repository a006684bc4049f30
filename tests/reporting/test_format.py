from __future__ import annotations

import math

import pytest

from jurybox.reporting.view.format import (
    MISSING,
    fmt_ci,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_value_ci,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.87, "0.870"),
        (0.8254, "0.825"),
        (1, "1"),
        (-0.0001, "0.000"),
        (None, MISSING),
        (math.nan, MISSING),
        (math.inf, "∞"),
    ],
)
def test_rates_keep_three_decimals_and_missing_is_a_dash(value: object, expected: str) -> None:
    assert fmt_rate(value) == expected


def test_scores_have_two_decimals() -> None:
    assert fmt_score(6.456) == "6.46"
    assert fmt_score(-1.0) == "-1.00"


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        (0.0, "<0.001"),
        (1e-35, "<0.001"),
        (0.000999, "<0.001"),
        (0.001, "0.001"),
        (0.04126, "0.041"),
        (0.726, "0.726"),
        (1.0, "1.000"),
        (None, MISSING),
    ],
)
def test_p_values_are_readable(p: float | None, expected: str) -> None:
    assert fmt_p(p) == expected


def test_intervals_counts_and_estimates() -> None:
    assert fmt_ci(0.7337, 0.8451) == "[0.734, 0.845]"
    assert fmt_ci(None, 0.5) == MISSING
    assert fmt_count(12, 66) == "12/66"
    assert fmt_count(None, 66) == MISSING
    assert fmt_value_ci(0.795, 0.7337, 0.8451) == "0.795 [0.734, 0.845]"
    assert fmt_value_ci(0.5, None, None) == "0.500"
    assert fmt_num(True) == "yes"
