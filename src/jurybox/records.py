"""Frozen value types that flow through jurybox.

``Item`` comes out of a dataset, ``WorkUnit`` is one judgment to make, ``CompletionRequest`` /
``Completion`` cross the provider boundary, and ``JudgeRecord`` is one line of judgments.jsonl.
Positions ("A", "B", ...) are what the judge saw; arms ("control", "treatment", ...) are what the
user compares. Records keep both so that bias analysis (positions) and treatment effects (arms)
read the same file.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

# 2: keys escape "|" and "\\" inside their parts (see ``unit_key``); version-1 records are
# given such a key when read, from their own fields.
RECORD_SCHEMA_VERSION = 2

POSITION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Status(StrEnum):
    """Outcome of one judgment. Only ``ok`` records enter the metrics; reports count the rest."""

    OK = "ok"
    UNPARSED = "unparsed"
    PROVIDER_ERROR = "provider_error"
    REFUSED = "refused"  # the judge or a vendor content filter declined to answer
    TRUNCATED = "truncated"  # max_tokens reached before the answer was complete
    SKIPPED = "skipped"


# Item metadata key: False where the arms are a benchmark's own numbering of two responses
# (LLMBar's output_1 / output_2 ...), not a treatment and a control: no treatment effect is
# computed for them. Absent: the arms are what the dataset says (an experiment's arms).
ARMS_ARE_TREATMENTS = "arms_are_treatments"


@dataclass(frozen=True, slots=True)
class Item:
    """One question with the responses to judge, keyed by arm (e.g. control / treatment)."""

    id: str
    question: str
    responses: Mapping[str, str]
    contexts: tuple[str, ...] = ()
    expected_answer: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    authors: Mapping[str, str] = field(default_factory=dict)
    human: Mapping[str, Any] = field(default_factory=dict)

    @property
    def arms(self) -> tuple[str, ...]:
        return tuple(self.responses)


def _escape_part(part: str) -> str:
    return part.replace("\\", "\\\\").replace("|", "\\|")


def ranking_ordering(order: Sequence[str]) -> str:
    """The ``presentation_order`` of a ranking: the arms in the order shown, joined by ``>``,
    each arm's own ``\\`` and ``>`` escaped with a backslash, so that no two orders share a name
    (arms ``a``, ``b`` and ``a>b>a`` once gave ``a>b>a>b>a`` twice). Names of arms without ``>``
    or ``\\`` are unchanged."""
    if not any(">" in arm or "\\" in arm for arm in order):
        return ">".join(order)
    return ">".join(arm.replace("\\", "\\\\").replace(">", "\\>") for arm in order)


def ranking_arms(ordering: str) -> list[str]:
    """The arms of a ``ranking_ordering`` text, in order, each arm's escapes undone (its
    inverse)."""
    if "\\" not in ordering:
        return ordering.split(">")
    arms: list[str] = []
    current: list[str] = []
    chars = iter(ordering)
    for char in chars:
        if char == "\\":
            current.append(next(chars, ""))
        elif char == ">":
            arms.append("".join(current))
            current = []
        else:
            current.append(char)
    arms.append("".join(current))
    return arms


def unit_key(
    item_id: str,
    judge: str,
    ordering: str,
    repeat: int,
    *,
    criterion: str | None = None,
    retest: bool = False,
) -> str:
    """The record key of one judgment: its parts joined by ``|``, each part's own ``\\`` and
    ``|`` escaped with a backslash, so no two different tuples share a key (item ``x|j`` with
    judge ``k`` and item ``x`` with judge ``j|k`` once did). Keys of ids without ``|`` or ``\\``
    are unchanged from schema version 1."""
    parts = [item_id, judge, ordering, f"r{repeat}"]
    if criterion is not None:
        parts.append(f"c:{criterion}")
    if retest:
        parts.append("retest")
    key = "|".join(parts)
    if "\\" not in key and key.count("|") == len(parts) - 1:
        return key  # no part holds a "|" or "\\": escaping would change nothing
    return "|".join(_escape_part(part) for part in parts)


def record_key(data: Mapping[str, Any]) -> str:
    """The key of a record read from a file: as written, or rebuilt from the record's own fields
    where the key written could collide: the migration of old files (a version-1 record; a
    ranking record whose arm names hold ``>`` or ``\\``, see ``ranking_ordering``)."""
    version = data.get("schema_version")
    if version is None:
        return str(data["key"])  # not written by jurybox: the key as given
    ordering = _escaped_ranking_order(data)
    if ordering is None:
        if int(version) >= RECORD_SCHEMA_VERSION:
            return str(data["key"])  # current: the key as written
        ordering = str(data["presentation_order"])
    return unit_key(
        str(data["query_id"]),
        str(data["judge_name"]),
        ordering,
        int(data.get("repeat") or 0),
        criterion=data.get("criterion"),
        retest=bool(data.get("retest")),
    )


def _escaped_ranking_order(data: Mapping[str, Any]) -> str | None:
    """A ranking record's ordering rebuilt from its positions when an arm's name holds ``>`` or
    ``\\`` (files written before ``ranking_ordering`` escaped them, whose keys could collide);
    None for every other record, whose key stays as written."""
    positions = data.get("positions")
    if data.get("mode") != "ranking" or not isinstance(positions, Mapping):
        return None
    order = [str(positions[letter]) for letter in sorted(positions)]
    if not any(">" in arm or "\\" in arm for arm in order):
        return None
    return ranking_ordering(order)


@dataclass(frozen=True)  # no slots: ``key`` is a cached_property
class WorkUnit:
    """One judgment to make: item x judge x ordering x repeat (x retest).

    ``order`` lists the arms in the order they are shown (position A first). ``ordering`` is the
    human-readable name of that order ("control_first", "treatment_first", "single", or the
    arms joined by ">" for rankings: ``ranking_ordering``).
    """

    item_id: str
    judge: str
    ordering: str
    order: tuple[str, ...]
    repeat: int = 0
    retest: bool = False
    criterion: str | None = None

    @functools.cached_property
    def key(self) -> str:
        """Stable identity used for resume; contains only what defines the judgment (worked
        out once per unit: a run asks for it when it plans, resumes and records)."""
        return unit_key(
            self.item_id,
            self.judge,
            self.ordering,
            self.repeat,
            criterion=self.criterion,
            retest=self.retest,
        )

    def positions(self) -> dict[str, str]:
        """Map position letter -> arm, as shown to the judge."""
        return {POSITION_LETTERS[i]: arm for i, arm in enumerate(self.order)}


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """What a provider is asked. ``system`` is static (instructions, rubric, few-shot) and comes
    first so vendor prompt caching applies; ``user`` carries the variable content.

    ``response_schema`` is a JSON Schema for native structured output where the vendor has it;
    ``schema_name`` names it for vendors that want a name. ``temperature=None`` omits the
    parameter. ``seed`` is passed through where a vendor supports it.
    """

    system: str
    user: str
    max_tokens: int
    temperature: float | None = 0.0
    response_schema: Mapping[str, Any] | None = None
    schema_name: str = "judgment"
    seed: int | None = None

    def prompt_hash(self) -> str:
        """Hash of everything the judge reads (not of the parameters)."""
        text = json.dumps(
            {"system": self.system, "user": self.user, "schema": self.response_schema},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


FinishReason = Literal["stop", "length", "refusal", "content_filter", "other"]


@dataclass(frozen=True, slots=True)
class RateLimits:
    """What a provider said about this key's rate limits in one response; ``None``: not said.

    Limits are per minute (what every vendor's headers announce). ``*_reset_s`` is how long
    until that budget is full again; ``retry_after_s`` the server's explicit "come back in".
    Read by ``providers/_rate_headers.py``; the adaptive limiter paces to it.
    """

    requests_limit: float | None = None
    requests_remaining: float | None = None
    requests_reset_s: float | None = None
    tokens_limit: float | None = None
    tokens_remaining: float | None = None
    tokens_reset_s: float | None = None
    retry_after_s: float | None = None

    def __bool__(self) -> bool:
        return any(getattr(self, spec.name) is not None for spec in dataclasses.fields(self))


@dataclass(frozen=True, slots=True)
class Completion:
    """A provider's answer: raw text (never altered), usage and timing.

    ``structured`` is set when the vendor returned native structured output (a parsed JSON
    object or a forced tool call's input); the parser prefers it to ``text``.
    """

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    latency_ms: float | None = None
    finish_reason: FinishReason = "stop"
    structured: Mapping[str, Any] | None = None
    refusal: str | None = None
    # The response's rate-limit headers: for the limiter, never cached or recorded.
    rate_limits: RateLimits | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class DimensionScore:
    """One rubric dimension's score for one response, as the judge gave it."""

    name: str
    score: float
    confidence: float | None = None
    reasoning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)  # no slots: ``to_dict`` reads the instance dict
class JudgeRecord:
    """One line of judgments.jsonl: a judgment, its provenance and its raw text.

    Positional fields (``preference``, ``scores_response_a`` ...) say what the judge saw;
    arm fields (``preferred_arm``, ``scores``, ``overall``, ``ranking``) are mapped back.
    """

    key: str
    run_id: str | None  # None: records made outside a run (tests, the Python API)
    query_id: str
    judge_name: str
    judge_model: str
    judge_vendor: str
    mode: str
    presentation_order: str
    positions: Mapping[str, str]
    status: Status
    parse_success: bool
    raw_response: str | None
    timestamp: str | None
    repeat: int = 0
    retest: bool = False
    criterion: str | None = None
    error: str | None = None
    parse_method: str | None = None
    holistic_fallback: bool = False
    # pairwise, positional
    response_a_label: str | None = None
    response_b_label: str | None = None
    preference: str | None = None  # "A" | "B" | "tie"
    # False when each response was scored alone (an imported rating strategy): the positions are
    # a naming, not a presentation, so position-bias tests must leave the record out.
    positions_shown: bool = True
    confidence: str | None = None  # pairwise verdict confidence: high | medium | low
    preference_reasoning: str | None = None
    scores_response_a: Mapping[str, float] | None = None
    scores_response_b: Mapping[str, float] | None = None
    # mapped back to arms
    preferred_arm: str | None = None  # arm name, "tie", or None when unparsed
    scores: Mapping[str, Mapping[str, float]] | None = None  # arm -> dimension -> score
    confidences: Mapping[str, Mapping[str, float]] | None = None  # arm -> dimension -> conf
    overall: Mapping[str, float] | None = None  # arm -> weighted overall after gates
    gate_failures: Mapping[str, list[str]] | None = None  # arm -> failed gate dimensions
    safety_flags: Mapping[str, str] | None = None  # arm -> safety pattern that fired
    ranking: list[str] | None = None  # arms, best first
    verdict: str | None = None  # criterion: "Pass" | "Fail"
    # provenance and usage
    prompt_hash: str | None = None
    latency_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    attempts: int = 1
    cache_hit: bool = False
    finish_reason: str | None = None
    local_judge: bool = False
    judge_family: str | None = None  # config `family`, matched against dataset authors
    # Code points UTF-8 cannot encode (lone surrogates) replaced by U+FFFD in this record's text.
    text_replaced: int = 0
    # Size in bytes of the judge's answer when it was cut to pipeline.max_answer_bytes.
    answer_cut_bytes: int | None = None
    # The provider batch that answered this record (``--batch``); None for a synchronous call.
    batch_id: str | None = None
    schema_version: int = RECORD_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """A shallow dict of the fields (mappings are shared, not copied; status as a string).

        ``dataclasses.asdict`` deep-copies every nested mapping, which dominated writing and
        analysing tens of thousands of records; the nested values are already plain JSON data.
        """
        values = self.__dict__  # faster than getattr per field; the fields' order is kept
        data = {name: values[name] for name in _RECORD_FIELDS}
        data["status"] = self.status.value
        return data

    def to_json(self) -> str:
        """``json.dumps(self.to_dict(), ensure_ascii=False)``."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeRecord:
        """A record read back (a line of judgments.jsonl): unknown keys ignored, an old schema
        migrated; a missing field is a ``TypeError``, as from the constructor."""
        values = {k: v for k, v in data.items() if k in _RECORD_FIELD_SET}
        values["status"] = Status(values["status"])
        values["key"] = record_key(data)
        values["schema_version"] = RECORD_SCHEMA_VERSION  # migrated (see ``record_key``)
        return cls(**values)


# Computed once: ``dataclasses.fields`` per record was a visible share of reading a large run.
_RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(JudgeRecord))
_RECORD_FIELD_SET: frozenset[str] = frozenset(_RECORD_FIELDS)
