"""Judge text -> validated structured result.

Extraction order: the vendor's native structured output, else the whole text as JSON, else the
last fenced code block holding a JSON object, else the last balanced top-level ``{...}`` (a
brace scanner that respects strings and escapes). When both a fenced block and a later bare
object exist, the later one wins: a judge's own answer comes after anything it quotes, so text
that echoes an injected verdict earlier never beats the judge's final answer. Trailing commas are
removed before decoding (a syntax slip, not a guess); NaN/Infinity and duplicate keys are errors.

Validation is strict: a score outside its scale, an unknown verdict, a missing dimension, a wrong
type (``"7"`` is not a score, ``true`` is not a number) or a ranking that is not a permutation
raises ``ParseError``; nothing is clamped or guessed. Accepted normalisations are case and
spacing in keys and enum values ("tie", "Tie"; "pass") and the "Response " prefix on position
letters ("Response A" -> "A"). Prose verdicts ("A is better") are never read. A judge that gives
one holistic score instead of the rubric is returned as a holistic fallback, flagged as such.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jurybox.errors import ParseError
from jurybox.records import DimensionScore

if TYPE_CHECKING:
    from jurybox.rubrics.model import Rubric

VERDICTS = ("A", "B", "TIE")
CONFIDENCE_LABELS = ("high", "medium", "low")
HOLISTIC_KEYS = ("overall", "overall_score", "score", "rating")
_FENCE = re.compile(r"```[\w+-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_RESPONSE_PREFIX = re.compile(r"^(?:response|candidate)[\s_-]*", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(?:I\s*(?:can(?:no|')?t|cannot|won'?t|will\s+not|(?:am|'m)\s+(?:not\s+able|unable)\s+to|"
    r"must\s+decline)|I'?m\s+sorry|I\s+apologi[sz]e|as\s+an\s+AI)\b",
    re.IGNORECASE,
)
_WHITESPACE = re.compile(r"\s*")
_MISSING = object()


class JudgeRefusal(ParseError):
    """The judge declined in prose and gave no JSON answer."""


@dataclass(frozen=True)
class PairwiseVerdict:
    verdict: str  # "A" | "B" | "TIE"
    confidence: str | None  # "high" | "medium" | "low"
    reasoning: str | None
    method: str


@dataclass(frozen=True)
class PairwiseRubricVerdict:
    scores_a: tuple[DimensionScore, ...]
    scores_b: tuple[DimensionScore, ...]
    verdict: str
    confidence: str | None
    reasoning: str | None
    method: str


@dataclass(frozen=True)
class RubricJudgment:
    scores: tuple[DimensionScore, ...]
    holistic_fallback: bool
    holistic_score: float | None
    method: str


@dataclass(frozen=True)
class RankingJudgment:
    evaluations: Mapping[str, tuple[DimensionScore, ...]]  # letter -> scores
    ranking: tuple[str, ...]  # letters, as the judge ranked them
    method: str


@dataclass(frozen=True)
class CriterionVerdict:
    answer: str  # "Pass" | "Fail"
    reasoning: str | None
    method: str


# --- extraction -------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ParseError(f"{name} is not a valid JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ParseError(f"duplicate key '{key}' in the judge's JSON")
        result[key] = value
    return result


def _string_step(char: str, escaped: bool) -> tuple[bool, bool]:
    """(still inside the string, next char escaped) after reading ``char`` inside a string."""
    if escaped:
        return True, False
    if char == "\\":
        return True, True
    return char != '"', False


def _next_char(text: str, index: int) -> str:
    """The first non-whitespace character at or after ``index`` ("" at the end)."""
    match = _WHITESPACE.match(text, index)
    end = match.end() if match is not None else index
    return text[end : end + 1]


def _strip_trailing_commas(text: str) -> str:
    out: list[str] = []
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            in_string, escaped = _string_step(char, escaped)
        elif char == '"':
            in_string = True
        elif char == "," and _next_char(text, index + 1) in ("}", "]"):
            continue
        out.append(char)
    return "".join(out)


def _loads(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except RecursionError:
        raise ParseError("JSON nested too deeply") from None


def _decode(text: str) -> Any:
    """json.loads, retried once without trailing commas; raises ValueError or ParseError."""
    try:
        return _loads(text)
    except json.JSONDecodeError:
        repaired = _strip_trailing_commas(text)
        if repaired == text:
            raise
        return _loads(repaired)


def _scan_objects(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """Spans of the top-level balanced ``{...}`` in ``text``, and where an unclosed one starts."""
    spans: list[tuple[int, int]] = []
    depth, start = 0, -1
    in_string = escaped = False
    for index, char in enumerate(text):
        if depth == 0:
            if char == "{":
                depth, start = 1, index
        elif in_string:
            in_string, escaped = _string_step(char, escaped)
        elif char == '"':
            in_string = True
        elif char in "{}":
            depth += 1 if char == "{" else -1
            if depth == 0:
                spans.append((start, index + 1))
    return spans, (start if depth > 0 else None)


def _last_fenced(text: str) -> tuple[dict[str, Any], int] | None:
    """The last fenced block holding a JSON object, and where that fence ends."""
    for match in reversed(list(_FENCE.finditer(text))):
        try:
            value = _decode(match.group(1).strip())
        except (ValueError, ParseError):
            continue
        if isinstance(value, dict):
            return value, match.end()
    return None


def _last_object(text: str, spans: list[tuple[int, int]]) -> dict[str, Any] | None:
    """The last span that is an attempt at JSON; it must decode (no falling back to earlier ones,
    which may be quotes of a response)."""
    for start, end in reversed(spans):
        candidate = text[start:end]
        try:
            value = _decode(candidate)
        except ValueError as exc:
            if '"' not in candidate:
                continue  # prose such as "{a, b}", not an attempt at JSON
            raise ParseError(f"the last JSON object is not valid JSON ({exc})") from None
        return value if isinstance(value, dict) else None
    return None


def extract_json(
    text: str, structured: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], str]:
    """The judge's answer object and how it was found: native, json, fenced or last_object."""
    if structured is not None:
        return dict(structured), "native"
    stripped = text.strip()
    if not stripped:
        raise ParseError("empty response")
    try:
        whole = _decode(stripped)
    except ValueError:
        whole = _MISSING
    if whole is not _MISSING:
        if not isinstance(whole, dict):
            raise ParseError(f"expected a JSON object, got {type(whole).__name__}")
        return whole, "json"
    spans, unclosed = _scan_objects(stripped)
    last_end = spans[-1][1] if spans else 0
    if unclosed is not None and unclosed >= last_end and '"' in stripped[unclosed:]:
        raise ParseError(f"truncated JSON: the object opened at character {unclosed} never closes")
    fenced = _last_fenced(stripped)
    fence_end = fenced[1] if fenced is not None else 0
    # Only a bare object after the last JSON fence can be the judge's later, final answer.
    bare = _last_object(stripped, [span for span in spans if span[0] >= fence_end])
    if bare is not None:
        return bare, "last_object"
    if fenced is not None:
        return fenced[0], "fenced"
    if _REFUSAL.search(stripped):
        raise JudgeRefusal(f"judge refused: {stripped[:160]!r}")
    raise ParseError("no JSON object found in the judge's answer")


# --- value validation -------------------------------------------------------------------------


_KEY_SPACING = re.compile(r"[\s-]+")


def _key(name: str) -> str:
    return _KEY_SPACING.sub("_", name.strip().lower())


def _normalise_keys(obj: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, value in obj.items():
        key = _key(name if type(name) is str else str(name))
        if key in result:
            raise ParseError(f"{where}keys collide after normalising case: '{name}'")
        result[key] = value
    return result


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ParseError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def _number(value: Any, scale: tuple[float, float], what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(f"{what} must be a number, got {value!r}")
    if not (math.isfinite(value) and scale[0] <= value <= scale[1]):
        raise ParseError(f"{what} {value!r} is outside the scale {scale[0]:g}-{scale[1]:g}")
    return float(value)


def _reasoning(value: Any) -> str | None:
    if value is None or value is _MISSING:
        return None
    if not isinstance(value, str):
        raise ParseError(f"reasoning must be a string, got {type(value).__name__}")
    return value


def _label(value: Any, allowed: Sequence[str], what: str) -> str:
    """Case-insensitive enum match, with "Response A" accepted for "A"."""
    if not isinstance(value, str):
        raise ParseError(f"{what} must be a string, got {value!r}")
    found = _matching_label(value, allowed)
    if found is None:
        raise ParseError(f"unknown {what} {value!r} (allowed: {', '.join(allowed)})")
    return found


def _matching_label(value: str, allowed: Sequence[str]) -> str | None:
    cleaned = value.strip()
    if len(_RESPONSE_PREFIX.sub("", cleaned)) == 1:
        cleaned = _RESPONSE_PREFIX.sub("", cleaned)
    for option in allowed:
        if cleaned.lower() == option.lower():
            return option
    return None


def _confidence_label(value: Any) -> str | None:
    if value is None or value is _MISSING:
        return None
    return _label(value, CONFIDENCE_LABELS, "confidence")


def _one_dimension(
    raw: Any, scale: tuple[int, int], conf_scale: tuple[int, int] | None, what: str
) -> tuple[float, float | None, str | None]:
    if not isinstance(raw, Mapping):
        return _number(raw, scale, f"{what} score"), None, None
    inner = _normalise_keys(raw, f"{what}: ")
    if "score" not in inner:
        raise ParseError(f"{what}: missing 'score'")
    score = _number(inner["score"], scale, f"{what} score")
    confidence = inner.get("confidence")
    if confidence is not None:
        bounds = conf_scale if conf_scale is not None else (-math.inf, math.inf)
        confidence = _number(confidence, bounds, f"{what} confidence")
    return score, confidence, _reasoning(inner.get("reasoning"))


def _dimension_scores(
    container: Mapping[str, Any],
    rubric: Rubric,
    confidence_scale: tuple[int, int] | None,
    where: str = "",
) -> tuple[DimensionScore, ...]:
    """One score per rubric dimension (number or ``{"score", ...}``); extra keys are ignored."""
    keys = _normalise_keys(container, where)
    scores = []
    for dim in rubric.dimensions:
        raw = keys.get(dim.name.lower(), _MISSING)
        if raw is _MISSING:
            raise ParseError(f"{where}missing dimension '{dim.name}'")
        score, conf, why = _one_dimension(raw, dim.scale, confidence_scale, f"{where}{dim.name}")
        scores.append(DimensionScore(dim.name, score, conf, why))
    return tuple(scores)


def _scores_container(value: Any, what: str) -> Mapping[str, Any]:
    """A response's scores, directly or under a ``scores`` key."""
    obj = _mapping(value, what)
    nested = _normalise_keys(obj, f"{what}: ").get("scores")
    return _mapping(nested, f"{what} scores") if nested is not None else obj


# --- per mode ---------------------------------------------------------------------------------


def _pairwise_from(
    keys: Mapping[str, Any], method: str, verdict_keys: Sequence[str]
) -> PairwiseVerdict:
    found = [keys[k] for k in verdict_keys if k in keys]
    if not found:
        raise ParseError(f"missing '{verdict_keys[0]}'")
    verdicts = {_label(v, VERDICTS, "verdict") for v in found}
    if len(verdicts) > 1:
        raise ParseError(f"conflicting verdicts {sorted(verdicts)}")
    return PairwiseVerdict(
        verdict=verdicts.pop(),
        confidence=_confidence_label(keys.get("confidence")),
        reasoning=_reasoning(keys.get("reasoning")),
        method=method,
    )


def parse_pairwise(text: str, structured: Mapping[str, Any] | None = None) -> PairwiseVerdict:
    """``{"verdict": A|B|TIE, "confidence"?, "reasoning"?}``."""
    obj, method = extract_json(text, structured)
    return _pairwise_from(_normalise_keys(obj), method, ("verdict",))


def parse_pairwise_rubric(
    text: str,
    structured: Mapping[str, Any] | None,
    rubric: Rubric,
    *,
    confidence_scale: tuple[int, int] | None = None,
) -> PairwiseRubricVerdict:
    """Both responses scored per dimension plus ``overall_preference`` (or ``verdict``)."""
    obj, method = extract_json(text, structured)
    keys = _normalise_keys(obj)
    sides = []
    for side in ("response_a", "response_b"):
        if side not in keys:
            raise ParseError(f"missing '{side}'")
        container = _scores_container(keys[side], side)
        sides.append(_dimension_scores(container, rubric, confidence_scale, f"{side}: "))
    verdict = _pairwise_from(keys, method, ("overall_preference", "verdict"))
    return PairwiseRubricVerdict(
        sides[0], sides[1], verdict.verdict, verdict.confidence, verdict.reasoning, method
    )


def parse_batch_pairwise(
    text: str, structured: Mapping[str, Any] | None, k: int
) -> list[PairwiseVerdict | ParseError]:
    """One verdict (or the ParseError for that example alone) per example 1..k."""
    try:
        obj, method = extract_json(text, structured)
        evaluations = _normalise_keys(obj).get("evaluations", _MISSING)
        if evaluations is _MISSING:
            raise ParseError("missing 'evaluations'")
        if not isinstance(evaluations, list):
            raise ParseError("'evaluations' must be a JSON array")
    except ParseError as exc:
        return [exc] * k
    results: dict[int, PairwiseVerdict | ParseError] = {}
    for entry in evaluations:
        keys = _normalise_keys(entry) if isinstance(entry, Mapping) else {}
        number = keys.get("example")
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= k:
            continue  # cannot be attributed to a pair; its pair is reported missing instead
        if number in results:
            results[number] = ParseError(f"example {number} was evaluated more than once")
            continue
        try:
            results[number] = _pairwise_from(keys, method, ("verdict",))
        except ParseError as exc:
            results[number] = ParseError(f"example {number}: {exc}")
    return [results.get(i, ParseError(f"no evaluation for example {i}")) for i in range(1, k + 1)]


def _holistic(keys: Mapping[str, Any], rubric: Rubric) -> float | None:
    for name in HOLISTIC_KEYS:
        if name in keys:
            return _number(keys[name], rubric.scale, f"holistic '{name}'")
    return None


def parse_rubric(
    text: str,
    structured: Mapping[str, Any] | None,
    rubric: Rubric,
    *,
    confidence_scale: tuple[int, int] | None,
) -> RubricJudgment:
    """Per-dimension scores under ``scores`` (or at the top level), or a holistic fallback."""
    obj, method = extract_json(text, structured)
    keys = _normalise_keys(obj)
    container = _mapping(keys["scores"], "scores") if "scores" in keys else obj
    inner = _normalise_keys(container)
    if not any(dim.name.lower() in inner for dim in rubric.dimensions):
        holistic = _holistic(inner, rubric)
        if holistic is None:
            raise ParseError("the answer holds no rubric dimension and no holistic score")
        return RubricJudgment((), True, holistic, method)
    scores = _dimension_scores(container, rubric, confidence_scale)
    return RubricJudgment(scores, False, None, method)


def parse_ranking(
    text: str, structured: Mapping[str, Any] | None, letters: Sequence[str], rubric: Rubric
) -> RankingJudgment:
    """Per-letter rubric scores under ``evaluations`` and a ``ranking`` that is a permutation."""
    obj, method = extract_json(text, structured)
    keys = _normalise_keys(obj)
    if "evaluations" not in keys:
        raise ParseError("missing 'evaluations'")
    by_letter: dict[str, Any] = {}
    for name, value in _mapping(keys["evaluations"], "evaluations").items():
        letter = _RESPONSE_PREFIX.sub("", str(name).strip()).upper()
        if letter in by_letter:
            raise ParseError(f"response {letter} is evaluated more than once")
        by_letter[letter] = value
    evaluations = {}
    for letter in letters:
        if letter not in by_letter:
            raise ParseError(f"missing evaluation of response {letter}")
        container = _scores_container(by_letter[letter], f"response {letter}")
        evaluations[letter] = _dimension_scores(container, rubric, None, f"response {letter}: ")
    raw_ranking = keys.get("ranking")
    if not isinstance(raw_ranking, list):
        raise ParseError("'ranking' must be a JSON array of response letters")
    ranking = tuple(_label(entry, letters, "ranking entry") for entry in raw_ranking)
    if sorted(ranking) != sorted(letters):
        raise ParseError(f"ranking {list(ranking)} is not a permutation of {list(letters)}")
    return RankingJudgment(evaluations, ranking, method)


def parse_criterion(text: str, structured: Mapping[str, Any] | None = None) -> CriterionVerdict:
    """``{"reasoning"?, "answer": Pass|Fail}``."""
    obj, method = extract_json(text, structured)
    keys = _normalise_keys(obj)
    if "answer" not in keys:
        raise ParseError("missing 'answer'")
    answer = _label(keys["answer"], ("Pass", "Fail"), "answer")
    return CriterionVerdict(answer, _reasoning(keys.get("reasoning")), method)
