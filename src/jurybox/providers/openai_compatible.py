"""Any OpenAI-compatible Chat Completions server (vLLM, Ollama, llama.cpp server, LM Studio, a
gateway) through aiohttp instead of the openai SDK.

Same wire format as the ``openai`` adapter (``providers/_chat_format.py`` builds the body and
reads the reply for both), but a fraction of the client CPU per call: the SDK and its HTTP stack
(httpx2) spend several times aiohttp's CPU per call, which made the client, not the server, the
bottleneck of a fast self-hosted judge (BENCHMARKS.md, "Throughput"). Use ``openai`` for
api.openai.com; use this for servers you run.

* ``base_url`` is required (``http://127.0.0.1:8000/v1``); requests go to
  ``{base_url}/chat/completions``. Proxies come from ``HTTP(S)_PROXY`` / ``NO_PROXY``.
  ``user:password@`` in a ``base_url`` is sent as ``Authorization: Basic`` (never in ``Host``)
  and scrubbed from every message like a key.
* ``base_urls`` instead names several replicas of one model (one per vLLM server): each call
  goes to the replica with the fewest calls in flight from this process (ties taken in turn), so
  a slow or busy replica gets fewer; a retry is balanced afresh.
* ``api_key_env`` names the variable holding the key, sent as ``Authorization: Bearer``; with
  ``api_key_env: null`` (the default) no Authorization header is sent at all.
* A header value with a CR or LF in it (a key, a proxy's credentials, a ``base_url``) is refused
  before any call: it would let the value end the header and write others.
* One request per call: redirects are not followed and nothing is retried here; the pipeline's
  retry policy gets the status and ``Retry-After`` / ``retry-after-ms``.
* Rate-limit headers (``x-ratelimit-*``, ``anthropic-ratelimit-*``) of every response, answer or
  429, go to the pipeline's adaptive limiter (``Completion.rate_limits`` /
  ``RateLimitError.rate_limits``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.errors import BadRequestError, ConfigError, ProviderError, TransientError
from jurybox.providers._chat_format import chat_body, completion_from_chat, error_message
from jurybox.providers._common import (
    Dependency,
    MalformedResponseError,
    Stopwatch,
    classify_vendor_error,
    connect_error,
    scrub_secrets,
)
from jurybox.providers._rate_headers import rate_limits_from_headers, status_error
from jurybox.providers.base import read_api_key
from jurybox.records import Completion, CompletionRequest
from jurybox.redaction import redact_credentials

_CLIENT = Dependency("openai_compatible", "aiohttp", ("pip install aiohttp",))


def create(judge_name: str, judge: JudgeConfig) -> OpenAICompatibleProvider:
    """Build the judge for an OpenAI-compatible server. Raises MissingDependencyError,
    AuthError or ConfigError (a header that would carry a line break) before any call."""
    aiohttp = _CLIENT.load("aiohttp")
    key = read_api_key(judge, judge_name)  # no vendor default: a server you run names its own
    return OpenAICompatibleProvider(judge_name, judge, aiohttp, key=key)


@dataclass(frozen=True, slots=True)
class Replica:
    """One server of the judge: where its calls go and the headers only it gets (the
    credentials of its ``base_url``, its proxy's), with the secrets they carry."""

    url: str  # .../chat/completions, without user info
    headers: Mapping[str, str]
    proxy: ProxySetting
    secrets: tuple[str, ...]


def replica(judge_name: str, base: str, field: str) -> Replica:
    """The replica at ``base`` (a ``base_url``), its user info moved into a Basic header."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in base):
        raise ConfigError(
            f"judge '{judge_name}': the URL holds a control character (CR, LF, tab...), which "
            "would end the request line or the Host header; no call was made",
            field=field,
        )
    parts = urllib.parse.urlsplit(base.rstrip("/") + "/chat/completions")
    url, headers = parts.geturl(), {}
    secrets: tuple[str, ...] = ()
    credentials = _user_info(parts)
    if credentials is not None:
        url, token, password = credentials
        headers = {"Authorization": f"Basic {token}"}
        secrets = tuple(filter(None, (password, token)))
    proxy = env_proxy(url)
    headers.update(proxy.request_headers or {})
    return Replica(url, headers, proxy, secrets + ((proxy.secret,) if proxy.secret else ()))


def refuse_line_breaks(judge_name: str, headers: Mapping[str, str]) -> None:
    """A ConfigError naming the judge and the header when a value holds a CR or LF (the value
    itself is not shown: it may be a key)."""
    for name, value in headers.items():
        if "\r" in value or "\n" in value:
            raise ConfigError(
                f"judge '{judge_name}': the {name} header would hold a line break (CR or LF), "
                "which would end it and start another header; check the key, the base_url's "
                "user info and the proxy settings. No call was made"
            )


class OpenAICompatibleProvider:
    """One judge behind a self-hosted Chat Completions endpoint."""

    vendor = "openai_compatible"
    is_local = False

    def __init__(
        self, judge_name: str, judge: JudgeConfig, aiohttp: Any, *, key: str | None
    ) -> None:
        bases = judge.base_urls or ((judge.base_url,) if judge.base_url else ())
        if not judge.model or not bases:
            raise ValueError(f"judge '{judge_name}': openai_compatible needs a model and base_url")
        self._aiohttp = aiohttp
        self._judge_name = judge_name
        self._judge = judge
        self.model = judge.model
        field = f"judges.{judge_name}.base_url" + ("s" if judge.base_urls else "")
        self._replicas = tuple(replica(judge_name, base, field) for base in bases)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        # Sent with each request, not as the session's default: aiohttp folds default headers
        # into a proxy's headers too, where Authorization becomes Proxy-Authorization.
        self._auth = {"Authorization": f"Bearer {key}"} if key else {}
        for each in self._replicas:
            if key and "Authorization" in each.headers:
                raise ConfigError(
                    f"judge '{judge_name}': both the base_url's user info and api_key_env give "
                    "the Authorization header; keep one",
                    field=field,
                )
            refuse_line_breaks(judge_name, {**self._auth, **each.headers})
            refuse_line_breaks(judge_name, each.proxy.connect_headers or {})
        # Kept only to scrub error texts.
        self._secrets = tuple(
            dict.fromkeys(filter(None, (key, *(s for r in self._replicas for s in r.secrets))))
        )
        self.in_flight = [0] * len(self._replicas)  # per replica, for the balancing
        self._turn = 0
        self._session: Any = None  # built by ``_connect`` inside the event loop, on the first call
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        where = redact_credentials(str(self._judge.base_urls or self._judge.base_url))
        return (
            f"OpenAICompatibleProvider(judge={self._judge_name!r}, model={self.model!r}, "
            f"at={where!r})"
        )

    def _connect(self) -> Any:
        """The HTTP session: the one place it is configured (headers, timeout, pool)."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            # Its pooled sockets belong to a loop that is gone; they cannot even be closed here.
            raise RuntimeError(
                f"judge '{self._judge_name}': its HTTP session belongs to another event loop; "
                "call `await provider.aclose()` before using the provider in a new one"
            )
        if self._session is None:
            self._loop = loop
            aiohttp = self._aiohttp
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=self._judge.timeout_s),
                # The pipeline bounds calls in flight; the pool must not add a second bound.
                connector=aiohttp.TCPConnector(limit=0),
                # The proxy is looked up once per replica (``env_proxy``), not per request.
                trust_env=False,
            )
        return self._session

    async def complete(self, request: CompletionRequest) -> Completion:
        session = self._connect()
        body = chat_body(self._judge, self.model, request)
        watch = Stopwatch()
        index = self._pick_replica()
        self.in_flight[index] += 1
        try:
            status, headers, raw = await self._post(session, self._replicas[index], body)
        finally:
            self.in_flight[index] -= 1
        if not 200 <= status < 300:
            message = scrub_secrets(error_message(status, raw), self._secrets)
            raise status_error(status, message, headers)
        try:
            data = json.loads(raw)
        except ValueError:
            raise MalformedResponseError(f"HTTP {status} with a body that is not JSON") from None
        return completion_from_chat(
            data,
            default_model=self.model,
            latency_ms=watch.elapsed_ms,
            native="response_format" in body,
            rate_limits=rate_limits_from_headers(headers),
        )

    async def _post(
        self, session: Any, target: Replica, body: dict[str, Any]
    ) -> tuple[int, Mapping[str, str], bytes]:
        async with session.post(
            target.url,
            data=json.dumps(body).encode(),
            allow_redirects=False,
            headers={**self._auth, **target.headers},
            proxy=target.proxy.url,
            proxy_headers=target.proxy.connect_headers,
        ) as response:
            return response.status, response.headers, await response.read()

    def _pick_replica(self) -> int:
        """The replica with the fewest calls in flight; ties in turn (round robin)."""
        count = len(self._replicas)
        if count == 1:
            return 0
        self._turn = (self._turn + 1) % count
        order = [(self._turn + step) % count for step in range(count)]
        return min(order, key=self.in_flight.__getitem__)

    def request_params(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body of the call."""
        return chat_body(self._judge, self.model, request)

    def classify_error(self, exc: BaseException) -> ProviderError:
        return classify_vendor_error(exc, "openai_compatible", self._classify_http, self._secrets)

    def _classify_http(self, exc: BaseException) -> ProviderError | None:
        if isinstance(exc, TimeoutError):
            return TransientError(f"timed out after {self._judge.timeout_s:g} s", kind="timeout")
        aiohttp = self._aiohttp
        if isinstance(exc, aiohttp.InvalidURL):
            detail = scrub_secrets(str(exc), self._secrets)
            return BadRequestError(f"invalid base_url for judge '{self._judge_name}': {detail}")
        if isinstance(exc, aiohttp.ClientPayloadError):
            detail = scrub_secrets(f"{type(exc).__name__}: {exc}", self._secrets)
            return TransientError(f"response body cut short ({detail})", kind="bad response")
        if isinstance(exc, aiohttp.ClientError):
            # refused or dropped connections, an unknown host, a server that hung up
            detail = scrub_secrets(f"{type(exc).__name__}: {exc}", self._secrets)
            if isinstance(exc, aiohttp.ClientProxyConnectionError):
                return connect_error(exc, detail, self._called_proxy(exc), role="proxy")
            return connect_error(exc, detail, self._called_url(exc))
        return None

    def _called_proxy(self, exc: BaseException) -> str | None:
        """The proxy (its URL holds no credentials: ``env_proxy``) the failed call went to."""
        host = getattr(exc, "host", None)
        proxies = [each.proxy.url for each in self._replicas if each.proxy.url]
        named = [url for url in proxies if urllib.parse.urlsplit(url).hostname == host]
        return next(iter(named or proxies), None)

    def _called_url(self, exc: BaseException) -> str:
        """The replica the failed call went to (aiohttp's connection errors name its host and
        port), else the first."""
        host, port = getattr(exc, "host", None), getattr(exc, "port", None)
        for each in self._replicas:
            parts = urllib.parse.urlsplit(each.url)
            if host == parts.hostname and port in (None, parts.port):
                return each.url
        return self._replicas[0].url

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        self._session, self._loop = None, None


@dataclass(frozen=True, slots=True)
class ProxySetting:
    """The forward proxy for one endpoint: its URL without credentials, plus the header that
    carries them (never part of a message: ``secret`` is scrubbed like an API key).

    For an ``http://`` endpoint the proxy reads the header on every request; for ``https://`` it
    belongs to the CONNECT that opens the tunnel (aiohttp's ``proxy_headers``).
    """

    url: str | None = None
    request_headers: Mapping[str, str] | None = None
    connect_headers: Mapping[str, str] | None = None
    secret: str | None = None


def _user_info(parts: urllib.parse.SplitResult) -> tuple[str, str, str] | None:
    """``(url without user info, Basic token, password)`` of a URL with ``user:password@``."""
    if parts.username is None:
        return None
    user = urllib.parse.unquote(parts.username)
    password = urllib.parse.unquote(parts.password or "")
    bare = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    return bare, base64.b64encode(f"{user}:{password}".encode()).decode("ascii"), password


def env_proxy(url: str) -> ProxySetting:
    """The proxy ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` name for ``url``, if any."""
    parts = urllib.parse.urlsplit(url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.netloc):
        return ProxySetting()
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy:
        return ProxySetting()
    credentials = _user_info(urllib.parse.urlsplit(proxy))
    if credentials is None:
        return ProxySetting(proxy)
    bare, token, password = credentials
    header = {"Proxy-Authorization": f"Basic {token}"}
    if parts.scheme == "https":
        return ProxySetting(bare, connect_headers=header, secret=password or None)
    return ProxySetting(bare, request_headers=header, secret=password or None)
