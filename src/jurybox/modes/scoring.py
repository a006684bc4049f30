"""Rubric scores of one or more arms -> ``ArmScores`` (overall, gates, safety), for every mode
that scores with a rubric (rubric, ranking, pairwise with rubric).

With the safety gate on (``JURYBOX_SAFETY_GATE=true``) every scored response is checked before its
overall is computed; a flag lands in ``safety_flags`` and caps ``overall``.
"""

from __future__ import annotations

from collections.abc import Mapping

from jurybox.modes.base import JudgingContext
from jurybox.modes.results import ArmScores
from jurybox.records import DimensionScore, Item
from jurybox.rubrics.safety import SafetyResult, check_safety
from jurybox.rubrics.scoring import overall_score


def safety_of(ctx: JudgingContext, text: str) -> SafetyResult | None:
    return check_safety(text) if ctx.safety.enabled else None


def scored_arms(
    ctx: JudgingContext, item: Item, by_arm: Mapping[str, tuple[DimensionScore, ...]]
) -> ArmScores:
    """Scores / confidences / overall / gate failures / safety flags, keyed by arm."""
    rubric = ctx.require_rubric()
    scores: dict[str, dict[str, float]] = {}
    confidences: dict[str, dict[str, float]] = {}
    overall: dict[str, float] = {}
    gates: dict[str, list[str]] = {}
    flags: dict[str, str] = {}
    for arm, dims in by_arm.items():
        scores[arm] = {d.name: d.score for d in dims}
        conf = {d.name: d.confidence for d in dims if d.confidence is not None}
        if conf:
            confidences[arm] = conf
        safety = safety_of(ctx, item.responses[arm])
        if safety is not None and safety.label is not None:
            flags[arm] = safety.label
        result = overall_score(rubric, scores[arm], safety, ctx.safety)
        overall[arm], gates[arm] = result.value, list(result.gate_failures)
    return ArmScores(scores, confidences or None, overall, gates, flags or None)
