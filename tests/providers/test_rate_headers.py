"""Rate-limit headers reach the adaptive limiter through every adapter's real client.

A loopback server answers in each vendor's wire format with that vendor's rate-limit headers
(or, for Gemini, its 429 body); the adapters must hand them over on answers
(``Completion.rate_limits``) and on 429s (``RateLimitError.rate_limits``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import wire_anthropic as aw
import wire_google as gw
from pytest_httpserver import HTTPServer
from test_rate_header_parsing import ANTHROPIC_SAMPLE, GEMINI_DETAILS, OPENAI_SAMPLE
from werkzeug import Response
from wire_common import SCHEMA

from jurybox.config import JudgeConfig
from jurybox.errors import ProviderError, RateLimitError
from jurybox.providers import create_provider
from jurybox.providers.base import Provider
from jurybox.records import Completion, CompletionRequest, RateLimits

KEY_ENV = "JURYBOX_TEST_RATE_KEY"
OPENAI_PATH = "/v1/chat/completions"
OPENAI_LIMITS = RateLimits(
    requests_limit=60,
    requests_remaining=59,
    requests_reset_s=1.0,
    tokens_limit=150000,
    tokens_remaining=149984,
    tokens_reset_s=360.0,
)
# Rate limits as an OpenAI 429 states them: the minute's requests spent.
OPENAI_429 = {
    **OPENAI_SAMPLE,
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": "20ms",
    "retry-after-ms": "20",
}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-rate-headers")
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _provider(vendor: str, server: HTTPServer, model: str) -> Provider:
    root = f"http://127.0.0.1:{server.port}"
    base_url = f"{root}/v1" if vendor in ("openai", "openai_compatible") else root
    config = JudgeConfig(
        provider=vendor, model=model, api_key_env=KEY_ENV, base_url=base_url, timeout_s=5.0
    )
    return create_provider("judge", config)


def _request() -> CompletionRequest:
    return CompletionRequest(
        system="Judge strictly.",
        user="Which response is better?",
        max_tokens=64,
        temperature=0.0,
        response_schema=SCHEMA,
        schema_name="verdict",
    )


def _call(provider: Provider) -> Completion | ProviderError:
    """One call: the completion, or the error the adapter classified."""

    async def go() -> Completion | ProviderError:
        try:
            return await provider.complete(_request())
        except Exception as exc:
            return provider.classify_error(exc)
        finally:
            await provider.aclose()

    return asyncio.run(go())


def _json(body: Any, status: int, headers: dict[str, str]) -> Response:
    return Response(json.dumps(body), status=status, headers=headers, mimetype="application/json")


def _chat_body() -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"verdict": "A"}'},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16},
    }


@pytest.mark.parametrize("vendor", ["openai", "openai_compatible"])
def test_openai_headers_on_an_answer(wire_server: HTTPServer, vendor: str) -> None:
    wire_server.expect_request(OPENAI_PATH).respond_with_response(
        _json(_chat_body(), 200, OPENAI_SAMPLE)
    )
    completion = _call(_provider(vendor, wire_server, "gpt-test"))
    assert isinstance(completion, Completion), completion
    assert completion.text == '{"verdict": "A"}'
    assert completion.rate_limits == OPENAI_LIMITS


@pytest.mark.parametrize("vendor", ["openai", "openai_compatible"])
def test_openai_headers_on_a_429(wire_server: HTTPServer, vendor: str) -> None:
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit"}}
    wire_server.expect_request(OPENAI_PATH).respond_with_response(_json(body, 429, OPENAI_429))
    error = _call(_provider(vendor, wire_server, "gpt-test"))
    assert isinstance(error, RateLimitError), error
    assert error.retry_after == pytest.approx(0.02)
    assert error.rate_limits is not None
    assert error.rate_limits.requests_remaining == 0
    assert error.rate_limits.requests_reset_s == pytest.approx(0.02)
    assert error.rate_limits.requests_limit == 60


def test_anthropic_headers_on_an_answer_and_a_429(wire_server: HTTPServer) -> None:
    reply = aw.message([aw.tool_use_block("verdict", {"verdict": "A"})], stop_reason="tool_use")
    wire_server.expect_ordered_request(aw.MESSAGES_PATH).respond_with_response(
        _json(reply, 200, ANTHROPIC_SAMPLE)
    )
    wire_server.expect_ordered_request(aw.MESSAGES_PATH).respond_with_response(
        _json(aw.error("rate_limit_error", "slow down"), 429, ANTHROPIC_SAMPLE)
    )
    completion = _call(_provider("anthropic", wire_server, "claude-test-1"))
    assert isinstance(completion, Completion), completion
    assert completion.structured == {"verdict": "A"}
    stated = completion.rate_limits
    assert stated is not None
    assert (stated.requests_limit, stated.requests_remaining) == (50, 49)
    assert (stated.tokens_limit, stated.tokens_remaining) == (40000, 39000)
    assert stated.requests_reset_s is not None  # an RFC 3339 time, read against the clock

    error = _call(_provider("anthropic", wire_server, "claude-test-1"))
    assert isinstance(error, RateLimitError), error
    assert error.retry_after == 8.0
    assert error.rate_limits is not None and error.rate_limits.requests_limit == 50


def test_gemini_quota_from_a_429_body(wire_server: HTTPServer) -> None:
    body = gw.error(429, "RESOURCE_EXHAUSTED", "quota exceeded", GEMINI_DETAILS)
    wire_server.expect_request(gw.generate_path("gemini-test")).respond_with_response(
        _json(body, 429, {})
    )
    error = _call(_provider("google", wire_server, "gemini-test"))
    assert isinstance(error, RateLimitError), error
    assert error.retry_after == 43.0
    assert error.rate_limits == RateLimits(
        requests_limit=15, tokens_limit=1_000_000, retry_after_s=43.0
    )


@pytest.mark.parametrize("vendor", ["openai", "openai_compatible"])
def test_no_headers_no_rate_limits(wire_server: HTTPServer, vendor: str) -> None:
    wire_server.expect_request(OPENAI_PATH).respond_with_response(_json(_chat_body(), 200, {}))
    completion = _call(_provider(vendor, wire_server, "gpt-test"))
    assert isinstance(completion, Completion) and completion.rate_limits is None
