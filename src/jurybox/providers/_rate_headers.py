"""Reading a key's rate limits off a provider's response: headers and Gemini's 429 body.

Three dialects, all per minute:

* OpenAI (and servers that copy it: vLLM gateways, Azure, Groq, OpenRouter ...):
  ``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests``,
  ``x-ratelimit-reset-requests`` (a Go-style duration: ``"6m0s"``, ``"1s"``, ``"20ms"``) and the
  same three for ``-tokens``.
* Anthropic: ``anthropic-ratelimit-requests-limit`` / ``-remaining`` / ``-reset`` (an RFC 3339
  time) and the same for ``tokens`` (falling back to ``input-tokens`` when only that is sent).
* Gemini sends no such headers; its 429 body carries ``google.rpc.RetryInfo.retryDelay``
  (``"23s"``) and ``google.rpc.QuotaFailure`` violations whose ``quotaId`` names the quota
  (``...RequestsPerMinute...``) and ``quotaValue`` its size.

Plus ``Retry-After`` / ``retry-after-ms`` (``parse_retry_after``). Anything missing or
unreadable is ``None``: a garbled header must never fail a call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from jurybox.errors import ProviderError
from jurybox.providers._common import classify_status, non_negative_number, parse_retry_after
from jurybox.records import RateLimits

__all__ = ["parse_duration", "quota_limits", "rate_limits_from_headers", "status_error"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_OPENAI = "x-ratelimit-{field}-{kind}"  # field: limit / remaining / reset
_ANTHROPIC = "anthropic-ratelimit-{kind}-{field}"


def parse_duration(text: str) -> float | None:
    """Seconds in a Go-style duration (``"1h2m3.5s"``, ``"20ms"``) or a bare number of seconds."""
    text = text.strip()
    number = non_negative_number(text)
    if number is not None:
        return number
    total, at = 0.0, 0
    for match in _DURATION_PART.finditer(text):
        if match.start() != at:
            return None
        total += float(match.group(1)) * _UNIT_S[match.group(2)]
        at = match.end()
    return total if at == len(text) and at > 0 else None


def status_error(status: int, message: str, headers: Mapping[str, str]) -> ProviderError:
    """``classify_status`` of a response (``message`` scrubbed), with the Retry-After and the
    rate limits its headers state."""
    retry_after, limits = parse_retry_after(headers), rate_limits_from_headers(headers)
    return classify_status(status, message, retry_after=retry_after, rate_limits=limits)


def rate_limits_from_headers(
    headers: Mapping[str, str] | None, *, now: datetime | None = None
) -> RateLimits | None:
    """The limits a response's headers state (OpenAI or Anthropic style), or ``None``.

    ``headers`` must look names up case-insensitively (httpx, aiohttp and werkzeug headers do)
    or have lower-case keys.
    """
    if headers is None or not _mentions_limits(headers):
        return None  # most responses of a server you run: no need for ~20 look-ups
    now = now or datetime.now(UTC)
    found = RateLimits(
        requests_limit=_first_number(headers, _names("limit", "requests")),
        requests_remaining=_first_number(headers, _names("remaining", "requests")),
        requests_reset_s=_reset(headers, "requests", now),
        tokens_limit=_first_number(headers, _names("limit", "tokens", "input-tokens")),
        tokens_remaining=_first_number(headers, _names("remaining", "tokens", "input-tokens")),
        tokens_reset_s=_reset(headers, "tokens", now) or _reset(headers, "input-tokens", now),
        retry_after_s=parse_retry_after(headers, now=now),
    )
    return found if found else None


def quota_limits(details: Iterable[Mapping[str, Any]], retry_after_s: float | None) -> RateLimits:
    """Limits from a Gemini 429's ``error.details``: per-minute ``QuotaFailure`` violations
    (``quotaValue``) and the ``RetryInfo`` delay (``retry_after_s``, already read)."""
    requests = tokens = None
    for item in details:
        if not str(item.get("@type", "")).endswith("google.rpc.QuotaFailure"):
            continue
        for violation in item.get("violations") or ():
            if not isinstance(violation, Mapping):
                continue
            quota = str(violation.get("quotaId") or violation.get("quotaMetric") or "")
            value = non_negative_number(str(violation.get("quotaValue", "")))
            if value is None or "PerMinute" not in quota:
                continue
            if "Token" in quota:
                tokens = value if tokens is None else min(tokens, value)
            elif "Request" in quota:
                requests = value if requests is None else min(requests, value)
    return RateLimits(requests_limit=requests, tokens_limit=tokens, retry_after_s=retry_after_s)


# Every header read here (and by ``parse_retry_after``) starts with one of these.
_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "retry-after")


def _mentions_limits(headers: Mapping[str, str]) -> bool:
    # ``keys()``: werkzeug's Headers iterate as (name, value) pairs.
    return any(name.lower().startswith(_PREFIXES) for name in headers.keys())  # noqa: SIM118


def _names(field: str, *kinds: str) -> list[str]:
    names = []
    for kind in kinds:
        names.append(_OPENAI.format(field=field, kind=kind))
        names.append(_ANTHROPIC.format(field=field, kind=kind))
    return names


def _get(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    return value if isinstance(value, str) else None


def _first_number(headers: Mapping[str, str], names: list[str]) -> float | None:
    for name in names:
        raw = _get(headers, name)
        value = non_negative_number(raw) if raw is not None else None
        if value is not None:
            return value
    return None


def _reset(headers: Mapping[str, str], kind: str, now: datetime) -> float | None:
    raw = _get(headers, _OPENAI.format(field="reset", kind=kind))
    if raw is not None:
        return parse_duration(raw)
    raw = _get(headers, _ANTHROPIC.format(field="reset", kind=kind))
    return _seconds_until(raw, now) if raw is not None else None


def _seconds_until(stamp: str, now: datetime) -> float | None:
    """Seconds from ``now`` to an RFC 3339 time (never negative)."""
    try:
        when = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())
