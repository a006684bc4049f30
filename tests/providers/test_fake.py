"""The scripted fake provider: determinism, behaviours, call counting, simulated failures."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import jsonschema
import pytest

from jurybox.config import FakeJudgeConfig, JudgeConfig
from jurybox.errors import ConfigError, TransientError
from jurybox.pricing import completion_cost_usd
from jurybox.providers import Provider, create_provider
from jurybox.providers.fake import FakeProvider, create, fenced_responses, preference_order
from jurybox.records import Completion, CompletionRequest

PAIRWISE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"enum": ["A", "B", "TIE"]},
        "confidence": {"enum": ["high", "medium", "low"]},
        "reasoning": {"type": "string"},
    },
    "required": ["verdict", "confidence", "reasoning"],
}
RUBRIC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "object",
            "properties": {
                "accuracy": {"type": "integer", "minimum": 1, "maximum": 10},
                "clarity": {"type": "number", "minimum": 0, "exclusiveMaximum": 2},
            },
            "required": ["accuracy", "clarity"],
        },
        "notes": {"type": ["string", "null"], "minLength": 60},
        "flags": {"type": "array", "items": {"type": "boolean"}, "minItems": 2, "maxItems": 4},
        "kind": {"const": "rubric"},
        "extra": {"$ref": "#/$defs/extra"},
    },
    "required": ["scores", "notes", "flags", "kind", "extra"],
    "$defs": {"extra": {"anyOf": [{"type": "null"}, {"type": "integer", "exclusiveMinimum": 3}]}},
}
PAIRWISE_RUBRIC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "response_a": {
            "type": "object",
            "properties": {"accuracy": {"type": "integer", "minimum": 1, "maximum": 10}},
            "required": ["accuracy"],
        },
        "response_b": {
            "type": "object",
            "properties": {"accuracy": {"type": "integer", "minimum": 1, "maximum": 10}},
            "required": ["accuracy"],
        },
        "verdict": {"enum": ["A", "B", "TIE"]},
    },
    "required": ["response_a", "response_b", "verdict"],
}
RANKING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "evaluations": {
            "type": "object",
            "properties": {
                letter: {"type": "object", "properties": {"overall": {"type": "integer"}}}
                for letter in "ABC"
            },
            "required": ["A", "B", "C"],
        },
        "ranking": {"type": "array", "items": {"enum": ["A", "B", "C"]}, "minItems": 3},
    },
    "required": ["evaluations", "ranking"],
}


def pair_prompt(a: str, b: str) -> str:
    return f"Question?\n<response_a>\n{a}\n</response_a>\n<response_b>\n{b}\n</response_b>\n"


def request(user: str = "", schema: dict[str, Any] | None = PAIRWISE) -> CompletionRequest:
    return CompletionRequest(
        system="judge", user=user or pair_prompt("x", "y"), max_tokens=64, response_schema=schema
    )


def complete(provider: FakeProvider, req: CompletionRequest) -> Completion:
    return asyncio.run(provider.complete(req))


def answer(provider: FakeProvider, req: CompletionRequest) -> Any:
    return json.loads(complete(provider, req).text)


def test_satisfies_the_provider_protocol_and_registry() -> None:
    provider = create_provider("j", JudgeConfig(provider="fake"))
    assert isinstance(provider, Provider)
    assert isinstance(provider, FakeProvider)
    assert (provider.vendor, provider.model, provider.is_local) == ("fake", "fake", False)


@pytest.mark.parametrize("schema", [PAIRWISE, RUBRIC, PAIRWISE_RUBRIC, RANKING])
def test_schema_answers_are_valid(schema: dict[str, Any]) -> None:
    provider = FakeProvider()
    for i in range(25):
        completion = complete(provider, request(f"prompt {i}", schema))
        value = json.loads(completion.text)
        jsonschema.validate(value, schema)
        assert completion.structured == value  # offered as native structured output


def test_schema_answers_are_deterministic_per_prompt_and_seed() -> None:
    prompts = [request(f"prompt {i}", RUBRIC) for i in range(10)]
    first = [answer(FakeProvider(seed=1), r) for r in prompts]
    again = [answer(FakeProvider(seed=1), r) for r in prompts]
    other_seed = [answer(FakeProvider(seed=2), r) for r in prompts]
    assert first == again
    assert first != other_seed
    assert len({json.dumps(a, sort_keys=True) for a in first}) > 1  # prompts matter too


@pytest.mark.parametrize(
    ("behavior", "a", "b", "verdict"),
    [
        ("first", "short", "a much longer answer", "A"),
        ("second", "a much longer answer", "short", "B"),
        ("longer", "short", "a much longer answer", "B"),
        ("longer", "a much longer answer", "short", "A"),
    ],
)
def test_pairwise_behaviors(behavior: str, a: str, b: str, verdict: str) -> None:
    provider = FakeProvider(behavior=behavior)
    assert answer(provider, request(pair_prompt(a, b)))["verdict"] == verdict


def test_random_behavior_is_seeded_and_varies_across_prompts() -> None:
    prompts = [request(pair_prompt(f"a{i}", f"b{i}")) for i in range(40)]
    verdicts = [answer(FakeProvider(behavior="random", seed=3), r)["verdict"] for r in prompts]
    assert verdicts == [
        answer(FakeProvider(behavior="random", seed=3), r)["verdict"] for r in prompts
    ]
    assert set(verdicts) == {"A", "B"}  # never TIE, and both positions occur


def test_rubric_scores_follow_the_preference() -> None:
    provider = FakeProvider(behavior="second")
    value = answer(provider, request(pair_prompt("one", "two"), PAIRWISE_RUBRIC))
    jsonschema.validate(value, PAIRWISE_RUBRIC)
    assert value["verdict"] == "B"
    assert value["response_b"]["accuracy"] == 10
    assert value["response_a"]["accuracy"] == 1


def test_ranking_follows_lengths() -> None:
    user = "".join(
        f"<response_{x}>{body}</response_{x}>"
        for x, body in zip("abc", ["mid mid", "l" * 30, "s"], strict=True)
    )
    value = answer(FakeProvider(behavior="longer"), request(user, RANKING))
    jsonschema.validate(value, RANKING)
    assert value["ranking"] == ["B", "A", "C"]
    overall = {k: v["overall"] for k, v in value["evaluations"].items()}
    assert overall["B"] > overall["A"] > overall["C"]


def test_fence_detection_variants() -> None:
    tagged = '<untrusted_response label="B">second</untrusted_response>'
    tagged = '<untrusted_response label="A">first one</untrusted_response>' + tagged
    assert fenced_responses(tagged) == [("A", "first one"), ("B", "second")]
    fenced = "Response A:\n```\nshort\n```\nResponse B:\n```text\nlonger text\n```\n"
    assert fenced_responses(fenced) == [("A", "short\n"), ("B", "longer text\n")]
    rng = random.Random(0)
    assert preference_order("no fences at all", "longer", rng) == ("A", "B")


def test_without_schema_answers_a_pairwise_verdict() -> None:
    completion = complete(FakeProvider(behavior="second"), request(pair_prompt("a", "b"), None))
    assert json.loads(completion.text)["verdict"] == "B"
    assert completion.structured is None


def test_replies_cycle_and_calls_are_counted() -> None:
    boom = ValueError("scripted failure")
    provider = FakeProvider(replies=["one", boom, Completion(text="three", model="m")])
    assert provider.calls == 0
    assert complete(provider, request()).text == "one"
    with pytest.raises(ValueError, match="scripted failure"):
        complete(provider, request())
    assert complete(provider, request()).text == "three"
    assert complete(provider, request()).text == "one"
    assert provider.calls == 4
    assert len(provider.requests) == 4
    assert not provider.classify_error(boom).retryable  # scripted bugs are not retried
    scripted = TransientError("scripted 503", status_code=503)
    assert provider.classify_error(scripted) is scripted


def test_reply_fn_sees_the_request() -> None:
    provider = FakeProvider(reply_fn=lambda req: f"len={len(req.user)}")
    assert complete(provider, request("12345")).text == "len=5"
    assert provider.calls == 1


def test_token_estimates_feed_cost() -> None:
    provider = FakeProvider(replies=["x" * 40])
    completion = complete(provider, request("u" * 395))  # system "judge" + 395 chars = 400
    assert (completion.input_tokens, completion.output_tokens) == (100, 10)
    judge = JudgeConfig(provider="fake", price_input_per_mtok=1.0, price_output_per_mtok=2.0)
    assert completion_cost_usd(judge, completion) == pytest.approx(120 / 1e6)


def test_error_rate_raises_transient_errors_reproducibly() -> None:
    def outcomes(seed: int) -> list[bool]:
        provider = FakeProvider(error_rate=0.3, seed=seed)
        results = []
        for i in range(200):
            try:
                complete(provider, request(f"p{i}"))
                results.append(True)
            except ConnectionError as exc:
                assert isinstance(provider.classify_error(exc), TransientError)
                results.append(False)
        assert provider.calls == 200
        return results

    first = outcomes(5)
    assert first == outcomes(5)
    assert 30 <= first.count(False) <= 90  # about 30 % of 200
    assert outcomes(0) != first  # another seed, another failure pattern


def test_error_rate_bounds() -> None:
    assert all(isinstance(_safe(FakeProvider(error_rate=1.0)), ConnectionError) for _ in range(3))
    with pytest.raises(ValueError):
        FakeProvider(error_rate=1.5)


def _safe(provider: FakeProvider) -> BaseException | None:
    try:
        complete(provider, request())
    except BaseException as exc:
        return exc
    return None


def test_latency_is_simulated() -> None:
    completion = complete(FakeProvider(latency_ms=30), request())
    assert completion.latency_ms is not None and completion.latency_ms >= 25


def test_create_from_config() -> None:
    judge = JudgeConfig(
        provider="fake",
        model="scripted-1",
        fake=FakeJudgeConfig(behavior="replies", replies=("r1", "r2"), seed=4),
    )
    provider = create("j", judge)
    assert provider.model == "scripted-1"
    assert [complete(provider, request()).text for _ in range(3)] == ["r1", "r2", "r1"]
    with pytest.raises(ConfigError):
        create("j", JudgeConfig(provider="fake", fake=FakeJudgeConfig(behavior="replies")))
    with pytest.raises(ValueError):
        FakeProvider(replies=["a"], reply_fn=lambda _req: "b")


def test_aclose_marks_closed() -> None:
    provider = FakeProvider()
    asyncio.run(provider.aclose())
    assert provider.closed
