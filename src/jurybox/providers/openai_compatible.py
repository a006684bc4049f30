"""Any OpenAI-compatible Chat Completions server (vLLM, Ollama, llama.cpp server, LM Studio, a
gateway) through a lean HTTP client instead of the openai SDK.

Same wire format as the ``openai`` adapter (``providers/_chat_format.py`` builds the body and
reads the reply for both), but a small fraction of the client CPU per call: the SDK and its HTTP
stack spend ~1.5-2 ms of CPU per call, which caps a 2-core client at a few hundred calls per
second and made it, not the server, the bottleneck of a fast self-hosted judge (BENCHMARKS.md,
"Throughput"). Use ``openai`` for api.openai.com; use this for servers you run. A plain
``http://`` endpoint without a proxy is called through ``providers/_http1.py`` (HTTP/1.1,
keep-alive, nothing else); ``https://`` and proxied ones through aiohttp.

* ``base_url`` is required (``http://127.0.0.1:8000/v1``); requests go to
  ``{base_url}/chat/completions``. Proxies come from ``HTTP(S)_PROXY`` / ``NO_PROXY``.
* ``base_urls`` instead names several replicas of one model (one per vLLM server): each call
  goes to the replica with the fewest calls in flight from this process (ties taken in turn), so
  a slow or busy replica gets fewer; a retry is balanced afresh.
* ``api_key_env`` names the variable holding the key, sent as ``Authorization: Bearer``; with
  ``api_key_env: null`` (the default) no Authorization header is sent at all.
* One request per call: redirects are not followed and nothing is retried here; the pipeline's
  retry policy gets the status and ``Retry-After`` / ``retry-after-ms``.
* Rate-limit headers (``x-ratelimit-*``, ``anthropic-ratelimit-*``) of every response, answer or
  429, go to the pipeline's adaptive limiter (``Completion.rate_limits`` /
  ``RateLimitError.rate_limits``).
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from collections.abc import Mapping
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.errors import BadRequestError, ProviderError, TransientError
from jurybox.providers._chat_format import (
    chat_body,
    chat_payload,
    completion_from_chat,
    error_message,
)
from jurybox.providers._common import (
    Dependency,
    MalformedResponseError,
    Stopwatch,
    classify_status,
    classify_vendor_error,
    loads_json,
    parse_retry_after,
    scrub_secrets,
)
from jurybox.providers._http1 import Http1Endpoint, HttpConnectionError
from jurybox.providers._rate_headers import rate_limits_from_headers
from jurybox.providers.base import CALLER_TIMES_OUT, read_api_key
from jurybox.records import Completion, CompletionRequest, made_on_first_use

_CLIENT = Dependency("openai_compatible", "aiohttp", ("pip install aiohttp",))


def create(judge_name: str, judge: JudgeConfig) -> OpenAICompatibleProvider:
    """Build the judge for an OpenAI-compatible server. Raises MissingDependencyError or
    AuthError before any call.

    aiohttp (~0.2 s to import, most of a run's start-up) is loaded here only for an ``https://``
    replica; plain ``http://`` ones go through ``_http1`` and load it only if a proxy applies.
    """
    bases = judge.base_urls or ((judge.base_url,) if judge.base_url else ())
    secure = any(not base.startswith("http://") for base in bases)
    aiohttp = _CLIENT.load("aiohttp") if secure else None
    key = read_api_key(judge, judge_name)  # no vendor default: a server you run names its own
    return OpenAICompatibleProvider(judge_name, judge, aiohttp, key=key)


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
        self._key = key
        self._judge_name = judge_name
        self._judge = judge
        self.model = judge.model
        self._urls = tuple(base.rstrip("/") + "/chat/completions" for base in bases)
        self.in_flight = [0] * len(self._urls)  # per replica, for the balancing
        self._turn = 0
        self._session: Any = None  # built by ``_connect`` inside the event loop, on the first call
        # Per replica: the lean HTTP/1.1 client for a plain http:// one without a proxy, else
        # None (aiohttp). Built by ``_connect`` with the session.
        self._direct: tuple[Http1Endpoint | None, ...] = ()
        self._loop: asyncio.AbstractEventLoop | None = None
        # Kept only to scrub error texts (the proxy's password joins it in ``_connect``).
        self._secrets: tuple[str, ...] = (key,) if key else ()
        self._proxies = tuple(ProxySetting() for _ in self._urls)

    def __repr__(self) -> str:
        where = self._judge.base_urls or self._judge.base_url
        return (
            f"OpenAICompatibleProvider(judge={self._judge_name!r}, model={self.model!r}, "
            f"at={where!r})"
        )

    def _connect(self) -> Any:
        """The HTTP session: the one place it is configured (headers, timeout, pool, proxy);
        None when every replica is called directly (``_http1``)."""
        loop = asyncio.get_running_loop()
        if self._loop is not None and self._loop is not loop:
            # Its pooled sockets belong to a loop that is gone; they cannot even be closed here.
            raise RuntimeError(
                f"judge '{self._judge_name}': its HTTP session belongs to another event loop; "
                "call `await provider.aclose()` before using the provider in a new one"
            )
        if self._loop is None:
            self._loop = loop
            key = self._key
            headers = {"Content-Type": "application/json", "Accept": "application/json"}
            self._proxies = tuple(env_proxy(url) for url in self._urls)
            if key:
                headers["Authorization"] = f"Bearer {key}"
            proxy_secrets = (proxy.secret for proxy in self._proxies)
            self._direct = tuple(
                Http1Endpoint(url, headers) if url.startswith("http://") and not proxy.url else None
                for url, proxy in zip(self._urls, self._proxies, strict=True)
            )
            self._secrets = tuple(filter(None, (key, *proxy_secrets)))
            if all(self._direct):
                return None
            if self._aiohttp is None:  # a proxy applies to an http:// replica
                self._aiohttp = _CLIENT.load("aiohttp")
            aiohttp = self._aiohttp
            self._session = aiohttp.ClientSession(
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=self._judge.timeout_s),
                # The pipeline bounds calls in flight; the pool must not add a second bound.
                connector=aiohttp.TCPConnector(limit=0),
                # trust_env would look the proxy and ~/.netrc up on a worker thread for every
                # request; the proxy is looked up once above instead.
                trust_env=False,
            )
        return self._session

    async def complete(self, request: CompletionRequest) -> Completion:
        session = self._connect()
        payload, native = chat_payload(self._judge, self.model, request)
        watch = Stopwatch()
        replica = self._pick_replica()
        direct = self._direct[replica]
        headers: Mapping[str, str]
        self.in_flight[replica] += 1
        try:
            if direct is not None and CALLER_TIMES_OUT.get():
                status, headers, raw = await direct.post(payload)
            elif direct is not None:
                async with asyncio.timeout(self._judge.timeout_s):
                    status, headers, raw = await direct.post(payload)
            else:
                status, headers, raw = await self._post(session, replica, payload)
        finally:
            self.in_flight[replica] -= 1
        limits = rate_limits_from_headers(headers)
        if not 200 <= status < 300:
            message = scrub_secrets(error_message(status, raw), self._secrets)
            retry_after = parse_retry_after(headers)
            raise classify_status(status, message, retry_after=retry_after, rate_limits=limits)
        try:
            data = loads_json(raw)
        except ValueError:
            raise MalformedResponseError(f"HTTP {status} with a body that is not JSON") from None
        return completion_from_chat(
            data,
            default_model=self.model,
            latency_ms=watch.elapsed_ms,
            native=native,
            rate_limits=limits,
        )

    async def _post(
        self, session: Any, replica: int, payload: bytes
    ) -> tuple[int, Mapping[str, str], bytes]:
        """The call through aiohttp: https, or through a proxy."""
        proxy = self._proxies[replica]
        async with session.post(
            self._urls[replica],
            data=payload,
            allow_redirects=False,
            headers=proxy.request_headers,
            proxy=proxy.url,
            proxy_headers=proxy.connect_headers,
        ) as response:
            return response.status, response.headers, await response.read()

    def _pick_replica(self) -> int:
        """The replica with the fewest calls in flight; ties in turn (round robin)."""
        count = len(self._urls)
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
            return TransientError(f"timed out after {self._judge.timeout_s:g} s")
        connection_errors: tuple[type[BaseException], ...] = (HttpConnectionError,)
        aiohttp = self._aiohttp  # None: no call went through aiohttp, so none of its errors arise
        if aiohttp is not None:
            if isinstance(exc, aiohttp.InvalidURL):
                return BadRequestError(f"invalid base_url for judge '{self._judge_name}': {exc}")
            connection_errors += (aiohttp.ClientError,)
        if isinstance(exc, connection_errors):
            # refused or dropped connections, a body cut short, a server that hung up
            detail = scrub_secrets(f"{type(exc).__name__}: {exc}", self._secrets)
            return TransientError(f"connection failed ({detail})")
        return None

    async def aclose(self) -> None:
        for direct in self._direct:
            if direct is not None:
                direct.close()
        self._direct, self._loop = (), None
        if self._session is not None:
            await self._session.close()
            self._session = None


@made_on_first_use(frozen=True, init_at_once=True)  # start-up: repr, ==, hash later
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


def _proxy_possible() -> bool:
    """Whether ``urllib.request`` could name a proxy. Elsewhere than macOS and Windows (which
    also read system settings) it reads only environment variables ending in ``_proxy``, any
    case: without one there is none, and urllib need not be imported to say so."""
    if sys.platform == "darwin" or os.name == "nt":
        return True
    return any(name.lower().endswith("_proxy") for name in os.environ)


def env_proxy(url: str) -> ProxySetting:
    """The proxy ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` name for ``url``, if any."""
    if not _proxy_possible():
        return ProxySetting()
    import urllib.request  # noqa: PLC0415 - ~15 ms with http.client and ssl (start-up, #19)

    parts = urllib.parse.urlsplit(url)
    if parts.hostname is None or urllib.request.proxy_bypass(parts.netloc):
        return ProxySetting()
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy:
        return ProxySetting()
    proxy_parts = urllib.parse.urlsplit(proxy)
    if proxy_parts.username is None:
        return ProxySetting(proxy)
    user = urllib.parse.unquote(proxy_parts.username)
    password = urllib.parse.unquote(proxy_parts.password or "")
    bare = proxy_parts._replace(netloc=proxy_parts.netloc.rpartition("@")[2]).geturl()
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    header = {"Proxy-Authorization": f"Basic {token}"}
    if parts.scheme == "https":
        return ProxySetting(bare, connect_headers=header, secret=password or None)
    return ProxySetting(bare, request_headers=header, secret=password or None)
