"""``openai_compatible`` on the wire, against a loopback server that records the raw bytes of
each request and answers from a script: credentials in a ``base_url`` travel as ``Authorization:
Basic`` and never in ``Host``, header values with CR/LF are refused before any call, and rate
limits, 429s and broken answers are read off what the server sent."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest

from jurybox.config import JudgeConfig
from jurybox.errors import ConfigError, RateLimitError, TransientError
from jurybox.providers import create_provider
from jurybox.providers.openai_compatible import OpenAICompatibleProvider
from jurybox.records import CompletionRequest

PASSWORD = "pa55-LEAKCHECK"
REPLY = json.dumps(
    {"model": "m", "choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
).encode()


def _answer(body: bytes = REPLY, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers, f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@dataclass
class Recorder:
    """Answers the n-th request with ``answers[n]`` and keeps the bytes of every request."""

    answers: list[bytes]
    requests: list[bytes] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                self.requests.append(head + await reader.readexactly(length))
                writer.write(self.answers[len(self.requests) - 1])
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, IndexError):
            pass
        writer.close()


def _serve(answers: list[bytes], test: Callable[[Recorder], Awaitable[None]]) -> Recorder:
    async def main() -> Recorder:
        recorder = Recorder(answers)
        server = await asyncio.start_server(recorder.handle, "127.0.0.1", 0)
        recorder.port = server.sockets[0].getsockname()[1]
        async with server:
            await asyncio.wait_for(test(recorder), 20)
        return recorder

    return asyncio.run(main())


def _provider(base_url: str, **settings: object) -> OpenAICompatibleProvider:
    judge = JudgeConfig(
        provider="openai_compatible", model="m", base_url=base_url, timeout_s=5, **settings
    )
    provider = create_provider("j", judge)
    assert isinstance(provider, OpenAICompatibleProvider)
    return provider


def _request() -> CompletionRequest:
    return CompletionRequest(system="rules", user="question", max_tokens=16)


def _head(raw: bytes) -> dict[str, str]:
    lines = raw.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    return {name.lower(): value.strip() for name, _, value in (h.partition(":") for h in lines)}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_credentials_in_the_base_url_go_into_a_basic_header_never_into_host() -> None:
    refused = _answer(b'{"error": {"message": "bad credentials pa55-LEAKCHECK"}}', status="401 No")

    async def calls(recorder: Recorder) -> None:
        url = f"http://alice:{PASSWORD}@127.0.0.1:{recorder.port}/v1"
        provider = _provider(url)
        await provider.complete(_request())
        with pytest.raises(Exception) as raised:
            await provider.complete(_request())
        error = provider.classify_error(raised.value)
        await provider.aclose()
        for shown in (str(error), repr(provider)):
            assert PASSWORD not in shown

    recorder = _serve([_answer(), refused], calls)
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    for raw in recorder.requests:
        assert raw.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        headers = _head(raw)
        assert headers["host"] == f"127.0.0.1:{recorder.port}"
        assert headers["authorization"] == f"Basic {token}"
        # The credential is in that header alone: not in Host, the request line or the body.
        assert raw.count(PASSWORD.encode()) == 0 and raw.count(token.encode()) == 1
        assert b"alice" not in raw


def test_a_key_with_a_line_break_is_refused_before_any_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JURYBOX_TEST_CRLF_KEY", "sk-abc\r\nX-Injected: 1")

    async def make(recorder: Recorder) -> None:
        url = f"http://127.0.0.1:{recorder.port}/v1"
        with pytest.raises(ConfigError) as raised:
            _provider(url, api_key_env="JURYBOX_TEST_CRLF_KEY")
        message = str(raised.value)
        assert "judge 'j'" in message and "Authorization header" in message
        assert "sk-abc" not in message and "X-Injected" not in message

    assert _serve([_answer()], make).connections == 0


@pytest.mark.parametrize("where", ["http://127.0.0.1:{port}/v1\r\nX-Injected: 1", "http://h\n/v1"])
def test_a_base_url_with_a_line_break_is_refused_before_any_call(where: str) -> None:
    async def make(recorder: Recorder) -> None:
        with pytest.raises(ConfigError, match=r"judge 'j'.*control character") as raised:
            _provider(where.format(port=recorder.port))
        assert raised.value.field == "judges.j.base_url"

    assert _serve([_answer()], make).connections == 0


def test_a_key_and_credentials_in_the_base_url_are_one_header_too_many(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JURYBOX_TEST_KEY", "sk-test-key-123")
    with pytest.raises(ConfigError, match="keep one"):
        _provider("http://a:b@127.0.0.1:9/v1", api_key_env="JURYBOX_TEST_KEY")


def test_limits_429s_and_broken_answers_are_read_off_the_wire() -> None:
    limited = _answer(REPLY, "x-ratelimit-limit-requests: 600", "X-RateLimit-Remaining-Requests: 9")
    refused = _answer(b'{"error": {"message": "slow down"}}', "Retry-After: 3", status="429 No")

    async def calls(recorder: Recorder) -> None:
        provider = _provider(f"http://127.0.0.1:{recorder.port}/v1")
        completion = await provider.complete(_request())
        assert completion.rate_limits is not None
        assert completion.rate_limits.requests_limit == 600
        assert completion.rate_limits.requests_remaining == 9
        with pytest.raises(RateLimitError, match="slow down") as raised:
            await provider.complete(_request())
        assert raised.value.retry_after == 3.0
        with pytest.raises(Exception) as broken:
            await provider.complete(_request())
        error = provider.classify_error(broken.value)
        assert isinstance(error, TransientError) and "connection failed" in str(error)
        await provider.aclose()

    _serve([limited, refused, b"garbage\r\n\r\n"], calls)


KEY = "sk-proxy-LEAKCHECK-0123456789"


def _proxy_login(port: int) -> tuple[str, str]:
    """A proxy URL with a login on the recorder's port, and the Basic token it should carry."""
    token = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()
    return f"http://bob:{PASSWORD}@127.0.0.1:{port}", token


def test_the_key_never_becomes_the_proxys_login(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain-HTTP proxy gets the request itself; its Proxy-Authorization is the proxy's own
    login, never the judge's key (aiohttp folds a session's default Authorization into the proxy
    headers and sends it as Proxy-Authorization)."""
    monkeypatch.setenv("JURYBOX_TEST_PROXY_KEY", KEY)

    async def call(recorder: Recorder) -> None:
        proxy, _ = _proxy_login(recorder.port)
        monkeypatch.setenv("HTTP_PROXY", proxy)
        provider = _provider("http://judge.internal:8000/v1", api_key_env="JURYBOX_TEST_PROXY_KEY")
        await provider.complete(_request())
        await provider.aclose()

    recorder = _serve([_answer()], call)
    _, token = _proxy_login(recorder.port)
    [raw] = recorder.requests
    assert raw.startswith(b"POST http://judge.internal:8000/v1/chat/completions HTTP/1.1\r\n")
    headers = _head(raw)
    assert headers["proxy-authorization"] == f"Basic {token}"
    assert headers["authorization"] == f"Bearer {KEY}"  # for the judge, through a plain proxy


def test_the_key_stays_out_of_the_tunnels_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    """For an https judge the proxy sees only the CONNECT that opens the tunnel: the proxy's
    login is there, the judge's key is not."""
    monkeypatch.setenv("JURYBOX_TEST_PROXY_KEY", KEY)
    heads: list[bytes] = []

    async def tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.close()  # no tunnel: the call fails, after the CONNECT has been seen

    async def main() -> None:
        server = await asyncio.start_server(tunnel, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        monkeypatch.setenv("HTTPS_PROXY", _proxy_login(port)[0])
        provider = _provider("https://judge.internal/v1", api_key_env="JURYBOX_TEST_PROXY_KEY")
        async with server:
            with pytest.raises(Exception):  # noqa: B017 - any failure: the tunnel never opens
                await asyncio.wait_for(provider.complete(_request()), 20)
        await provider.aclose()

    asyncio.run(main())
    [head] = heads
    assert head.startswith(b"CONNECT judge.internal:443 HTTP/1.1\r\n")
    assert _head(head)["proxy-authorization"] == f"Basic {_proxy_login(0)[1]}"
    assert KEY.encode() not in head and b"Bearer" not in head
