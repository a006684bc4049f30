"""The two Chat Completions adapters against a local wire server: ``openai`` through the real
SDK and ``openai_compatible`` through its aiohttp client. Every test that uses ``make_provider``
runs for both, so the lean client is held to exactly the SDK adapter's behaviour.

Also covers the shared adapter helpers in ``providers/_common.py`` (Retry-After, cost, scrubbing).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError
from werkzeug import Request, Response

from jurybox.config import JudgeConfig
from jurybox.errors import (
    AuthError,
    BadRequestError,
    ProviderError,
    RateLimitError,
    TransientError,
)
from jurybox.pricing import completion_cost_usd
from jurybox.providers import create_provider
from jurybox.providers._chat_format import is_strict_compatible
from jurybox.providers._common import (
    MalformedResponseError,
    classify_common,
    parse_retry_after,
    safe_schema_name,
    scrub_secrets,
)
from jurybox.providers.base import Provider
from jurybox.providers.openai import OpenAIProvider, create
from jurybox.providers.openai_compatible import OpenAICompatibleProvider
from jurybox.records import Completion, CompletionRequest

PATH = "/v1/chat/completions"
LEAK_KEY_VALUE = "sk-test-LEAKCHECK-123"  # what the `api_key_env` fixture's variable holds
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"enum": ["A", "B", "TIE"]},
        "confidence": {"enum": ["high", "medium", "low"]},
        "reasoning": {"type": "string"},
    },
    "required": ["verdict", "confidence", "reasoning"],
    "additionalProperties": False,
}
VERDICT_TEXT = '{"verdict": "A", "confidence": "high", "reasoning": "A is right"}'


def chat_body(
    content: str | None = VERDICT_TEXT,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    usage: dict[str, Any] | None = None,
    model: str = "gpt-test-2025-01-01",
) -> dict[str, Any]:
    """A ``chat.completion`` response body as the API sends it."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": refusal},
                "logprobs": None,
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage
        or {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 64, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 12, "audio_tokens": 0},
        },
    }


def error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def request(**overrides: Any) -> CompletionRequest:
    values: dict[str, Any] = {
        "system": "You are a strict judge. Static rubric text.",
        "user": "Question and fenced responses.",
        "max_tokens": 256,
        "temperature": 0.0,
        "response_schema": VERDICT_SCHEMA,
        "schema_name": "pairwise verdict",
        "seed": 7,
    }
    values.update(overrides)
    return CompletionRequest(**values)


CHAT_PROVIDERS = ("openai", "openai_compatible")


@pytest.fixture(params=CHAT_PROVIDERS)
def make_provider(
    wire: Any, api_key_env: str, request: pytest.FixtureRequest
) -> Callable[..., Provider]:
    def build(**config: Any) -> Provider:
        settings: dict[str, Any] = {
            "provider": request.param,
            "model": "gpt-test",
            "api_key_env": api_key_env,
            "base_url": wire.url("/v1"),
            "timeout_s": 5.0,
        }
        settings.update(config)
        return create_provider("judge1", JudgeConfig(**settings))

    return build


async def _complete(provider: Provider, req: CompletionRequest) -> Completion:
    try:
        return await provider.complete(req)
    finally:
        await provider.aclose()


def failure(provider: Provider, req: CompletionRequest | None = None) -> ProviderError:
    """Run one call that must fail and return the classified error."""

    async def go() -> ProviderError:
        try:
            await provider.complete(req or request())
        except Exception as exc:
            return provider.classify_error(exc)
        finally:
            await provider.aclose()  # the next asyncio.run is another event loop
        raise AssertionError("the call was expected to fail")

    return asyncio.run(go())


# --- success and request bodies -------------------------------------------------------------


def test_success_maps_text_usage_and_native_json(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())
    provider = make_provider(
        price_input_per_mtok=2.0, price_output_per_mtok=8.0, price_cached_input_per_mtok=0.5
    )
    judge = provider._judge

    completion = asyncio.run(_complete(provider, request()))

    assert completion.text == VERDICT_TEXT
    assert completion.structured == {
        "verdict": "A",
        "confidence": "high",
        "reasoning": "A is right",
    }
    assert completion.finish_reason == "stop"
    assert completion.model == "gpt-test-2025-01-01"
    assert (completion.input_tokens, completion.output_tokens) == (120, 30)
    assert (completion.cached_input_tokens, completion.reasoning_tokens) == (64, 12)
    assert completion.latency_ms is not None and completion.latency_ms > 0
    # 56 uncached input at $2, 64 cached at $0.5, 30 output at $8 (per million tokens)
    assert completion_cost_usd(judge, completion) == pytest.approx((56 * 2 + 64 * 0.5 + 240) / 1e6)
    assert wire.request_count == 1


def test_request_body_carries_configured_parameters(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())
    provider = make_provider(extra_body={"top_k": 5})

    asyncio.run(_complete(provider, request()))

    (body,) = wire.bodies()
    assert body["model"] == "gpt-test"
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == "You are a strict judge. Static rubric text."
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 256 and "max_completion_tokens" not in body
    assert body["seed"] == 7
    assert body["top_k"] == 5  # extra_body is merged into the JSON body
    spec = body["response_format"]
    assert spec["type"] == "json_schema"
    assert spec["json_schema"] == {
        "name": "pairwise_verdict",
        "schema": VERDICT_SCHEMA,
        "strict": True,
    }
    assert wire.headers()[0]["Authorization"].startswith("Bearer sk-test-")


def test_temperature_none_and_max_completion_tokens(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())
    provider = make_provider(max_tokens_param="max_completion_tokens")

    asyncio.run(_complete(provider, request(temperature=None, seed=None)))

    (body,) = wire.bodies()
    assert "temperature" not in body
    assert "seed" not in body
    assert body["max_completion_tokens"] == 256 and "max_tokens" not in body


def test_non_strict_schema_is_sent_without_strict(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())
    loose = {k: v for k, v in VERDICT_SCHEMA.items() if k != "additionalProperties"}

    asyncio.run(_complete(make_provider(), request(response_schema=loose)))

    spec = wire.bodies()[0]["response_format"]["json_schema"]
    assert "strict" not in spec
    assert spec["schema"] == loose


def test_structured_output_off_sends_no_response_format(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())

    completion = asyncio.run(_complete(make_provider(structured_output=False), request()))

    assert "response_format" not in wire.bodies()[0]
    assert completion.structured is None  # JSON-looking text is not "native" output
    assert completion.text == VERDICT_TEXT


def test_compatible_server_without_key(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())
    provider = make_provider(api_key_env=None)

    asyncio.run(_complete(provider, request(response_schema=None)))

    sent = wire.headers()[0]
    if isinstance(provider, OpenAIProvider):  # the SDK refuses to run without some key
        assert sent["Authorization"] == "Bearer not-needed"
    else:
        assert "Authorization" not in sent
    assert "response_format" not in wire.bodies()[0]


@pytest.mark.parametrize(
    ("name", "kind"),
    [("openai", OpenAIProvider), ("openai_compatible", OpenAICompatibleProvider)],
)
def test_registry_builds_the_chat_adapters(
    api_key_env: str, leak_key: str, name: str, kind: type
) -> None:
    judge = JudgeConfig(
        provider=name, model="gpt-test", api_key_env=api_key_env, base_url="http://127.0.0.1:9/v1"
    )
    provider = create_provider("j", judge)
    assert isinstance(provider, kind)
    assert (provider.vendor, provider.model, provider.is_local) == (name, "gpt-test", False)
    assert "127.0.0.1:9" in repr(provider) and leak_key not in repr(provider)


def test_openai_compatible_needs_a_base_url_and_a_model() -> None:
    with pytest.raises(ValidationError, match="needs a `base_url`"):
        JudgeConfig(provider="openai_compatible", model="m")
    with pytest.raises(ValidationError, match="needs a `model`"):
        JudgeConfig(provider="openai_compatible", base_url="http://127.0.0.1:9/v1")


def test_both_adapters_send_the_same_body(wire: Any, api_key_env: str) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_json(chat_body())
    for name in CHAT_PROVIDERS:
        judge = JudgeConfig(
            provider=name,
            model="gpt-test",
            api_key_env=api_key_env,
            base_url=wire.url("/v1"),
            extra_body={"top_k": 5, "repetition_penalty": 1.1},
            max_tokens_param="max_completion_tokens",
        )
        asyncio.run(_complete(create_provider("j", judge), request()))

    sdk_body, lean_body = wire.bodies()
    assert sdk_body == lean_body
    assert [h["Authorization"] for h in wire.headers()] == [f"Bearer {LEAK_KEY_VALUE}"] * 2


def test_redirect_is_not_followed(wire: Any, api_key_env: str) -> None:
    # A redirect would resend the body (and the key) somewhere the config never named.
    wire.server.expect_request(PATH, method="POST").respond_with_response(
        Response("", status=307, headers={"Location": "http://127.0.0.1:9/elsewhere"})
    )
    judge = JudgeConfig(
        provider="openai_compatible",
        model="m",
        api_key_env=api_key_env,
        base_url=wire.url("/v1"),
    )

    error = failure(create_provider("j", judge))

    assert isinstance(error, BadRequestError) and error.status_code == 307
    assert wire.request_count == 1


def test_plain_text_error_body_is_readable_and_scrubbed(wire: Any, api_key_env: str) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_response(
        Response(f"upstream down; auth was Bearer {LEAK_KEY_VALUE}", status=502)
    )
    judge = JudgeConfig(
        provider="openai_compatible", model="m", api_key_env=api_key_env, base_url=wire.url("/v1")
    )

    error = failure(create_provider("j", judge))

    assert isinstance(error, TransientError) and error.status_code == 502
    assert str(error).startswith("HTTP 502: upstream down")
    assert LEAK_KEY_VALUE not in str(error)


# --- finish reasons ---------------------------------------------------------------------------


def test_refusal(wire: Any, make_provider: Any) -> None:
    body = chat_body(None, refusal="I can't help with that.")
    wire.server.expect_request(PATH, method="POST").respond_with_json(body)

    completion = asyncio.run(_complete(make_provider(), request()))

    assert completion.finish_reason == "refusal"
    assert completion.refusal == "I can't help with that."
    assert completion.text == "" and completion.structured is None


def test_content_filter(wire: Any, make_provider: Any) -> None:
    body = chat_body(None, finish_reason="content_filter")
    wire.server.expect_request(PATH, method="POST").respond_with_json(body)

    completion = asyncio.run(_complete(make_provider(), request()))

    assert completion.finish_reason == "content_filter"
    assert completion.refusal is None


def test_length_truncation(wire: Any, make_provider: Any) -> None:
    body = chat_body('{"verdict": "A", "confid', finish_reason="length")
    wire.server.expect_request(PATH, method="POST").respond_with_json(body)

    completion = asyncio.run(_complete(make_provider(), request(max_tokens=8)))

    assert completion.finish_reason == "length"
    assert completion.text == '{"verdict": "A", "confid'
    assert completion.structured is None
    assert wire.bodies()[0]["max_tokens"] == 8


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({}, None),
    ],
)
def test_rate_limit_then_success(
    wire: Any, make_provider: Any, headers: dict[str, str], expected: float | None
) -> None:
    server = wire.server
    server.expect_ordered_request(PATH, method="POST").respond_with_response(
        wire.json(error_body("Rate limit reached", "requests"), 429, headers)
    )
    server.expect_ordered_request(PATH, method="POST").respond_with_json(chat_body())
    provider = make_provider()

    error = failure(provider)
    assert isinstance(error, RateLimitError) and error.retryable
    assert error.retry_after == expected
    assert error.status_code == 429
    assert wire.request_count == 1  # the SDK did not retry on its own

    completion = asyncio.run(_complete(provider, request()))
    assert completion.finish_reason == "stop"
    assert wire.request_count == 2


def test_rate_limit_retry_after_http_date(wire: Any, make_provider: Any) -> None:
    when = datetime.now(UTC) + timedelta(seconds=30)
    headers = {"Retry-After": email.utils.format_datetime(when, usegmt=True)}
    wire.server.expect_request(PATH, method="POST").respond_with_response(
        wire.json(error_body("slow down"), 429, headers)
    )

    error = failure(make_provider())

    assert isinstance(error, RateLimitError)
    assert error.retry_after is not None and 25 <= error.retry_after <= 30


def test_repeated_5xx_then_success_one_request_per_call(wire: Any, make_provider: Any) -> None:
    server = wire.server
    for status in (500, 503, 502):
        server.expect_ordered_request(PATH, method="POST").respond_with_response(
            wire.json(error_body("server trouble", "server_error"), status)
        )
    server.expect_ordered_request(PATH, method="POST").respond_with_json(chat_body())
    provider = make_provider()

    for attempt, status in enumerate((500, 503, 502), start=1):
        error = failure(provider)
        assert isinstance(error, TransientError) and error.retryable
        assert error.status_code == status
        assert wire.request_count == attempt

    completion = asyncio.run(_complete(provider, request()))
    assert completion.text == VERDICT_TEXT
    assert wire.request_count == 4
    server.check_assertions()


def test_timeout_is_transient_and_bounded(wire: Any, make_provider: Any) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_handler(
        wire.slow(2.0, chat_body())
    )
    provider = make_provider(timeout_s=0.3)

    started = time.perf_counter()
    error = failure(provider)
    elapsed = time.perf_counter() - started

    assert isinstance(error, TransientError)
    assert "timed out" in str(error)
    assert elapsed < 1.8  # the client gave up; it did not wait for the slow server
    assert wire.request_count <= 1


@pytest.mark.parametrize(
    "response",
    [
        Response('{"id": "chatcmpl-x", "choices": [', status=200, mimetype="application/json"),
        Response('{"unexpected": true}', status=200, mimetype="application/json"),
        Response("<html>bad gateway page</html>", status=200, mimetype="text/html"),
    ],
    ids=["truncated-json", "wrong-shape", "not-json"],
)
def test_malformed_body_is_transient(wire: Any, make_provider: Any, response: Response) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_response(response)

    error = failure(make_provider())

    assert isinstance(error, TransientError), error
    assert wire.request_count == 1


def echo_auth_header(request: Request) -> Response:
    """A server that echoes the key back, as some proxies and vendors do in error bodies."""
    auth = request.headers.get("Authorization", "")
    body = error_body(f"Incorrect API key provided: {auth}. Header was {auth}")
    return Response(json.dumps(body), status=401, mimetype="application/json")


def test_auth_error_is_not_retried_and_never_leaks_the_key(
    wire: Any, make_provider: Any, assert_no_leak: Any, leak_key: str
) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_handler(echo_auth_header)
    provider = make_provider()

    async def go() -> tuple[BaseException, ProviderError]:
        try:
            await provider.complete(request())
        except Exception as exc:
            return exc, provider.classify_error(exc)
        raise AssertionError("expected a 401")

    raw, error = asyncio.run(go())

    (_request, sent) = wire.server.log[0]
    assert leak_key in sent.get_data(as_text=True)  # it was echoed: the checks below mean something
    assert isinstance(error, AuthError) and not error.retryable
    assert error.status_code == 401
    assert wire.request_count == 1
    assert_no_leak(error, error.args, provider)
    if not isinstance(provider, OpenAIProvider):
        # The SDK's own exception carries the echoed body verbatim (the pipeline only ever
        # shows the classified error); the lean client scrubs before it raises.
        assert_no_leak(raw, raw.args)
    asyncio.run(provider.aclose())


@pytest.mark.parametrize(
    ("status", "kind"),
    [(403, AuthError), (400, BadRequestError), (404, BadRequestError), (422, BadRequestError)],
)
def test_status_classification(
    wire: Any, make_provider: Any, status: int, kind: type[ProviderError]
) -> None:
    wire.server.expect_request(PATH, method="POST").respond_with_response(
        wire.json(error_body(f"status {status}"), status)
    )

    error = failure(make_provider())

    assert type(error) is kind
    assert not error.retryable
    assert error.status_code == status
    assert wire.request_count == 1


def test_missing_key_fails_before_any_request(
    wire: Any, make_provider: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JURYBOX_UNSET_KEY", raising=False)
    # Like every adapter, the key is read when the judge is built: no call is ever attempted.
    with pytest.raises(AuthError, match="JURYBOX_UNSET_KEY"):
        make_provider(api_key_env="JURYBOX_UNSET_KEY")
    assert wire.request_count == 0


def test_vendor_default_key_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    # No base_url: the vendor's variable is read, when the judge is built (no network access).
    with pytest.raises(AuthError, match="OPENAI_API_KEY"):
        create("j", JudgeConfig(provider="openai", model="gpt-test"))


def test_connection_refused_is_transient(make_provider: Any, dead_port: int) -> None:
    error = failure(make_provider(base_url=f"http://127.0.0.1:{dead_port}/v1"))

    assert isinstance(error, TransientError)


def test_unknown_exception_is_not_retryable(make_provider: Any) -> None:
    error = make_provider().classify_error(KeyError("bug"))
    assert type(error) is ProviderError and not error.retryable


# --- shared helpers (providers/_common.py) ---------------------------------------------------


def test_parse_retry_after_forms() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"Retry-After": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 01 Jan 2025 12:00:42 GMT"}, now=now) == 42.0
    assert parse_retry_after({"retry-after": "Wed, 01 Jan 2025 11:00:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({"retry-after": "-4"}) is None
    assert parse_retry_after({}) is None
    assert parse_retry_after(None) is None


def test_cost_rules() -> None:
    done = Completion(
        text="x", model="m", input_tokens=1000, output_tokens=100, cached_input_tokens=400
    )
    priced = JudgeConfig(
        provider="openai", model="m", price_input_per_mtok=1.0, price_output_per_mtok=4.0
    )
    # cached tokens default to the input price
    assert completion_cost_usd(priced, done) == pytest.approx((1000 * 1.0 + 100 * 4.0) / 1e6)
    unpriced = JudgeConfig(provider="openai", model="m")
    assert completion_cost_usd(unpriced, done) is None
    assert completion_cost_usd(JudgeConfig(provider="local"), done) == 0.0
    no_usage = Completion(text="x", model="m")
    assert completion_cost_usd(priced, no_usage) is None


def test_scrub_secrets() -> None:
    text = "key sk-proj-abcdef123456 and Bearer abc.def-123456789 api_key=hunter2hunter2 XYZ"
    scrubbed = scrub_secrets(text, ["XYZ"])
    for secret in ("sk-proj-abcdef123456", "abc.def-123456789", "hunter2hunter2", "XYZ"):
        assert secret not in scrubbed
    assert "Bearer [redacted]" in scrubbed
    assert len(scrub_secrets("a" * 5000)) <= 301


def test_classify_common() -> None:
    assert isinstance(classify_common(TimeoutError()), TransientError)
    assert isinstance(classify_common(ConnectionResetError()), TransientError)
    assert isinstance(classify_common(MalformedResponseError("x")), TransientError)
    already = RateLimitError("r", retry_after=1.0)
    assert classify_common(already) is already
    assert classify_common(KeyError("k")) is None


def test_strict_schema_rules_and_names() -> None:
    assert is_strict_compatible(VERDICT_SCHEMA)
    nested = {
        "type": "object",
        "properties": {"scores": {"type": "object", "properties": {"a": {"type": "integer"}}}},
        "required": ["scores"],
        "additionalProperties": False,
    }
    assert not is_strict_compatible(nested)  # the inner object allows extra properties
    partial = {**VERDICT_SCHEMA, "required": ["verdict"]}
    assert not is_strict_compatible(partial)
    assert safe_schema_name("pairwise verdict (v2)") == "pairwise_verdict_v2"
    assert safe_schema_name("!!!") == "judgment"
