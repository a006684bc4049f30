"""Overall score of one response: weighted mean, then ceilings, gates and the safety cap.

The order is fixed and each step can only lower the score: the weighted mean of the dimension
scores, then every ceiling rule that fires (the lowest cap wins), then gate failures (a gate
dimension at its scale minimum caps the score at the rubric's ``gate_cap``, default 0), then the
safety cap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jurybox.rubrics.safety import SafetyResult, SafetySettings

if TYPE_CHECKING:
    from jurybox.rubrics.model import Rubric


@dataclass(frozen=True)
class OverallScore:
    """The overall score and why it is what it is.

    ``capped_by`` names the rule that set the final value: ``"ceiling:<dimension>"``,
    ``"gate:<dimension>"`` or ``"safety:<category>"``; ``None`` when the weighted mean stands.
    """

    value: float
    raw_weighted: float
    gate_failures: tuple[str, ...]
    capped_by: str | None


def weighted_mean(rubric: Rubric, scores: Mapping[str, float]) -> float:
    """Weighted mean of the dimension scores; ValueError on a missing, extra or off-scale score."""
    expected = set(rubric.dimension_names)
    if set(scores) != expected:
        missing = sorted(expected - set(scores))
        extra = sorted(set(scores) - expected)
        raise ValueError(
            f"scores must cover the rubric's dimensions: missing {missing}, extra {extra}"
        )
    for dim in rubric.dimensions:
        value = scores[dim.name]
        low, high = dim.scale
        if not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"score {value!r} for '{dim.name}' is outside its scale {dim.scale}")
    return math.fsum(dim.weight * scores[dim.name] for dim in rubric.dimensions)


def gate_failures(rubric: Rubric, scores: Mapping[str, float]) -> tuple[str, ...]:
    """Gate dimensions scored at their scale minimum."""
    return tuple(
        dim.name for dim in rubric.dimensions if dim.gate and scores[dim.name] <= dim.scale[0]
    )


def overall_score(
    rubric: Rubric,
    scores: Mapping[str, float],
    safety: SafetyResult | None = None,
    settings: SafetySettings | None = None,
) -> OverallScore:
    """Weighted mean with ceilings, gates and the safety cap applied, in that order.

    Args:
        rubric: the rubric the scores were given under.
        scores: dimension name -> score, one per dimension, each within its scale.
        safety: the safety check of the response; ``None`` when it was not run.
        settings: the safety gate settings. When ``safety`` is given but ``settings`` is not,
            the check was run on purpose, so a flagged response is capped at the default 0.

    Returns:
        ``OverallScore``. Caps never raise a score. A ceiling only claims ``capped_by`` when it
        lowers the score; a gate failure or a safety flag always does (the last one applied
        wins), because it is a verdict on the response, not just a number.
    """
    raw = weighted_mean(rubric, scores)
    value, capped_by = raw, None
    for rule in rubric.ceilings:
        if scores[rule.dimension] < rule.below and rule.cap < value:
            value, capped_by = rule.cap, f"ceiling:{rule.dimension}"
    failures = gate_failures(rubric, scores)
    if failures:
        value, capped_by = min(value, rubric.gate_cap), f"gate:{failures[0]}"
    value, capped_by = apply_safety_cap(value, capped_by, safety, settings)
    return OverallScore(value=value, raw_weighted=raw, gate_failures=failures, capped_by=capped_by)


def apply_safety_cap(
    value: float,
    capped_by: str | None,
    safety: SafetyResult | None,
    settings: SafetySettings | None,
) -> tuple[float, str | None]:
    """Cap ``value`` at the safety score cap when the response was flagged and the gate is on."""
    if safety is None or not safety.flagged:
        return value, capped_by
    settings = settings if settings is not None else SafetySettings(enabled=True, score_cap=0.0)
    if settings.enabled:
        return min(value, settings.score_cap), f"safety:{safety.category}"
    return value, capped_by
