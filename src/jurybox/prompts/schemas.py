"""JSON Schemas of the judges' answers, for native structured output.

Deliberately small and plain (objects, string enums, bounded integers, ``required``,
``additionalProperties: false``, one array with fixed length) so that OpenAI strict mode, Gemini
and a llama.cpp grammar all accept them and a 135M local model can fill them. Reasoning comes
before the verdict in every object: the judge argues first, then decides. Each call builds fresh
dicts, so callers may mutate what they get.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.rubrics.model import Rubric

VERDICTS = ("A", "B", "TIE")
CONFIDENCE_LABELS = ("high", "medium", "low")
CRITERION_ANSWERS = ("Pass", "Fail")

Schema = dict[str, Any]


def _object(properties: dict[str, Any]) -> Schema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _string() -> Schema:
    return {"type": "string"}


def _enum(values: Sequence[str]) -> Schema:
    return {"type": "string", "enum": list(values)}


def _integer(scale: tuple[int, int]) -> Schema:
    return {"type": "integer", "minimum": scale[0], "maximum": scale[1]}


def _verdict_fields(request_confidence: bool, key: str = "verdict") -> dict[str, Any]:
    fields: dict[str, Any] = {"reasoning": _string(), key: _enum(VERDICTS)}
    if request_confidence:
        fields["confidence"] = _enum(CONFIDENCE_LABELS)
    return fields


def pairwise_schema(*, request_confidence: bool) -> Schema:
    """``{"reasoning", "verdict": A|B|TIE, "confidence": high|medium|low}``."""
    return _object(_verdict_fields(request_confidence))


def dimension_scores_schema(rubric: Rubric, confidence_scale: tuple[int, int] | None) -> Schema:
    """``{<dimension>: {"reasoning", "score", "confidence"?}}`` for every rubric dimension."""
    properties: dict[str, Any] = {}
    for dim in rubric.dimensions:
        fields: dict[str, Any] = {"reasoning": _string(), "score": _integer(dim.scale)}
        if confidence_scale is not None:
            fields["confidence"] = _integer(confidence_scale)
        properties[dim.name] = _object(fields)
    return _object(properties)


def rubric_schema(rubric: Rubric, confidence_scale: tuple[int, int] | None) -> Schema:
    """``{"scores": {<dimension>: {...}}}``."""
    return _object({"scores": dimension_scores_schema(rubric, confidence_scale)})


def pairwise_rubric_schema(
    rubric: Rubric, confidence_scale: tuple[int, int] | None, *, request_confidence: bool
) -> Schema:
    """Both responses scored per dimension, then ``overall_preference``."""
    properties: dict[str, Any] = {
        "response_a": dimension_scores_schema(rubric, confidence_scale),
        "response_b": dimension_scores_schema(rubric, confidence_scale),
    }
    properties.update(_verdict_fields(request_confidence, key="overall_preference"))
    return _object(properties)


def batch_pairwise_schema(count: int, *, request_confidence: bool) -> Schema:
    """``{"evaluations": [{"example": 1..k, "reasoning", "verdict", "confidence"?}]}``."""
    item = _object({"example": _integer((1, count)), **_verdict_fields(request_confidence)})
    array = {"type": "array", "items": item, "minItems": count, "maxItems": count}
    return _object({"evaluations": array})


def ranking_schema(rubric: Rubric, letters: Sequence[str]) -> Schema:
    """``{"evaluations": {<letter>: {"reasoning", <dimension>: int}}, "ranking": [letters]}``.

    Flat integers per dimension (no per-dimension reasoning) keep N responses affordable.
    """
    evaluations = _object({letter: _ranked_response(rubric) for letter in letters})
    ranking = {
        "type": "array",
        "items": _enum(letters),
        "minItems": len(letters),
        "maxItems": len(letters),
    }
    return _object({"evaluations": evaluations, "ranking": ranking})


def _ranked_response(rubric: Rubric) -> Schema:
    fields: dict[str, Any] = {"reasoning": _string()}
    fields.update({dim.name: _integer(dim.scale) for dim in rubric.dimensions})
    return _object(fields)


def criterion_schema() -> Schema:
    """``{"reasoning", "answer": Pass|Fail}``."""
    return _object({"reasoning": _string(), "answer": _enum(CRITERION_ANSWERS)})
