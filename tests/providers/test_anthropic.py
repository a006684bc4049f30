"""The Anthropic adapter through the real SDK against a local server speaking /v1/messages."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from typing import Any

import pytest
import wire_anthropic as aw
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response
from wire_common import SCHEMA, body_of, run_calls, wait_for_log

from jurybox.config import JudgeConfig
from jurybox.errors import (
    AuthError,
    BadRequestError,
    MissingDependencyError,
    ProviderError,
    RateLimitError,
    TransientError,
)
from jurybox.pricing import completion_cost_usd
from jurybox.providers import anthropic as adapter
from jurybox.providers.registry import create_provider
from jurybox.records import Completion, CompletionRequest

KEY = "sk-ant-LEAKCHECK-123"
KEY_ENV = "JURYBOX_TEST_ANTHROPIC_KEY"
MODEL = "claude-test-1"
VERDICT = {"verdict": "B", "confidence": "high", "reasoning": "B cites the source."}
SYSTEM = "You are a careful judge. Rubric: accuracy first."
USER = "Question: 2+2? Response A: 4. Response B: four."


def judge_config(server: HTTPServer, **overrides: Any) -> JudgeConfig:
    values: dict[str, Any] = {
        "provider": "anthropic",
        "model": MODEL,
        "api_key_env": KEY_ENV,
        "base_url": f"http://127.0.0.1:{server.port}",
        "timeout_s": 5.0,
    }
    values.update(overrides)
    return JudgeConfig(**values)


def completion_request(**overrides: Any) -> CompletionRequest:
    values: dict[str, Any] = {
        "system": SYSTEM,
        "user": USER,
        "max_tokens": 256,
        "temperature": 0.0,
        "response_schema": SCHEMA,
        "schema_name": "pairwise verdict",
    }
    values.update(overrides)
    return CompletionRequest(**values)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    # The SDK would read these itself; the adapter must not depend on (or be redirected by) them.
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://192.0.2.1:9")


def single(provider: adapter.AnthropicProvider, req: CompletionRequest | None = None) -> Any:
    return run_calls(provider, req or completion_request())[0]


def tool_reply() -> dict[str, Any]:
    return aw.message(
        [aw.tool_use_block("pairwise_verdict", VERDICT)],
        stop_reason="tool_use",
        usage_body=aw.usage(
            input_tokens=20, output_tokens=30, cache_read=1000, cache_creation=5, thinking=4
        ),
    )


# --- success, request body, usage -------------------------------------------------------------


def test_forced_tool_call_returns_structured_result_and_usage(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(tool_reply())
    provider = adapter.create("claude", judge_config(server))

    result = single(provider)

    assert isinstance(result, Completion), result
    assert result.structured == VERDICT
    assert json.loads(result.text) == VERDICT
    assert result.finish_reason == "stop"
    assert result.model == MODEL
    # Shared convention: input counts cache reads and cache writes; cached is the read part.
    assert (result.input_tokens, result.cached_input_tokens) == (1025, 1000)
    assert (result.output_tokens, result.reasoning_tokens) == (30, 4)
    priced = judge_config(server, price_input_per_mtok=3.0, price_output_per_mtok=15.0)
    priced = priced.model_copy(update={"price_cached_input_per_mtok": 0.3})
    # 25 uncached x $3 + 1000 cached x $0.30 + 30 out x $15, per million tokens.
    assert completion_cost_usd(priced, result) == pytest.approx(825e-6)
    assert result.latency_ms is not None and result.latency_ms > 0
    server.check_assertions()


def test_request_body_carries_config_and_structured_output(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(tool_reply())
    provider = adapter.create("claude", judge_config(server, extra_body={"top_k": 5}))

    single(provider)

    body = body_of(server)
    assert body["model"] == MODEL
    assert body["max_tokens"] == 256
    assert body["messages"] == [{"role": "user", "content": USER}]
    # The static prefix is one cacheable system block.
    assert body["system"] == [
        {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}
    ]
    assert body["tools"] == [
        {
            "name": "pairwise_verdict",
            "description": adapter._TOOL_DESCRIPTION,
            "input_schema": SCHEMA,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "pairwise_verdict"}
    # Sampling parameters travel through extra_body and land at the top level of the body.
    assert body["temperature"] == 0.0
    assert body["top_k"] == 5
    assert "top_p" not in body and "seed" not in body


def test_null_temperature_and_no_schema_are_left_out(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.message([aw.text_block('{"verdict": "A"}')])
    )
    provider = adapter.create("claude", judge_config(server))

    result = single(provider, completion_request(temperature=None, response_schema=None))

    body = body_of(server)
    assert "temperature" not in body
    assert "tools" not in body and "tool_choice" not in body
    assert isinstance(result, Completion)
    assert result.text == '{"verdict": "A"}'
    assert result.structured is None


def test_structured_output_switched_off_in_config(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.message([aw.text_block("B is better.")])
    )
    provider = adapter.create("claude", judge_config(server, structured_output=False))

    result = single(provider)

    assert "tools" not in body_of(server)
    assert isinstance(result, Completion) and result.text == "B is better."


def test_key_travels_only_in_the_sdk_auth_header(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(tool_reply())
    single(adapter.create("claude", judge_config(server)))

    sent = server.log[-1][0]
    # anthropic 2.x sends api_key as a bearer token (see AsyncAnthropic._api_key_auth).
    assert sent.headers["Authorization"] == f"Bearer {KEY}"
    assert "x-api-key" not in sent.headers
    others = {k: v for k, v in sent.headers.items() if k.lower() != "authorization"}
    assert KEY not in json.dumps(others)
    assert KEY not in sent.get_data(as_text=True)
    assert KEY not in sent.url
    assert sent.headers["anthropic-version"]


# --- errors -----------------------------------------------------------------------------------


def test_429_is_a_rate_limit_with_retry_after_and_the_sdk_does_not_wait(
    server: HTTPServer,
) -> None:
    server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.error("rate_limit_error", "Number of requests has exceeded your rate limit"),
        status=429,
        headers={"retry-after": "17"},
    )
    server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_json(tool_reply())
    provider = adapter.create("claude", judge_config(server))

    started = time.monotonic()
    first, second = run_calls(provider, completion_request(), completion_request())
    elapsed = time.monotonic() - started

    assert isinstance(first, Exception)
    error = provider.classify_error(first)
    assert isinstance(error, RateLimitError)
    assert error.retry_after == 17.0
    assert error.status_code == 429
    assert elapsed < 5.0  # an SDK honouring Retry-After itself would have slept 17 s
    assert isinstance(second, Completion) and second.structured == VERDICT
    assert len(server.log) == 2
    server.check_assertions()


@pytest.mark.parametrize("status", [500, 502, 503, 529])
def test_server_errors_are_transient_and_never_retried_inside_the_sdk(
    server: HTTPServer, status: int
) -> None:
    kind = "overloaded_error" if status == 529 else "api_error"
    for _ in range(3):
        # x-should-retry asks the SDK to retry: with max_retries=0 it must not.
        server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
            aw.error(kind, "try again"), status=status, headers={"x-should-retry": "true"}
        )
    server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_json(tool_reply())
    provider = adapter.create("claude", judge_config(server))

    results = run_calls(provider, *[completion_request() for _ in range(4)])

    # The handlers are ordered and one-shot: had the SDK retried, the first call would have
    # used them all up and returned the success itself.
    *failures, last = results
    for failure in failures:
        assert isinstance(failure, Exception), failure
        error = provider.classify_error(failure)
        assert isinstance(error, TransientError), error
        assert error.status_code == status
    assert isinstance(last, Completion) and last.structured == VERDICT
    assert len(server.log) == 4  # exactly one HTTP request per complete()
    server.check_assertions()


def test_timeout_is_transient_and_bounded(server: HTTPServer, release: threading.Event) -> None:
    def stall(_: Request) -> Response:
        release.wait(10)
        return Response(json.dumps(tool_reply()), content_type="application/json")

    server.expect_request(aw.MESSAGES_PATH, method="POST").respond_with_handler(stall)
    provider = adapter.create("claude", judge_config(server, timeout_s=0.3))

    started = time.monotonic()
    result = single(provider)
    elapsed = time.monotonic() - started
    release.set()
    wait_for_log(server)

    assert isinstance(result, Exception)
    error = provider.classify_error(result)
    assert isinstance(error, TransientError)
    assert "timed out" in str(error)
    assert elapsed < 3.0
    assert len(server.log) <= 1  # the server logs a request once it has answered it
    assert len(server.log) == 1


@pytest.mark.parametrize(
    ("payload", "content_type"),
    [
        ("this is not json", "application/json"),
        ("{}", "application/json"),
        ('{"type": "message", "content": 5}', "application/json"),
        (
            '{"type": "message", "content": [], "stop_reason": "end_turn", "usage": 5}',
            "application/json",
        ),
        ("<html>bad gateway</html>", "text/html"),
    ],
)
def test_malformed_bodies_are_transient(
    server: HTTPServer, payload: str, content_type: str
) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_data(
        payload, content_type=content_type
    )
    provider = adapter.create("claude", judge_config(server))

    result = single(provider)

    assert isinstance(result, Exception), result
    assert isinstance(provider.classify_error(result), TransientError)
    assert len(server.log) == 1


def test_connection_refused_is_transient(server: HTTPServer) -> None:
    provider = adapter.create("claude", judge_config(server, base_url="http://127.0.0.1:9"))

    result = single(provider)

    assert isinstance(result, Exception)
    assert isinstance(provider.classify_error(result), TransientError)


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (401, "authentication_error", AuthError),
        (403, "permission_error", AuthError),
        (400, "invalid_request_error", BadRequestError),
        (404, "not_found_error", BadRequestError),
    ],
)
def test_client_errors_are_permanent_and_sent_once(
    server: HTTPServer, status: int, kind: str, expected: type[ProviderError]
) -> None:
    # The body echoes the key, as some proxies do: it must not reach any jurybox message.
    server.expect_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.error(kind, f"rejected credential {KEY}"), status=status
    )
    provider = adapter.create("claude", judge_config(server))

    result = single(provider)

    assert isinstance(result, Exception)
    error = provider.classify_error(result)
    assert type(error) is expected
    assert not error.retryable
    assert error.status_code == status
    assert kind in str(error)
    assert KEY not in str(error) and KEY not in repr(error)
    assert len(server.log) == 1


# --- refusals and truncation are results, not crashes -----------------------------------------


def test_refusal_is_a_finish_reason(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.message(
            [aw.text_block("I can't help with that.")],
            stop_reason="refusal",
            stop_details={"type": "refusal", "category": "cyber", "explanation": "policy"},
        )
    )
    result = single(adapter.create("claude", judge_config(server)))

    assert isinstance(result, Completion), result
    assert result.finish_reason == "refusal"
    assert result.refusal == "policy"
    assert result.text == "I can't help with that."
    assert result.structured is None


def test_max_tokens_is_a_truncation_not_a_result(server: HTTPServer) -> None:
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.message(
            [aw.tool_use_block("pairwise_verdict", {"verdict": "B"})], stop_reason="max_tokens"
        )
    )
    result = single(adapter.create("claude", judge_config(server)))

    assert isinstance(result, Completion), result
    assert result.finish_reason == "length"
    assert result.structured is None  # a cut-off tool call must not be scored
    assert json.loads(result.text) == {"verdict": "B"}  # the raw text is kept for the record


# --- construction -----------------------------------------------------------------------------


def test_missing_key_is_an_auth_error_before_any_call(
    server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(AuthError, match=KEY_ENV):
        adapter.create("claude", judge_config(server))
    assert server.log == []


def test_key_variable_left_out_defaults_to_anthropic_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = JudgeConfig(provider="anthropic", model=MODEL)  # public endpoint, no api_key_env
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY"):
        adapter.create("claude", config)

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    provider = create_provider("claude", config)  # through the registry, as the pipeline does
    assert isinstance(provider, adapter.AnthropicProvider)
    assert (provider.vendor, provider.model, provider.is_local) == ("anthropic", MODEL, False)
    assert KEY not in repr(provider)
    client = provider._connect()  # what the first call would build
    assert client.api_key == KEY
    assert str(client.base_url).rstrip("/") == adapter.DEFAULT_BASE_URL
    asyncio.run(provider.aclose())


def test_explicit_null_key_sends_no_credential_at_all(
    server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real key in the SDK's own variable must not travel to a keyless third-party server.
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.expect_oneshot_request(aw.MESSAGES_PATH, method="POST").respond_with_json(tool_reply())
    result = single(adapter.create("claude", judge_config(server, api_key_env=None)))

    assert isinstance(result, Completion), result
    sent = server.log[-1][0]
    assert "Authorization" not in sent.headers and "x-api-key" not in sent.headers
    assert KEY not in json.dumps(dict(sent.headers))


def test_missing_sdk_names_the_extra(server: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    config = judge_config(server)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
        with pytest.raises(MissingDependencyError, match=r'pip install "jurybox\[anthropic\]"'):
            adapter.create("claude", config)
    asyncio.run(adapter.create("claude", config).aclose())  # the SDK is only looked up in create


def test_no_error_text_leaks_the_key(server: HTTPServer, release: threading.Event) -> None:
    """Every failure path: the raw SDK exception and the classified error stay key-free."""
    server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
        aw.error("rate_limit_error", "slow down"), status=429, headers={"retry-after": "1"}
    )
    for status in (500, 401, 400):
        server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_json(
            aw.error("api_error", "no"), status=status
        )
    server.expect_ordered_request(aw.MESSAGES_PATH, method="POST").respond_with_data(
        "garbage", content_type="application/json"
    )
    provider = adapter.create("claude", judge_config(server))

    results = run_calls(provider, *[completion_request() for _ in range(5)])

    assert all(isinstance(r, Exception) for r in results), results
    for raw in results:
        assert isinstance(raw, Exception)
        classified = provider.classify_error(raw)
        for text in (str(raw), repr(raw), str(classified), repr(classified)):
            assert KEY not in text
