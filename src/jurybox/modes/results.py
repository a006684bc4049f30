"""Typed results of one judgment, one frozen dataclass per mode, and how each lands in a record.

A mode's ``interpret`` returns these; ``pipeline.recording`` adds provenance and usage and
builds the record with the result's ``fields()`` in one go (``JudgeRecord(**fields)``), which
refuses a misspelt or unknown field name (``TypeError``), so nothing a result says is silently
dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from jurybox.records import Status

Verdict = Literal["A", "B", "TIE"]
Answer = Literal["Pass", "Fail"]


@dataclass(frozen=True)
class Pair:
    """The two arms of a pairwise unit, in the positions shown (A first)."""

    a: str
    b: str


@dataclass(frozen=True)
class Failed:
    """The judge's text could not be read: unparsed, truncated or refused, with the reason."""

    status: Status
    error: str
    pair: Pair | None = None  # pairwise records keep their labels even when they fail

    def fields(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "parse_success": False,
            "parse_method": None,
            "error": self.error,
            "holistic_fallback": False,
            "response_a_label": self.pair.a if self.pair else None,
            "response_b_label": self.pair.b if self.pair else None,
        }


def _ok(method: str) -> dict[str, Any]:
    return {
        "status": Status.OK,
        "parse_success": True,
        "parse_method": method,
        "error": None,
        "holistic_fallback": False,
    }


@dataclass(frozen=True)
class ArmScores:
    """Rubric scores mapped back to arms, with the overall after ceilings, gates and safety."""

    scores: Mapping[str, Mapping[str, float]]  # arm -> dimension -> score
    confidences: Mapping[str, Mapping[str, float]] | None
    overall: Mapping[str, float]
    gate_failures: Mapping[str, list[str]]
    safety_flags: Mapping[str, str] | None

    def fields(self) -> dict[str, Any]:
        return {
            "scores": self.scores,
            "confidences": self.confidences,
            "overall": self.overall,
            "gate_failures": self.gate_failures,
            "safety_flags": self.safety_flags,
        }


@dataclass(frozen=True)
class PairwiseResult:
    """A pairwise verdict (positional) and the arm it means; optionally both sides' rubric."""

    method: str
    pair: Pair
    verdict: Verdict
    confidence: str | None  # high | medium | low
    reasoning: str | None
    scores_a: Mapping[str, float] | None = None  # pairwise with rubric: positional scores
    scores_b: Mapping[str, float] | None = None
    arms: ArmScores | None = None  # pairwise with rubric: scores mapped back to arms

    @property
    def preferred_arm(self) -> str:
        if self.verdict == "TIE":
            return "tie"
        return self.pair.a if self.verdict == "A" else self.pair.b

    def fields(self) -> dict[str, Any]:
        fields = _ok(self.method)
        fields.update(
            response_a_label=self.pair.a,
            response_b_label=self.pair.b,
            preference="tie" if self.verdict == "TIE" else self.verdict,
            preferred_arm=self.preferred_arm,
            confidence=self.confidence,
            preference_reasoning=self.reasoning,
            scores_response_a=self.scores_a,
            scores_response_b=self.scores_b,
        )
        if self.arms is not None:
            fields.update(self.arms.fields())
        return fields


@dataclass(frozen=True)
class RubricResult:
    """Pointwise rubric scores of one arm, or one holistic number kept as the overall."""

    method: str
    arm: str
    arms: ArmScores | None  # None when the judge answered one holistic number
    holistic: float | None = None  # that number, safety cap applied
    safety_flag: str | None = None  # the holistic answer's safety flag

    def fields(self) -> dict[str, Any]:
        fields = _ok(self.method)
        if self.arms is not None:
            fields.update(self.arms.fields())
            return fields
        holistic = self.holistic if self.holistic is not None else float("nan")
        flags = {self.arm: self.safety_flag} if self.safety_flag is not None else None
        fields.update(holistic_fallback=True, overall={self.arm: holistic}, safety_flags=flags)
        return fields


@dataclass(frozen=True)
class RankingResult:
    """Listwise rubric scores per arm and the ranking derived from them (best first)."""

    method: str
    arms: ArmScores
    ranking: tuple[str, ...]

    def fields(self) -> dict[str, Any]:
        fields = _ok(self.method)
        fields.update(self.arms.fields())
        fields["ranking"] = list(self.ranking)
        return fields


@dataclass(frozen=True)
class CriterionResult:
    """A Pass/Fail answer on one criterion and the judge's (or the check's) reasoning."""

    method: str
    answer: Answer
    reasoning: str | None

    def fields(self) -> dict[str, Any]:
        fields = _ok(self.method)
        fields["verdict"] = self.answer
        return fields


Judgment = Failed | PairwiseResult | RubricResult | RankingResult | CriterionResult
