"""Betting confidence sequences: confseq's values, extension, decisions, and coverage under
continuous peeking (the full grid of error rates and stopping times: bench/sequential_stopping.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats.sequential import betting_cs, repeated_fixed_n

REFERENCE = Path(__file__).parents[1] / "data" / "confseq" / "betting_reference.json"


def _reference_cases() -> list[Any]:
    ref = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return [
        pytest.param(
            ref["data"][case["data"]], case, id=f"{case['data']}-{case['bet']}-{case['confidence']}"
        )
        for case in ref["cases"]
    ]


@pytest.mark.parametrize(("x", "case"), _reference_cases())
def test_betting_cs_reproduces_confseq(x: list[float], case: dict[str, Any]) -> None:
    cs = betting_cs(x, case["confidence"], bet=case["bet"])
    np.testing.assert_allclose(cs.lower, case["lower"], atol=1e-12)
    np.testing.assert_allclose(cs.upper, case["upper"], atol=1e-12)
    assert cs.anytime_valid
    assert cs.n == len(x) and cs.steps[-1] == len(x)
    assert cs.estimate == pytest.approx(float(np.mean(x)))


def test_extending_block_by_block_equals_one_pass() -> None:
    x = (np.random.default_rng(3).random(700) < 0.62).astype(float)
    whole = betting_cs(x)
    parts = betting_cs(x[:5])
    for start, stop in ((5, 260), (260, 261), (261, 700)):
        parts = betting_cs(x[start:stop], previous=parts)
    np.testing.assert_array_equal(parts.lower, whole.lower)
    np.testing.assert_array_equal(parts.upper, whole.upper)
    np.testing.assert_array_equal(parts.steps, whole.steps)
    assert parts.estimate == pytest.approx(whole.estimate)


def test_extension_keeps_the_first_settings() -> None:
    first = betting_cs([1, 0, 1], 0.95)
    with pytest.raises(ValueError, match="would mix two sequences"):
        betting_cs([1], 0.9, previous=first)
    with pytest.raises(ValueError, match="only betting_cs results extend"):
        betting_cs([1], previous=repeated_fixed_n([1, 0, 1], 2))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x": [0.2, 1.3]}, r"x must lie in \[0, 1\]"),
        ({"x": []}, "x is empty"),
        ({"x": [0.5, float("nan")]}, "NaN"),
        ({"x": [1], "confidence": 1.0}, "confidence"),
        ({"x": [1], "bet": "kelly"}, "bet must be"),
        ({"x": [1], "truncation": 1.0}, "truncation"),
        ({"x": [1], "breaks": 1}, "breaks"),
    ],
)
def test_betting_cs_rejects_bad_input(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        betting_cs(**kwargs)  # type: ignore[arg-type]


def test_decide_reports_the_first_crossing_and_its_side() -> None:
    good = betting_cs(np.ones(200))
    above = good.decide(0.7)
    assert above.outcome == "above"
    assert above.step is not None and good.lower[above.step] >= 0.7
    assert above.step == 0 or good.lower[above.step - 1] < 0.7
    assert above.n == above.step + 1
    below = betting_cs(np.zeros(200)).decide(0.7)
    assert below.outcome == "below" and below.upper < 0.7
    undecided = betting_cs([1, 0, 1, 0]).decide(0.5)
    assert undecided.outcome == "undecided" and undecided.step is None and undecided.n == 4
    with pytest.raises(ValueError, match="threshold"):
        good.decide(1.5)


def test_first_within_finds_the_precision_target() -> None:
    cs = betting_cs(np.tile([1.0, 0.0, 0.5], 300))
    n = cs.first_within(0.1)
    assert n is not None
    assert (cs.upper[n - 1] - cs.lower[n - 1]) / 2 <= 0.1 < (cs.upper[n - 2] - cs.lower[n - 2]) / 2
    assert cs.first_within(0.001) is None
    with pytest.raises(ValueError, match="half_width"):
        cs.first_within(0)


@pytest.mark.parametrize("method", ["wilson", "beta"])
def test_repeated_fixed_n_is_the_statsmodels_interval_at_each_look(method: str) -> None:
    x = np.random.default_rng(5).choice([0.0, 0.5, 1.0], size=47)
    naive = repeated_fixed_n(x, 10, method=method)  # type: ignore[arg-type]
    np.testing.assert_array_equal(naive.steps, [10, 20, 30, 40, 47])
    for i, n in enumerate(naive.steps):
        low, high = proportion_confint(x[:n].sum(), n, alpha=0.05, method=method)
        assert naive.lower[i] == pytest.approx(low) and naive.upper[i] == pytest.approx(high)
    assert not naive.anytime_valid and "not anytime-valid" in naive.method
    with pytest.raises(ValueError, match="block"):
        repeated_fixed_n(x, 0)


def _runs(p: float, runs: int, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(20260101)
    return [(rng.random(n) < p).astype(float) for _ in range(runs)]


def test_continuous_peeking_keeps_the_betting_cs_valid() -> None:
    # p just under the trust bar: the hardest case, where repeated looks hurt a fixed-n test.
    p, bar, missed, wrong = 0.695, 0.70, 0, 0
    for x in _runs(p, runs=300, n=400):
        cs = betting_cs(x, breaks=200)  # a coarser grid: the guarantee holds on any grid
        missed += bool(((cs.lower > p) | (cs.upper < p)).any())
        wrong += cs.decide(bar).outcome == "above"
    # 300 runs: a true rate of 0.05 exceeds 0.085 with probability < 1 %.
    assert missed / 300 <= 0.085
    assert wrong / 300 <= 0.085


def test_continuous_peeking_breaks_the_naive_fixed_n_interval() -> None:
    runs = _runs(0.695, runs=2000, n=400)
    wrong = sum(repeated_fixed_n(x, 10).decide(0.70).outcome == "above" for x in runs)
    # About 0.12 (sd 0.007 over 2,000 runs): Wilson acted on at the first crossing exceeds 0.05.
    assert wrong / 2000 > 0.08
