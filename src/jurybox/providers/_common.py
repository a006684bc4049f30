"""Helpers shared by every provider adapter: timing, token counts, error classification.

Kept small and stable on purpose: each vendor module imports from here, and none of it imports a
vendor SDK. Conventions every adapter follows (so cost and reports read all vendors alike):

* ``Completion.input_tokens`` counts *all* prompt tokens, cached ones included;
  ``cached_input_tokens`` is the part of it served from the vendor's prompt cache.
  (OpenAI reports it that way; an Anthropic adapter adds ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens`` to ``input_tokens``.)
* ``Completion.output_tokens`` counts every billed output token, reasoning ones included;
  ``reasoning_tokens`` is the part of it spent thinking.
"""

from __future__ import annotations

import errno
import importlib
import json
import math
import re
import socket
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import pydantic

from jurybox.config import JudgeConfig
from jurybox.errors import (
    AuthError,
    BadRequestError,
    ConnectError,
    MissingDependencyError,
    ProviderError,
    RateLimitError,
    TransientError,
)
from jurybox.providers.base import read_api_key
from jurybox.records import RateLimits
from jurybox.redaction import redact_credentials

__all__ = [
    "Dependency",
    "MalformedResponseError",
    "Stopwatch",
    "classify_common",
    "classify_status",
    "classify_vendor_error",
    "connect_error",
    "estimate_tokens",
    "estimate_tokens_of",
    "import_dependency",
    "json_object",
    "missing_dependency",
    "parse_retry_after",
    "resolve_api_key",
    "safe_schema_name",
    "scrub_secrets",
]

_MESSAGE_LIMIT = 300


class MalformedResponseError(Exception):
    """The vendor answered 2xx with a body that lacks what its wire format promises.

    Adapters raise it from ``complete``; ``classify_common`` treats it as transient, because a
    truncated or garbled body is usually a proxy or load-balancer hiccup.
    """


class Stopwatch:
    """Wall-clock latency of one call, in milliseconds (monotonic clock)."""

    def __init__(self) -> None:
        self._start = time.perf_counter()

    @property
    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self._start) * 1000.0


def json_object(text: str) -> dict[str, Any] | None:
    """``text`` parsed as a JSON object (a native structured answer), else ``None``: a judge's
    bad JSON is data for the parser to report, not a provider failure."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters per token) where a backend reports none."""
    return math.ceil(len(text) / 4) if text else 0


def estimate_tokens_of(*texts: str) -> int:
    """``estimate_tokens("".join(texts))`` without joining them (a prompt's parts: kilobytes)."""
    size = sum(map(len, texts))
    return math.ceil(size / 4) if size else 0


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: datetime | None = None
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP-date).

    ``headers`` must look names up case-insensitively (httpx/httpx2 headers do); a plain dict
    is also accepted with lower-case keys. Negative, unparsable or missing values give ``None``.
    """
    if headers is None:
        return None
    millis = _header(headers, "retry-after-ms")
    if millis is not None:
        value = non_negative_number(millis)
        if value is not None:
            return value / 1000.0
    raw = _header(headers, "retry-after")
    if raw is None:
        return None
    seconds = non_negative_number(raw)
    if seconds is not None:
        return seconds
    return _seconds_until(raw, now)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:
        value = headers.get(name.title())
    return value


def non_negative_number(raw: str) -> float | None:
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _seconds_until(http_date: str, now: datetime | None) -> float | None:
    import email.utils  # noqa: PLC0415 - start-up (issue #19): only for a dated Retry-After

    try:
        when = email.utils.parsedate_to_datetime(http_date.strip())
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    reference = now if now is not None else datetime.now(UTC)
    return max(0.0, (when - reference).total_seconds())


def scrub_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove known secrets and key-shaped strings from ``text`` and cap its length."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    # Known secrets first (exact), then every credential shape (see jurybox.redaction).
    text = redact_credentials(text)
    if len(text) > _MESSAGE_LIMIT:
        text = text[:_MESSAGE_LIMIT] + "…"
    return text


def classify_status(
    status_code: int,
    message: str,
    *,
    retry_after: float | None = None,
    rate_limits: RateLimits | None = None,
) -> ProviderError:
    """Map an HTTP status to the ProviderError tree (``message`` must already be scrubbed);
    a 429 carries the response's ``rate_limits`` for the adaptive limiter."""
    if status_code == 429:
        return RateLimitError(
            message, retry_after=retry_after, status_code=status_code, rate_limits=rate_limits
        )
    if status_code in (401, 403):
        return AuthError(message, status_code=status_code)
    # 408 (request timeout) and 409 (conflict, e.g. a lock) clear up on their own; vendors'
    # own SDKs retry them too.
    if status_code >= 500 or status_code in (408, 409):
        return TransientError(message, status_code=status_code)
    return BadRequestError(message, status_code=status_code)


def classify_common(exc: BaseException, secrets: Iterable[str | None] = ()) -> ProviderError | None:
    """Classify what is not vendor-specific; ``None`` when the adapter must decide.

    ProviderErrors pass through; timeouts, dropped connections and malformed bodies (JSON or
    pydantic validation errors, ``MalformedResponseError``) are transient.
    """
    if isinstance(exc, ProviderError):
        return exc
    detail = scrub_secrets(f"{type(exc).__name__}: {exc}", secrets)
    if isinstance(exc, TimeoutError):
        return TransientError(f"timed out ({detail})", kind="timeout")
    if isinstance(exc, ConnectionError | socket.gaierror):
        return connect_error(exc, detail)
    if isinstance(exc, json.JSONDecodeError | MalformedResponseError | pydantic.ValidationError):
        return TransientError(f"malformed response body ({detail})", kind="bad response")
    return None


def server_of(url: str | None) -> str | None:
    """``scheme://host:port`` of ``url``, user info left out (for a hint that is printed)."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}" if parts.scheme and host else None


def connect_error(
    exc: BaseException, detail: str, url: str | None = None, *, role: str = "server"
) -> ConnectError:
    """A ``ConnectError`` for a failed connection, its cause read from the exception chain (an
    SDK wraps the socket's error): refused, DNS, reset, or other. ``detail`` must already be
    scrubbed; ``url`` (what was called: the endpoint, or the proxy) names it in the hint."""
    return ConnectError(detail, cause=_connect_cause(exc), server=server_of(url), role=role)


_RESET = (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED)


def _connect_cause(exc: BaseException) -> str:
    """Walk ``exc``, its causes, contexts and ``os_error`` (aiohttp) for the socket's error."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, socket.gaierror) or "DNSError" in type(current).__name__:
            return "dns"
        code = current.errno if isinstance(current, OSError) else None
        if isinstance(current, ConnectionRefusedError) or code == errno.ECONNREFUSED:
            return "refused"
        if isinstance(current, ConnectionResetError | BrokenPipeError) or code in _RESET:
            return "reset"
        todo += [current.__cause__, current.__context__, getattr(current, "os_error", None)]
    return "other"


def classify_vendor_error(
    exc: BaseException,
    vendor: str,
    classify_sdk: Callable[[BaseException], ProviderError | None],
    secrets: Iterable[str | None] = (),
) -> ProviderError:
    """An adapter's ``classify_error``: ProviderErrors pass through, then the vendor SDK's own
    exceptions (``classify_sdk``), then ``classify_common``; anything else is a ProviderError
    that names ``vendor``."""
    if isinstance(exc, ProviderError):
        return exc
    secrets = tuple(secrets)
    classified = classify_sdk(exc) or classify_common(exc, secrets)
    if classified is not None:
        return classified
    return ProviderError(
        scrub_secrets(f"{vendor}: unexpected {type(exc).__name__}: {exc}", secrets)
    )


def safe_schema_name(name: str) -> str:
    """A schema/tool name vendors accept: ``^[A-Za-z0-9_-]{1,64}$``."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:64]
    return cleaned or "judgment"


def import_dependency(module: str, provider: str, package: str, *commands: str) -> ModuleType:
    """Import an adapter's client library when a judge needs it; a missing one is an error that
    says how to install it (``commands``)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing_dependency(provider, package, *commands) from None


@dataclass(frozen=True, slots=True)
class Dependency:
    """An adapter's optional client library: every adapter imports its SDK only through
    ``load``, when a judge needs it (never at module import), so a missing one is reported with
    the commands that install it and only to a config that names the provider."""

    provider: str
    package: str  # as the error names it, e.g. "the anthropic SDK"
    commands: tuple[str, ...]

    def load(self, module: str) -> ModuleType:
        """The imported ``module`` (a top-level package or one of its submodules)."""
        return import_dependency(module, self.provider, self.package, *self.commands)


def missing_dependency(provider: str, package: str, *commands: str) -> MissingDependencyError:
    """The error for an adapter whose SDK is not installed, with the commands that fix it."""
    return MissingDependencyError(
        f"the '{provider}' provider needs {package}; install it with: {' and '.join(commands)}"
    )


def resolve_api_key(judge: JudgeConfig, judge_name: str, *, vendor_env: str) -> str | None:
    """The judge's key, read now from the environment (never stored in config).

    A judge that talks to the vendor's own endpoint (no ``base_url``) and leaves ``api_key_env``
    out of its config reads the vendor's usual variable (``vendor_env``, e.g. OPENAI_API_KEY);
    an explicit ``api_key_env: null`` means "no key" (local and self-hosted servers).
    """
    implicit = "api_key_env" not in judge.model_fields_set
    if judge.api_key_env is None and implicit and judge.base_url is None:
        judge = judge.model_copy(update={"api_key_env": vendor_env})
    return read_api_key(judge, judge_name)
