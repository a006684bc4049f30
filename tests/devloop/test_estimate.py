"""The corrected pass rate of the worked example, and the labels-needed projection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jurybox.devloop.estimate import (
    corrected_from,
    delta_method_labels,
    project_labels,
)
from jurybox.devloop.state import FrozenJudge
from jurybox.stats import rogan_gladen


def _frozen(n_pass: int, tp: int, n_fail: int, tn: int) -> FrozenJudge:
    labels = [1] * n_pass + [0] * n_fail
    verdicts = [1] * tp + [0] * (n_pass - tp) + [0] * tn + [1] * (n_fail - tn)
    return FrozenJudge("c", "h" * 64, "t", tuple(labels), tuple(verdicts), False, (), Path("f"))


def _traces(passes: int, total: int) -> list[int]:
    return [1] * passes + [0] * (total - passes)


def test_worked_example_corrected_rate_is_0_827() -> None:
    # TPR 0.85, TNR 0.90, 720 of 1,000 traces judged Pass: (0.72 + 0.90 - 1) / (0.85 + 0.90 - 1)
    assert rogan_gladen(0.72, 0.85, 0.90).estimate == pytest.approx(0.8267, abs=5e-5)
    assert round(rogan_gladen(0.72, 0.85, 0.90).estimate, 3) == 0.827
    # the same figures through the loop: a 100 + 100 test set with TPR 0.85 and TNR 0.90
    result, note, warned = corrected_from(
        _frozen(100, 85, 100, 90), _traces(720, 1000), confidence=0.95, seed=1
    )
    assert note is None and not warned and result is not None
    assert round(result.estimate, 3) == 0.827
    assert result.ci_low < 0.827 < result.ci_high


def test_tutorial_test_set_gives_an_interval_around_it() -> None:
    # 50 Pass / 50 Fail, 42 and 45 judged correctly: TPR 0.84, TNR 0.90
    result, _, _ = corrected_from(
        _frozen(50, 42, 50, 45), _traces(720, 1000), confidence=0.95, seed=7
    )
    assert result is not None
    assert (result.tpr, result.tnr) == (0.84, 0.90)
    assert result.estimate == pytest.approx(0.62 / 0.74)
    assert result.ci_low < 0.827 < result.ci_high
    assert result.ci_low < result.estimate < result.ci_high
    assert 0.05 < (result.ci_high - result.ci_low) / 2 < 0.15  # 100 labels: wide, not absurd
    again, _, _ = corrected_from(
        _frozen(50, 42, 50, 45), _traces(720, 1000), confidence=0.95, seed=7
    )
    assert again == result  # seeded


def test_a_chance_level_judge_has_no_corrected_rate() -> None:
    result, note, _ = corrected_from(_frozen(10, 5, 10, 5), _traces(5, 10), confidence=0.95, seed=0)
    assert result is None and note is not None and "no better than chance" in note


def test_projection_reaches_the_target_with_more_labels() -> None:
    frozen = _frozen(50, 42, 50, 45)
    projection = project_labels(frozen, 720, 1000, target_half_width=0.05, confidence=0.95, seed=3)
    assert projection.n_labelled == 100
    assert projection.current_half_width > 0.05
    assert projection.n_labelled_needed is not None and projection.additional is not None
    assert projection.additional == projection.n_labelled_needed - 100
    assert 300 < projection.n_labelled_needed < 2000
    assert projection.floor_half_width < 0.05
    # the delta method agrees within a factor of 1.5
    assert projection.delta_method_needed is not None
    ratio = projection.n_labelled_needed / projection.delta_method_needed
    assert 0.67 < ratio < 1.5
    assert "simulation" in projection.method


def test_projection_is_monotone_in_the_target() -> None:
    frozen = _frozen(50, 42, 50, 45)
    needed = [
        project_labels(
            frozen, 720, 1000, target_half_width=h, confidence=0.95, seed=3
        ).n_labelled_needed
        for h in (0.1, 0.07, 0.05)
    ]
    assert all(n is not None for n in needed)
    assert needed == sorted(needed)  # type: ignore[type-var]


def test_projection_already_reached_needs_no_labels() -> None:
    projection = project_labels(
        _frozen(50, 42, 50, 45), 720, 1000, target_half_width=0.3, confidence=0.95, seed=3
    )
    assert projection.additional == 0 and projection.n_labelled_needed == 100


def test_projection_says_when_traces_are_the_bottleneck() -> None:
    projection = project_labels(
        _frozen(50, 42, 50, 45), 7, 10, target_half_width=0.05, confidence=0.95, seed=3
    )
    assert projection.n_labelled_needed is None and projection.additional is None
    assert projection.floor_half_width > 0.05
    assert projection.traces_needed > 10
    assert delta_method_labels((0.5, 0.84, 0.9), 0.7, 10, 0.05, 0.95) is None


def test_delta_method_formula() -> None:
    # theta = 0.62 / 0.74; fixed part p(1-p)/m; per-label part from TPR/TNR shares of 0.5
    share, tpr, tnr, p, m = 0.5, 0.84, 0.9, 0.72, 1000
    theta = (p + tnr - 1) / (tpr + tnr - 1)
    z = 1.959963984540054
    per_label = theta**2 * tpr * (1 - tpr) / share + (1 - theta) ** 2 * tnr * (1 - tnr) / share
    room = (0.05 / z) ** 2 * (tpr + tnr - 1) ** 2 - p * (1 - p) / m
    expected = int(np.ceil(per_label / room))
    assert delta_method_labels((share, tpr, tnr), p, m, 0.05, 0.95) == expected


def test_no_answered_test_item_gives_no_corrected_rate() -> None:
    empty = FrozenJudge("c", "h" * 64, "t", (), (), False, (), Path("f"))
    result, note, _ = corrected_from(empty, _traces(5, 10), confidence=0.95, seed=0)
    assert result is None and note is not None and "answered no labelled test item" in note
