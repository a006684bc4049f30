"""The label form of each judging mode, in neutral names, and its answers mapped back to arms.

The page shows an item's responses as "Response 1", "Response 2", ... in an order drawn for
the annotator; it never sees an arm. A form describes what to ask (``spec``, sent to the page),
checks an answer the page sends (``label``: the label keys of a labels-file line, arms
restored from the order) and turns a stored label back into the page's answer (``answer``, to
show a label again after "back"). What each mode asks is what ``analyze`` reads:

* pairwise: the preferred response or a tie -> ``preferred_arm``;
* rubric: a score per dimension on the rubric's scale for each response -> ``scores``;
* ranking: an overall score per response on the rubric's scale -> ``scores.<arm>.overall``
  (``analyze`` compares it with each judge's overall score: κ, ICC, PPI);
* criterion: Pass or Fail for each response -> ``verdict`` (one criterion per run: ``analyze``
  applies a response's verdict to every criterion).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jurybox.errors import InputError


def neutral_names(count: int) -> list[str]:
    """The names the page shows for an item's responses, in shown order."""
    return [f"Response {index}" for index in range(1, count + 1)]


@dataclass(frozen=True)
class Dimension:
    """One thing to score: its key in the labels file, what the page shows, and the scale."""

    key: str
    title: str
    description: str
    anchors: tuple[tuple[str, str], ...]
    low: int
    high: int


@dataclass(frozen=True)
class Form:
    """What a mode asks of the annotator (see the module docstring)."""

    kind: str  # "prefer", "scores" or "verdict"
    dimensions: tuple[Dimension, ...] = ()
    criterion: Mapping[str, str] | None = None  # name, definition, pass and fail definitions

    def spec(self, count: int) -> dict[str, Any]:
        """The page's description of the form for an item with ``count`` responses."""
        spec: dict[str, Any] = {"kind": self.kind, "responses": neutral_names(count)}
        if self.kind == "scores":
            spec["dimensions"] = [
                {
                    "key": d.key,
                    "title": d.title,
                    "description": d.description,
                    "anchors": [list(anchor) for anchor in d.anchors],
                    "min": d.low,
                    "max": d.high,
                }
                for d in self.dimensions
            ]
        if self.kind == "verdict" and self.criterion is not None:
            spec["criterion"] = dict(self.criterion)
        return spec

    def label(self, answer: Any, arms: Sequence[str]) -> dict[str, Any]:
        """The labels-file keys of the page's ``answer``; arms in shown order."""
        if not isinstance(answer, Mapping):
            raise InputError("the answer must be a JSON object", field="answer")
        if self.kind == "prefer":
            choice = answer.get("prefer")
            if isinstance(choice, bool) or not isinstance(choice, int):
                raise InputError("prefer: give a response number, or 0 for a tie", field="prefer")
            if not 0 <= choice <= len(arms):
                raise InputError(f"prefer: expected 0..{len(arms)}, got {choice}", field="prefer")
            return {"preferred_arm": "tie" if choice == 0 else arms[choice - 1]}
        if self.kind == "scores":
            return {"scores": self._scores(answer.get("scores"), arms)}
        return {"verdict": self._verdicts(answer.get("verdicts"), arms)}

    def _scores(self, given: Any, arms: Sequence[str]) -> dict[str, dict[str, int]]:
        if not isinstance(given, Sequence) or len(given) != len(arms):
            raise InputError(f"scores: give one mapping per response ({len(arms)})", field="scores")
        out: dict[str, dict[str, int]] = {}
        for arm, name, scores in zip(arms, neutral_names(len(arms)), given, strict=True):
            if not isinstance(scores, Mapping):
                raise InputError(f"scores of {name}: expected a mapping", field="scores")
            out[arm] = {}
            for dim in self.dimensions:
                value = scores.get(dim.key)
                if isinstance(value, bool) or not isinstance(value, int):
                    raise InputError(f"{name}, {dim.title}: give a whole number", field="scores")
                if not dim.low <= value <= dim.high:
                    raise InputError(
                        f"{name}, {dim.title}: {value} is outside {dim.low}-{dim.high}",
                        field="scores",
                    )
                out[arm][dim.key] = value
        return out

    def _verdicts(self, given: Any, arms: Sequence[str]) -> dict[str, str]:
        if not isinstance(given, Sequence) or len(given) != len(arms):
            raise InputError(f"verdicts: give one per response ({len(arms)})", field="verdicts")
        if any(v not in ("Pass", "Fail") for v in given):
            raise InputError("verdicts: each must be Pass or Fail", field="verdicts")
        return dict(zip(arms, given, strict=True))

    def answer(self, human: Mapping[str, Any], arms: Sequence[str]) -> dict[str, Any] | None:
        """A stored label as the page's answer (None when it does not fit this form)."""
        if self.kind == "prefer":
            preferred = human.get("preferred_arm")
            if preferred == "tie":
                return {"prefer": 0}
            return {"prefer": arms.index(preferred) + 1} if preferred in arms else None
        if self.kind == "scores":
            scores = human.get("scores") or {}
            if not all(arm in scores for arm in arms):
                return None
            return {"scores": [_whole(scores[arm]) for arm in arms]}
        verdict = human.get("verdict") or {}
        if not all(arm in verdict for arm in arms):
            return None
        return {"verdicts": [verdict[arm] for arm in arms]}


def _whole(scores: Mapping[str, float]) -> dict[str, int]:
    return {dim: round(score) for dim, score in scores.items()}
