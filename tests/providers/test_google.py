"""The Gemini adapter through the real google-genai SDK against a local generateContent server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import threading
import time
from typing import Any

import pytest
import wire_google as gw
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response
from wire_common import SCHEMA, body_of, run_calls

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
from jurybox.providers import google as adapter
from jurybox.providers.registry import create_provider
from jurybox.records import Completion, CompletionRequest

KEY = "AIza-LEAKCHECK-123"
KEY_ENV = "JURYBOX_TEST_GEMINI_KEY"
MODEL = "gemini-test"
PATH = gw.generate_path(MODEL)
VERDICT = {"verdict": "A", "confidence": "medium", "reasoning": "A is complete."}
SYSTEM = "You are a careful judge. Rubric: accuracy first."
USER = "Question: 2+2? Response A: 4. Response B: five."


def judge_config(server: HTTPServer, **overrides: Any) -> JudgeConfig:
    values: dict[str, Any] = {
        "provider": "google",
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
        "max_tokens": 300,
        "temperature": 0.0,
        "response_schema": SCHEMA,
        "schema_name": "pairwise_verdict",
        "seed": 7,
    }
    values.update(overrides)
    return CompletionRequest(**values)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    # The SDK reads these itself; none of them may change where or how the adapter calls.
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_GENAI_API_VERSION", "v1alpha")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://192.0.2.1:9")


def single(provider: adapter.GoogleProvider, req: CompletionRequest | None = None) -> Any:
    return run_calls(provider, req or completion_request())[0]


def json_reply() -> dict[str, Any]:
    return gw.response(
        [
            gw.text_part("Comparing the two answers...", thought=True),
            gw.text_part(json.dumps(VERDICT)),
        ],
        usage_body=gw.usage(prompt=1200, candidates=40, cached=1024, thoughts=25),
    )


# --- success, request body, usage -------------------------------------------------------------


def test_json_answer_returns_structured_result_and_usage(server: HTTPServer) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(json_reply())
    provider = adapter.create("gemini", judge_config(server))

    result = single(provider)

    assert isinstance(result, Completion), result
    assert result.structured == VERDICT
    assert result.text == json.dumps(VERDICT)  # the thought summary is not part of the answer
    assert result.finish_reason == "stop"
    assert result.model == "gemini-test-001"
    # Shared convention: input includes cached tokens; output includes thinking tokens.
    assert (result.input_tokens, result.cached_input_tokens) == (1200, 1024)
    assert (result.output_tokens, result.reasoning_tokens) == (65, 25)
    priced = judge_config(server, price_input_per_mtok=1.25, price_output_per_mtok=10.0)
    priced = priced.model_copy(update={"price_cached_input_per_mtok": 0.3125})
    # 176 uncached x $1.25 + 1024 cached x $0.3125 + 65 out (thinking included) x $10, per 1M.
    assert completion_cost_usd(priced, result) == pytest.approx(1190e-6)
    assert result.latency_ms is not None and result.latency_ms > 0
    server.check_assertions()


def test_request_body_carries_config_and_structured_output(server: HTTPServer) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(json_reply())
    extra = {"generationConfig": {"topK": 3}, "safetySettings": []}
    provider = adapter.create("gemini", judge_config(server, extra_body=extra))

    single(provider)

    body = body_of(server)
    # Static text first, as the system instruction, for implicit prompt caching.
    assert body["systemInstruction"]["parts"] == [{"text": SYSTEM}]
    assert body["contents"] == [{"role": "user", "parts": [{"text": USER}]}]
    generation = body["generationConfig"]
    assert generation["temperature"] == 0.0
    assert generation["maxOutputTokens"] == 300
    assert generation["seed"] == 7
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseJsonSchema"] == SCHEMA
    assert "responseSchema" not in generation
    assert generation["topK"] == 3  # extra_body merged into, not replacing, generationConfig
    assert body["safetySettings"] == []
    # SDK-side switches must not leak onto the wire.
    assert "automaticContinuation" not in json.dumps(body)


def test_null_temperature_and_no_schema_are_left_out(server: HTTPServer) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(
        gw.response([gw.text_part("Verdict: A")])
    )
    provider = adapter.create("gemini", judge_config(server, temperature=None))

    result = single(provider, completion_request(temperature=None, response_schema=None, seed=None))

    generation = body_of(server)["generationConfig"]
    assert "temperature" not in generation and "seed" not in generation
    assert "responseMimeType" not in generation and "responseJsonSchema" not in generation
    assert isinstance(result, Completion)
    assert result.text == "Verdict: A" and result.structured is None


@pytest.mark.parametrize(
    ("structured_output", "answer"),
    [(False, '{"verdict": "A"}'), (True, "I think A.")],  # switched off; or not JSON at all
)
def test_structured_is_set_only_for_requested_json(
    server: HTTPServer, structured_output: bool, answer: str
) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(
        gw.response([gw.text_part(answer)])
    )
    config = judge_config(server, structured_output=structured_output)
    result = single(adapter.create("gemini", config))

    assert ("responseJsonSchema" in body_of(server)["generationConfig"]) is structured_output
    assert isinstance(result, Completion)
    assert (result.text, result.structured, result.finish_reason) == (answer, None, "stop")


def test_key_travels_only_in_the_api_key_header(server: HTTPServer) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(json_reply())
    single(adapter.create("gemini", judge_config(server)))

    sent = server.log[-1][0]
    assert sent.path == PATH  # v1beta pinned, despite GOOGLE_GENAI_API_VERSION in the env
    assert sent.headers["x-goog-api-key"] == KEY
    others = {k: v for k, v in sent.headers.items() if k.lower() != "x-goog-api-key"}
    assert KEY not in json.dumps(others)
    assert KEY not in sent.url and "key=" not in sent.query_string.decode()
    assert KEY not in sent.get_data(as_text=True)


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "details", "expected"),
    [
        ({}, [gw.retry_info("12.5s")], 12.5),  # Gemini's own hint, in the error body
        ({"Retry-After": "3"}, [gw.retry_info("40s")], 3.0),  # the header wins
        ({}, [], None),
    ],
)
def test_429_is_a_rate_limit_with_the_servers_hint(
    server: HTTPServer,
    headers: dict[str, str],
    details: list[dict[str, Any]],
    expected: float | None,
) -> None:
    server.expect_ordered_request(PATH, method="POST").respond_with_json(
        gw.error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", details), status=429, headers=headers
    )
    server.expect_ordered_request(PATH, method="POST").respond_with_json(json_reply())
    provider = adapter.create("gemini", judge_config(server))

    started = time.monotonic()
    first, second = run_calls(provider, completion_request(), completion_request())
    elapsed = time.monotonic() - started

    assert isinstance(first, Exception)
    error = provider.classify_error(first)
    assert isinstance(error, RateLimitError)
    assert error.retry_after == expected
    assert elapsed < 5.0
    assert isinstance(second, Completion) and second.structured == VERDICT
    assert len(server.log) == 2  # one request each: the SDK neither retried nor waited
    server.check_assertions()


@pytest.mark.parametrize(
    ("status", "name"), [(500, "INTERNAL"), (503, "UNAVAILABLE"), (504, "DEADLINE_EXCEEDED")]
)
def test_server_errors_are_transient_and_never_retried_inside_the_sdk(
    server: HTTPServer, status: int, name: str
) -> None:
    for _ in range(3):
        server.expect_ordered_request(PATH, method="POST").respond_with_json(
            gw.error(status, name, "try again later"), status=status
        )
    server.expect_ordered_request(PATH, method="POST").respond_with_json(json_reply())
    provider = adapter.create("gemini", judge_config(server))

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
    calls: list[int] = []

    def stall(_: Request) -> Response:
        calls.append(1)
        if len(calls) > 1:  # the warm-up call is answered at once
            release.wait(10)
        return Response(json.dumps(json_reply()), content_type="application/json")

    server.expect_request(PATH, method="POST").respond_with_handler(stall)
    # google-genai 3 loads its HTTP stack on the first call in the process (~0.5 s under load),
    # inside our wall-clock bound; a warm-up call keeps that out of the 1 s being tested.
    warm_up = adapter.create("gemini", judge_config(server))
    assert isinstance(single(warm_up), Completion)
    provider = adapter.create("gemini", judge_config(server, timeout_s=1.0))

    started = time.monotonic()
    result = single(provider)
    elapsed = time.monotonic() - started
    release.set()
    deadline = time.monotonic() + 5.0
    while len(server.log) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)

    assert isinstance(result, Exception)
    error = provider.classify_error(result)
    assert isinstance(error, TransientError)
    assert "timed out" in str(error)
    assert elapsed < 3.0
    assert len(server.log) == 2  # the warm-up, then one request: the SDK does not retry


@pytest.mark.parametrize(
    "payload",
    ["this is not json", "{}", '{"candidates": 5}', '{"candidates": [{"index": 0}]}'],
)
def test_malformed_bodies_are_transient(server: HTTPServer, payload: str) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_data(
        payload, content_type="application/json"
    )
    provider = adapter.create("gemini", judge_config(server))

    result = single(provider)

    assert isinstance(result, Exception), result
    assert isinstance(provider.classify_error(result), TransientError)
    assert len(server.log) == 1


def test_connection_refused_is_transient(server: HTTPServer) -> None:
    provider = adapter.create("gemini", judge_config(server, base_url="http://127.0.0.1:9"))

    result = single(provider)

    assert isinstance(result, Exception)
    assert isinstance(provider.classify_error(result), TransientError)


@pytest.mark.parametrize(
    ("status", "name", "details", "expected"),
    [
        (400, "INVALID_ARGUMENT", [gw.error_info("API_KEY_INVALID")], AuthError),
        (401, "UNAUTHENTICATED", [], AuthError),
        (403, "PERMISSION_DENIED", [], AuthError),
        (400, "INVALID_ARGUMENT", [], BadRequestError),
        (404, "NOT_FOUND", [], BadRequestError),
    ],
)
def test_client_errors_are_permanent_and_sent_once(
    server: HTTPServer,
    status: int,
    name: str,
    details: list[dict[str, Any]],
    expected: type[ProviderError],
) -> None:
    # The body echoes the key, as some gateways do: it must not reach any jurybox message.
    server.expect_request(PATH, method="POST").respond_with_json(
        gw.error(status, name, f"API key not valid: {KEY}", details), status=status
    )
    provider = adapter.create("gemini", judge_config(server))

    result = single(provider)

    assert isinstance(result, Exception)
    error = provider.classify_error(result)
    assert type(error) is expected
    assert not error.retryable
    assert error.status_code == status
    assert name in str(error)
    assert KEY not in str(error) and KEY not in repr(error)
    assert len(server.log) == 1


# --- content filters and truncation are results, not crashes ----------------------------------


@pytest.mark.parametrize("reason", ["SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST"])
def test_filtered_answer_is_a_content_filter_finish(server: HTTPServer, reason: str) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(
        gw.response(None, finish_reason=reason)
    )
    result = single(adapter.create("gemini", judge_config(server)))

    assert isinstance(result, Completion), result
    assert result.finish_reason == "content_filter"
    assert result.refusal is not None and reason in result.refusal
    assert (result.text, result.structured) == ("", None)


def test_blocked_prompt_is_a_content_filter_finish(server: HTTPServer) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(
        gw.blocked_prompt("PROHIBITED_CONTENT")
    )
    result = single(adapter.create("gemini", judge_config(server)))

    assert isinstance(result, Completion), result
    assert result.finish_reason == "content_filter"
    assert result.refusal == "prompt blocked: PROHIBITED_CONTENT"
    assert result.input_tokens == 120


def test_max_tokens_is_a_truncation_not_a_result(server: HTTPServer) -> None:
    server.expect_oneshot_request(PATH, method="POST").respond_with_json(
        gw.response([gw.text_part('{"verdict": "A", "reas')], finish_reason="MAX_TOKENS")
    )
    result = single(adapter.create("gemini", judge_config(server)))

    assert isinstance(result, Completion), result
    assert result.finish_reason == "length"
    assert result.structured is None
    assert result.text == '{"verdict": "A", "reas'


def test_continuation_is_not_followed(server: HTTPServer) -> None:
    # google-genai follows continuation tokens by default: that would be a second request.
    server.expect_request(PATH, method="POST").respond_with_json(
        gw.response(
            [gw.text_part('{"verdict": ')],
            finish_reason="CONTINUATION",
            extra_candidate={"continuationToken": "Y29udGludWU="},
        )
    )
    result = single(adapter.create("gemini", judge_config(server)))

    assert isinstance(result, Completion), result
    assert result.finish_reason == "length"
    assert len(server.log) == 1


# --- construction -----------------------------------------------------------------------------


def test_missing_key_is_an_auth_error_before_any_call(
    server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(AuthError, match=KEY_ENV):
        adapter.create("gemini", judge_config(server))
    assert server.log == []


def test_key_variable_left_out_defaults_to_gemini_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = JudgeConfig(provider="google", model=MODEL)  # public endpoint, no api_key_env
    with pytest.raises(AuthError, match="GEMINI_API_KEY"):
        adapter.create("gemini", config)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    provider = create_provider("gemini", config)  # through the registry, as the pipeline does
    assert isinstance(provider, adapter.GoogleProvider)
    assert (provider.vendor, provider.model, provider.is_local) == ("google", MODEL, False)
    assert KEY not in repr(provider)
    asyncio.run(provider.aclose())


def test_a_keyless_config_is_refused_rather_than_reading_the_sdk_env(
    server: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With no key, google-genai would pick up GOOGLE_API_KEY and send it to base_url.
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    with pytest.raises(AuthError, match="api_key_env"):
        adapter.create("gemini", judge_config(server, api_key_env=None))
    assert server.log == []


def test_gemini_3_warns_about_a_low_temperature(
    server: HTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=adapter.logger.name):
        quiet = adapter.create("g", judge_config(server, model="gemini-3-pro", temperature=None))
        loud = adapter.create("g", judge_config(server, model="gemini-3-pro", temperature=0.0))
    assert len(caplog.records) == 1  # only the judge that sets a low temperature
    assert "tuned for temperature 1.0" in caplog.records[0].getMessage()
    for provider in (quiet, loud):
        asyncio.run(provider.aclose())


def test_sdk_retry_layers_are_all_off(server: HTTPServer) -> None:
    # attempts=1 stops tenacity after the first try, and any retry_options also disables the
    # implicit resend google-genai does on aiohttp connection errors (aiohttp is a jurybox
    # dependency, so that is the transport of every async call; see the next test).
    options = adapter.build_http_options(judge_config(server))
    assert options.retry_options is not None and options.retry_options.attempts == 1
    config = adapter.build_generate_config(completion_request(), judge_config(server))
    assert config.automatic_continuation is False
    assert config.automatic_function_calling is not None
    assert config.automatic_function_calling.disable is True


def test_a_dropped_connection_is_not_resent(server: HTTPServer) -> None:
    """A server that reads the request and hangs up: google-genai's aiohttp path would resend
    it on its own without ``retry_options``; here it must reach the server exactly once."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)  # closing the socket does not wake a blocked accept()
    requests_seen: list[bytes] = []
    done = threading.Event()

    def hang_up_on_everyone() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2.0)
                with contextlib.suppress(OSError):  # a client that gave up first
                    requests_seen.append(connection.recv(65536))

    thread = threading.Thread(target=hang_up_on_everyone, daemon=True)
    thread.start()
    port = listener.getsockname()[1]
    provider = adapter.create("gemini", judge_config(server, base_url=f"http://127.0.0.1:{port}"))
    try:
        result = single(provider)
    finally:
        done.set()
        thread.join(5.0)
        listener.close()

    assert isinstance(result, Exception), result
    assert type(result).__module__.startswith("aiohttp"), type(result)  # the aiohttp path ran
    assert isinstance(provider.classify_error(result), TransientError)
    assert len([r for r in requests_seen if r.startswith(b"POST")]) == 1


def test_missing_sdk_names_the_extra(server: HTTPServer, monkeypatch: pytest.MonkeyPatch) -> None:
    config = judge_config(server)
    with monkeypatch.context() as patch:
        patch.setitem(sys.modules, "google.genai", None)  # makes `import google.genai` fail
        with pytest.raises(MissingDependencyError, match=r'pip install "jurybox\[google\]"'):
            adapter.create("gemini", config)
    asyncio.run(adapter.create("gemini", config).aclose())  # the SDK is only looked up in create


def test_no_error_text_leaks_the_key(server: HTTPServer) -> None:
    """Every failure path: the raw SDK exception and the classified error stay key-free."""
    server.expect_ordered_request(PATH, method="POST").respond_with_json(
        gw.error(429, "RESOURCE_EXHAUSTED", "slow down", [gw.retry_info("1s")]), status=429
    )
    for status, name in ((500, "INTERNAL"), (403, "PERMISSION_DENIED"), (400, "INVALID_ARGUMENT")):
        server.expect_ordered_request(PATH, method="POST").respond_with_json(
            gw.error(status, name, "no"), status=status
        )
    server.expect_ordered_request(PATH, method="POST").respond_with_data(
        "garbage", content_type="application/json"
    )
    provider = adapter.create("gemini", judge_config(server))

    results = run_calls(provider, *[completion_request() for _ in range(5)])

    assert all(isinstance(r, Exception) for r in results), results
    for raw in results:
        assert isinstance(raw, Exception)
        classified = provider.classify_error(raw)
        for text in (str(raw), repr(raw), str(classified), repr(classified)):
            assert KEY not in text
