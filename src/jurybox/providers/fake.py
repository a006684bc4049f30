"""A scripted judge that ships with the package, for tests, docs and dry pipelines.

Behaviours (``FakeJudgeConfig.behavior``):

* ``schema`` — a valid answer drawn from ``request.response_schema`` (enums, integer/number
  ranges, required properties, arrays), seeded by the prompt hash and ``seed``: the same prompt
  always gets the same answer, a different prompt an independent one.
* ``replies`` — cycle through the scripted raw texts.
* ``first`` / ``second`` / ``longer`` / ``random`` — a positional preference over the fenced
  responses in the prompt (``first``: A; ``second``: B; ``longer``: the longest fenced response;
  ``random``: a seeded shuffle). The schema answer then follows that preference where it is
  easy to see: an enum holding the letters picks the preferred one (never TIE), an array of
  letters is the preference order, and numbers under a property named for a position
  (``A``, ``response_a``, ``scores_b`` …) are the range maximum for the preferred response and
  the minimum for the last. Everything else (confidence, Pass/Fail, pointwise scores) is drawn
  as in ``schema``. Without a response schema the fake answers a pairwise verdict object.

Fenced responses are found as XML-like tags that mention "response"/"candidate" (labelled by a
letter where the tag or its attributes carry one), else code fences; with fewer than two found
the letters default to A and B in order and ``longer`` prefers A.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jurybox.config import FakeJudgeConfig, JudgeConfig
from jurybox.errors import ConfigError, ProviderError
from jurybox.providers._common import Stopwatch, classify_vendor_error, estimate_tokens
from jurybox.records import Completion, CompletionRequest

Reply = str | Completion | BaseException
ReplyFn = Callable[[CompletionRequest], Reply]

_PAIRWISE_DEFAULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"enum": ["A", "B", "TIE"]},
        "confidence": {"enum": ["high", "medium", "low"]},
        "reasoning": {"type": "string"},
    },
    "required": ["verdict", "confidence", "reasoning"],
}
_PREFERENCE_BEHAVIORS = ("first", "second", "longer", "random")
_BEHAVIORS = ("schema", "replies", *_PREFERENCE_BEHAVIORS)
_TAG_BLOCK = re.compile(r"<(?P<tag>[A-Za-z][\w-]*)(?P<attrs>[^>]*)>(?P<body>.*?)</(?P=tag)>", re.S)
_CODE_FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M
)
_LABEL = re.compile(r"(?i)(?:response|candidate)[\s_\"'=:-]*([A-Z])(?![A-Za-z])")
_POSITION_KEY = re.compile(r"(?i)^(?:(?:response|candidate|scores?)_?)?([A-Z])$")
_TEXT = "Scripted judgment from the fake provider."


class FakeProvider:
    """Scripted provider; ``calls`` counts every ``complete`` call, ``requests`` keeps them."""

    vendor = "fake"
    is_local = False

    def __init__(
        self,
        model: str = "fake",
        *,
        replies: Sequence[Reply] | None = None,
        reply_fn: ReplyFn | None = None,
        behavior: str | None = None,
        latency_ms: float = 0.0,
        error_rate: float = 0.0,
        seed: int = 0,
    ) -> None:
        if replies is not None and reply_fn is not None:
            raise ValueError("give either replies or reply_fn, not both")
        behavior = behavior or ("replies" if replies is not None else "schema")
        if behavior not in _BEHAVIORS:
            raise ValueError(f"unknown fake behavior {behavior!r} (allowed: {_BEHAVIORS})")
        if behavior == "replies" and reply_fn is None and not replies:
            raise ValueError("behavior 'replies' needs at least one reply")
        if not 0.0 <= error_rate <= 1.0:
            raise ValueError(f"error_rate must be within [0, 1], got {error_rate}")
        self.model = model
        self.behavior = behavior
        self.latency_ms = latency_ms
        self.error_rate = error_rate
        self.seed = seed
        self.calls = 0
        self.requests: list[CompletionRequest] = []
        self.closed = False
        self._replies: tuple[Reply, ...] = tuple(replies or ())
        self._reply_fn = reply_fn
        # Failures draw from their own stream so error_rate does not shift the answers.
        self._error_rng = random.Random(f"errors:{seed}")

    def __repr__(self) -> str:
        return f"FakeProvider(model={self.model!r}, behavior={self.behavior!r}, calls={self.calls})"

    async def complete(self, request: CompletionRequest) -> Completion:
        index = self.calls
        self.calls += 1
        self.requests.append(request)
        watch = Stopwatch()
        if self.latency_ms > 0:
            await asyncio.sleep(self.latency_ms / 1000.0)
        if self.error_rate > 0 and self._error_rng.random() < self.error_rate:
            raise ConnectionResetError("fake provider: simulated transient failure")
        reply = self._reply(request, index)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            if reply.latency_ms is None:
                reply = dataclasses.replace(reply, latency_ms=watch.elapsed_ms)
            return reply
        return self._completion(request, reply, watch)

    def _reply(self, request: CompletionRequest, index: int) -> Reply:
        if self._reply_fn is not None:
            return self._reply_fn(request)
        if self.behavior == "replies":
            return self._replies[index % len(self._replies)]
        schema = request.response_schema or _PAIRWISE_DEFAULT_SCHEMA
        rng = random.Random(f"{request.prompt_hash()}:{self.seed}")
        preference = None
        if self.behavior in _PREFERENCE_BEHAVIORS:
            preference = preference_order(request.user, self.behavior, rng)
        return json.dumps(SchemaAnswer(schema, rng, preference).value(schema, None))

    def _completion(self, request: CompletionRequest, text: str, watch: Stopwatch) -> Completion:
        structured = None
        if request.response_schema is not None:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            structured = parsed if isinstance(parsed, dict) else None
        return Completion(
            text=text,
            model=self.model,
            input_tokens=estimate_tokens(request.system + request.user),
            output_tokens=estimate_tokens(text),
            cached_input_tokens=0,
            latency_ms=watch.elapsed_ms,
            finish_reason="stop",
            structured=structured,
        )

    def classify_error(self, exc: BaseException) -> ProviderError:
        # Like the real adapters (it has no SDK errors of its own): an unknown failure is a
        # ProviderError, which is not retried.
        return classify_vendor_error(exc, "fake provider", _no_sdk_errors)

    async def aclose(self) -> None:
        self.closed = True


def _no_sdk_errors(exc: BaseException) -> ProviderError | None:
    return None


def create(judge_name: str, judge: JudgeConfig) -> FakeProvider:
    """Build a fake judge from its config (``judge.fake``; defaults to ``behavior: schema``)."""
    settings = judge.fake or FakeJudgeConfig()
    if settings.behavior == "replies" and not settings.replies:
        raise ConfigError("behavior 'replies' needs `replies`", field=f"judges.{judge_name}.fake")
    return FakeProvider(
        judge.model or "fake",
        replies=settings.replies if settings.behavior == "replies" else None,
        behavior=settings.behavior,
        latency_ms=settings.latency_ms,
        error_rate=settings.error_rate,
        seed=settings.seed,
    )


def fenced_responses(text: str) -> list[tuple[str, str]]:
    """(letter, body) of each fenced response in a prompt, in order (see the module doc)."""
    tagged = [
        match
        for match in _TAG_BLOCK.finditer(text)
        if re.search(r"(?i)response|candidate", match["tag"] + match["attrs"])
    ]
    if len(tagged) >= 2:
        found = []
        for position, match in enumerate(tagged):
            label = _LABEL.search(match["tag"] + " " + match["attrs"])
            letter = label[1].upper() if label else chr(ord("A") + position)
            found.append((letter, match["body"]))
        return found
    fences = list(_CODE_FENCE.finditer(text))
    return [(chr(ord("A") + i), m["body"]) for i, m in enumerate(fences)]


def preference_order(prompt: str, behavior: str, rng: random.Random) -> tuple[str, ...]:
    """Position letters, most preferred first, for a pairwise/ranking behaviour."""
    blocks: dict[str, str] = {}
    for letter, body in fenced_responses(prompt):
        blocks.setdefault(letter, body)  # batch prompts repeat letters: the first pair decides
    if len(blocks) < 2:
        blocks = {"A": "", "B": ""}
    letters = list(blocks)
    if behavior == "second":
        letters.insert(0, letters.pop(1))
    elif behavior == "longer":
        letters.sort(key=lambda letter: -len(blocks[letter].strip()))  # stable: ties keep order
    elif behavior == "random":
        rng.shuffle(letters)
    return tuple(letters)


class SchemaAnswer:
    """Builds one JSON value valid under a JSON Schema, optionally following a preference."""

    def __init__(
        self, root: Mapping[str, Any], rng: random.Random, preference: tuple[str, ...] | None
    ) -> None:
        self._root = root
        self._rng = rng
        self._preference = preference

    def value(self, schema: Mapping[str, Any], position: str | None) -> Any:
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._enum(list(schema["enum"]))
        for key in ("anyOf", "oneOf", "allOf"):
            if key in schema:
                return self.value(self._first_option(schema[key]), position)
        kind = _type_of(schema)
        if kind in ("integer", "number"):
            return self._number(schema, position, integer=kind == "integer")
        builders: dict[str, Callable[[Mapping[str, Any], str | None], Any]] = {
            "object": self._object,
            "array": self._array,
            "boolean": lambda _schema, _position: self._rng.random() < 0.5,
            "null": lambda _schema, _position: None,
        }
        build = builders.get(kind)
        return build(schema, position) if build is not None else _string(schema)

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        target: Any = self._root
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return self._resolve(target)

    def _first_option(self, options: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
        # Prefer a non-null branch so nullable fields still carry content.
        for option in options:
            if _type_of(self._resolve(option)) != "null":
                return option
        return options[0]

    def _enum(self, choices: list[Any]) -> Any:
        if self._preference:
            for letter in self._preference:
                for choice in choices:
                    if isinstance(choice, str) and choice.upper() == letter:
                        return choice
        return self._rng.choice(choices)

    def _object(self, schema: Mapping[str, Any], position: str | None) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        names = list(properties) + [n for n in schema.get("required", ()) if n not in properties]
        result = {}
        for name in names:
            result[name] = self.value(properties.get(name, {}), self._position(name) or position)
        return result

    def _position(self, name: str) -> str | None:
        match = _POSITION_KEY.match(name)
        if match is None or self._preference is None:
            return None
        letter = match[1].upper()
        return letter if letter in self._preference else None

    def _array(self, schema: Mapping[str, Any], position: str | None) -> list[Any]:
        prefix = schema.get("prefixItems")
        if prefix:
            return [self.value(item, position) for item in prefix]
        items = self._resolve(schema.get("items", {}))
        low = int(schema.get("minItems", 1))
        high = int(schema.get("maxItems", max(low, 3)))
        letters = self._letters_in(items)
        if letters and low <= len(letters) <= high:
            return letters
        count = self._rng.randint(low, max(low, min(high, low + 2)))
        return [self.value(items, position) for _ in range(count)]

    def _letters_in(self, items: Mapping[str, Any]) -> list[Any]:
        """The preference as a ranking, when the items are an enum of position letters."""
        if not self._preference or "enum" not in items:
            return []
        by_letter = {c.upper(): c for c in items["enum"] if isinstance(c, str) and len(c) == 1}
        return [by_letter[letter] for letter in self._preference if letter in by_letter]

    def _number(self, schema: Mapping[str, Any], position: str | None, *, integer: bool) -> Any:
        low, high = _bounds(schema, integer=integer)
        if position is not None and self._preference is not None:
            rank = self._preference.index(position)
            share = 1.0 - rank / max(1, len(self._preference) - 1)
            value = low + share * (high - low)
        else:
            value = self._rng.uniform(low, high)
        return round(value) if integer else value


def _type_of(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        non_null = [k for k in kind if k != "null"]
        kind = non_null[0] if non_null else "null"
    if isinstance(kind, str):
        return kind
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if "minimum" in schema or "maximum" in schema:
        return "number"
    return "string"


def _bounds(schema: Mapping[str, Any], *, integer: bool) -> tuple[float, float]:
    step = 1 if integer else 1e-6
    low = schema.get("minimum")
    if low is None and "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + step
    high = schema.get("maximum")
    if high is None and "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - step
    low = 0 if low is None else low
    high = low + 10 if high is None else high
    if integer:
        low, high = _ceil_int(low), int(high // 1)
    return float(low), float(max(low, high))


def _ceil_int(value: float) -> int:
    return int(-(-value // 1))


def _string(schema: Mapping[str, Any]) -> str:
    low = int(schema.get("minLength", 0))
    high = schema.get("maxLength")
    text = _TEXT + " " * max(0, low - len(_TEXT))
    return text[: int(high)] if high is not None else text
