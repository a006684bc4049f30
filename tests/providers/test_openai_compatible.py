"""What only the ``openai_compatible`` client does: proxies from the environment, one session
per event loop; and both Chat Completions adapters' install hint when their client
library is missing. The wire behaviour it shares with the SDK adapter is tested for both in
``test_openai.py``."""

from __future__ import annotations

import asyncio
import base64
import re
import sys
from typing import Any

import pytest

from jurybox.config import JudgeConfig
from jurybox.errors import MissingDependencyError
from jurybox.providers import create_provider
from jurybox.providers.openai_compatible import (
    OpenAICompatibleProvider,
    ProxySetting,
    env_proxy,
)
from jurybox.records import CompletionRequest

PROXY_PASSWORD = "proxy-s3cret-LEAKCHECK"
REPLY = {
    "id": "x",
    "object": "chat.completion",
    "model": "served-model",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
}


def _request() -> CompletionRequest:
    return CompletionRequest(system="rules", user="question", max_tokens=16)


def _provider(base_url: str) -> OpenAICompatibleProvider:
    judge = JudgeConfig(provider="openai_compatible", model="m", base_url=base_url)
    provider = create_provider("j", judge)
    assert isinstance(provider, OpenAICompatibleProvider)
    return provider


@pytest.fixture
def clean_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def test_env_proxy_follows_the_standard_variables(clean_proxy_env: pytest.MonkeyPatch) -> None:
    assert env_proxy("http://vllm.internal:8000/v1/chat/completions") == ProxySetting()
    clean_proxy_env.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    clean_proxy_env.setenv("NO_PROXY", "localhost,.svc.cluster")
    assert env_proxy("http://vllm.internal:8000/v1").url == "http://proxy.internal:3128"
    assert env_proxy("http://judge.svc.cluster/v1") == ProxySetting()  # NO_PROXY suffix
    assert env_proxy("https://gateway.example/v1") == ProxySetting()  # no HTTPS_PROXY set


def test_proxy_credentials_move_to_a_header(clean_proxy_env: pytest.MonkeyPatch) -> None:
    clean_proxy_env.setenv("HTTPS_PROXY", f"http://alice:{PROXY_PASSWORD}@proxy.internal:3128")
    setting = env_proxy("https://gateway.example/v1")
    assert setting.url == "http://proxy.internal:3128"
    token = base64.b64encode(f"alice:{PROXY_PASSWORD}".encode()).decode()
    # https: the credentials belong to the CONNECT that opens the tunnel, not to the request
    assert setting.connect_headers == {"Proxy-Authorization": f"Basic {token}"}
    assert setting.request_headers is None
    assert setting.secret == PROXY_PASSWORD
    clean_proxy_env.setenv("HTTP_PROXY", f"http://alice:{PROXY_PASSWORD}@proxy.internal:3128")
    plain = env_proxy("http://vllm.internal:8000/v1")
    assert plain.request_headers == {"Proxy-Authorization": f"Basic {token}"}
    assert plain.connect_headers is None


def test_requests_go_through_the_configured_proxy(
    wire: Any, clean_proxy_env: pytest.MonkeyPatch
) -> None:
    # The wire server plays the forward proxy: it receives the absolute-URI request for a
    # host that does not exist, which only a proxy could have been asked to reach.
    wire.server.expect_request("/v1/chat/completions", method="POST").respond_with_json(REPLY)
    proxy = wire.url().replace("http://", f"http://alice:{PROXY_PASSWORD}@")
    clean_proxy_env.setenv("HTTP_PROXY", proxy)
    provider = _provider("http://judge.invalid/v1")

    async def call() -> Any:
        try:
            return await provider.complete(_request())
        finally:
            await provider.aclose()

    completion = asyncio.run(call())

    assert completion.model == "served-model"
    (request, _response) = wire.server.log[0]
    assert request.headers["Host"] == "judge.invalid"
    token = base64.b64encode(f"alice:{PROXY_PASSWORD}".encode()).decode()
    assert request.headers["Proxy-Authorization"] == f"Basic {token}"
    assert "Authorization" not in request.headers  # api_key_env is null: no key at all


def test_a_proxy_failure_never_shows_its_password(
    clean_proxy_env: pytest.MonkeyPatch, dead_port: int
) -> None:
    clean_proxy_env.setenv("HTTP_PROXY", f"http://alice:{PROXY_PASSWORD}@127.0.0.1:{dead_port}")
    provider = _provider("http://judge.invalid/v1")

    async def call() -> BaseException:
        try:
            await provider.complete(_request())
        except Exception as exc:
            return exc
        finally:
            await provider.aclose()
        raise AssertionError("the proxy is down: the call must fail")

    raw = asyncio.run(call())
    error = provider.classify_error(raw)

    assert error.retryable and "connection refused" in str(error)
    assert f"is the proxy at http://127.0.0.1:{dead_port} up?" in str(error)
    for thing in (raw, error, provider):
        assert PROXY_PASSWORD not in str(thing) and PROXY_PASSWORD not in repr(thing)


def test_a_session_is_not_carried_into_another_event_loop(wire: Any) -> None:
    wire.server.expect_request("/v1/chat/completions", method="POST").respond_with_json(REPLY)
    provider = _provider(wire.url("/v1"))
    asyncio.run(provider.complete(_request()))

    async def again() -> None:
        await provider.complete(_request())

    with pytest.raises(RuntimeError, match="another event loop"):
        asyncio.run(again())

    async def close_and_retry() -> str:
        await provider.aclose()
        try:
            return (await provider.complete(_request())).model
        finally:
            await provider.aclose()

    assert asyncio.run(close_and_retry()) == "served-model"


@pytest.mark.parametrize(
    ("provider", "module", "hint"),
    [
        ("openai_compatible", "aiohttp", "pip install aiohttp"),
        ("openai", "openai", "pip install openai"),
    ],
)
def test_a_missing_client_library_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, provider: str, module: str, hint: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` fail
    judge = JudgeConfig(provider=provider, model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(MissingDependencyError, match=re.escape(hint)):
        create_provider("j", judge)
