"""Gemini judges through google-genai (the Gemini Developer API, not Vertex AI).

What this adapter irons out so a Gemini judge behaves like every other vendor:

* **Exactly one HTTP request per call.** google-genai has three ways to send more than one:
  tenacity retries (``HttpOptions.retry_options``), an implicit resend on aiohttp connection
  errors when no ``retry_options`` is set, and *automatic continuation* (following
  ``continuationToken`` responses). ``HttpRetryOptions(attempts=1)`` switches off the first two
  (it stops tenacity after one attempt, and any ``retry_options`` disables the implicit resend);
  ``automatic_continuation=False`` and ``AutomaticFunctionCallingConfig(disable=True)`` the rest.
  The pipeline's retry policy gets the server's hint instead: ``Retry-After`` or, as Gemini
  sends it, ``google.rpc.RetryInfo.retryDelay`` in the error body; the adaptive limiter also
  gets the per-minute quota a 429's ``google.rpc.QuotaFailure`` names (Gemini sends no
  rate-limit headers).
* **Native structured output** uses ``response_mime_type="application/json"`` with
  ``response_json_schema`` (wire ``responseJsonSchema``): the installed SDK's ``response_schema``
  converts a dict into its own OpenAPI-subset ``Schema`` and rejects plain JSON Schema features
  such as ``"type": ["string", "null"]``, while ``response_json_schema`` passes it through.
* **Implicit prompt caching**: the static prefix goes first, as ``system_instruction``.
* **Parameters from config only**: ``temperature: null`` leaves it out (the server default, 1.0,
  is what Gemini 3 models are tuned for); ``vertexai=False``, ``api_version`` and ``base_url``
  are set explicitly so that ``GOOGLE_GENAI_USE_VERTEXAI``, ``GOOGLE_GENAI_API_VERSION`` and
  ``GOOGLE_GEMINI_BASE_URL`` in the environment cannot redirect a run.

The key comes from ``api_key_env`` (``GEMINI_API_KEY`` when the config leaves it out and talks to
the public API); a key is required, read in ``create``; ``GoogleProvider._connect`` builds the
client from it on the first call. The SDK sends it in the ``x-goog-api-key`` header, never in
the URL.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from jurybox.config import JudgeConfig
from jurybox.errors import AuthError, ProviderError, TransientError
from jurybox.providers._common import (
    Dependency,
    MalformedResponseError,
    Stopwatch,
    classify_status,
    classify_vendor_error,
    connect_error,
    json_object,
    parse_retry_after,
    resolve_api_key,
    scrub_secrets,
)
from jurybox.providers._rate_headers import quota_limits
from jurybox.records import Completion, CompletionRequest, FinishReason

if TYPE_CHECKING:  # the SDK itself is loaded through ``_SDK`` when a judge needs it
    from google import genai
    from google.genai import errors as genai_errors
    from google.genai import types as genai_types

__all__ = [
    "API_VERSION",
    "DEFAULT_API_KEY_ENV",
    "GoogleProvider",
    "build_generate_config",
    "build_http_options",
    "create",
]

logger = logging.getLogger(__name__)

_SDK = Dependency("google", "google-genai", ('pip install "jurybox[google]"',))
DEFAULT_API_KEY_ENV = "GEMINI_API_KEY"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/"
# Pinned rather than left to the SDK default (or its env override): responseJsonSchema and
# thinking usage live in v1beta, and a run should not change endpoints with the environment.
API_VERSION = "v1beta"
# The SDK timeout bounds each phase of the request; this bounds the whole call.
_WALL_CLOCK_SLACK = 1.25
_FILTERED = frozenset(
    {
        "SAFETY",
        "PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "RECITATION",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
    }
)
# CONTINUATION counts as truncated: with automatic continuation off the answer is incomplete.
_FINISH: Mapping[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "CONTINUATION": "length",
}
_INVALID_KEY_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_EXPIRED"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def create(judge_name: str, judge: JudgeConfig) -> GoogleProvider:
    """Build a Gemini judge. Raises MissingDependencyError or AuthError before any call."""
    sdk = _load_sdk()
    key = resolve_api_key(judge, judge_name, vendor_env=DEFAULT_API_KEY_ENV)
    if not key:
        # Without an explicit key google-genai reads GOOGLE_API_KEY / GEMINI_API_KEY itself (and
        # would send it to whatever base_url is configured), or refuses to start.
        raise AuthError(
            f"judge '{judge_name}': the google provider needs an API key; name the environment "
            f"variable that holds it in `api_key_env` (default {DEFAULT_API_KEY_ENV})"
        )
    _warn_about_temperature(judge_name, judge)
    return GoogleProvider(judge_name, judge, sdk, key=key)


class _Sdk(NamedTuple):
    """The parts of google-genai (and its HTTP client) this adapter uses."""

    genai: ModuleType
    errors: ModuleType
    types: ModuleType
    httpx2: ModuleType


def _load_sdk() -> _Sdk:
    return _Sdk(
        _SDK.load("google.genai"),
        _SDK.load("google.genai.errors"),
        _SDK.load("google.genai.types"),
        _SDK.load("httpx2"),
    )


def build_http_options(judge: JudgeConfig) -> genai_types.HttpOptions:
    """Client-wide HTTP options: endpoint, timeout (ms), no SDK retries, extra body fields."""
    sdk_types = _SDK.load("google.genai.types")
    options: genai_types.HttpOptions = sdk_types.HttpOptions(
        base_url=judge.base_url or DEFAULT_BASE_URL,
        api_version=API_VERSION,
        timeout=max(1, math.ceil(judge.timeout_s * 1000)),
        retry_options=sdk_types.HttpRetryOptions(attempts=1),
        extra_body=dict(judge.extra_body) if judge.extra_body else None,
    )
    return options


def build_generate_config(
    request: CompletionRequest, judge: JudgeConfig
) -> genai_types.GenerateContentConfig:
    """Per-call config; ``None`` fields are left out of the request body by the SDK."""
    sdk_types = _SDK.load("google.genai.types")
    schema = request.response_schema if judge.structured_output else None
    config: genai_types.GenerateContentConfig = sdk_types.GenerateContentConfig(
        system_instruction=request.system or None,
        temperature=request.temperature,
        max_output_tokens=request.max_tokens,
        seed=request.seed,
        response_mime_type="application/json" if schema is not None else None,
        response_json_schema=dict(schema) if schema is not None else None,
        automatic_continuation=False,
        automatic_function_calling=sdk_types.AutomaticFunctionCallingConfig(disable=True),
    )
    return config


def _warn_about_temperature(judge_name: str, judge: JudgeConfig) -> None:
    # Google tunes Gemini 3 for the default temperature of 1.0 and warns that lower values can
    # loop or degrade; jurybox still sends what the config says, but says so once per judge.
    model = (judge.model or "").removeprefix("models/")
    if model.startswith("gemini-3") and judge.temperature not in (None, 1.0):
        logger.warning(
            "judge '%s': %s is tuned for temperature 1.0 but the config sets %s; "
            "set `temperature: null` to use the model's default",
            judge_name,
            model,
            judge.temperature,
        )


class GoogleProvider:
    """One Gemini judge: ``complete`` makes exactly one HTTP request."""

    vendor = "google"
    is_local = False

    def __init__(self, judge_name: str, judge: JudgeConfig, sdk: _Sdk, *, key: str) -> None:
        if judge.model is None:  # JudgeConfig's validator guarantees it; this narrows the type
            raise ValueError(f"judge '{judge_name}': provider 'google' needs a `model`")
        self.judge_name = judge_name
        self.model = judge.model
        self._judge = judge
        self._sdk = sdk
        self._key = key
        # Kept only to scrub error texts; never printed (see __repr__).
        self._secrets: Sequence[str] = (key,)
        self._client: genai.Client | None = None  # built by ``_connect``

    def __repr__(self) -> str:
        return f"GoogleProvider(judge={self.judge_name!r}, model={self.model!r})"

    def _connect(self) -> genai.Client:
        """The SDK client: the one place it is configured. ``aclose`` drops it."""
        if self._client is None:
            options = build_http_options(self._judge)
            self._client = self._sdk.genai.Client(
                api_key=self._key, vertexai=False, http_options=options
            )
        return self._client

    async def complete(self, request: CompletionRequest) -> Completion:
        config = build_generate_config(request, self._judge)
        watch = Stopwatch()
        try:
            async with asyncio.timeout(self._judge.timeout_s * _WALL_CLOCK_SLACK):
                response = await self._connect().aio.models.generate_content(
                    model=self.model, contents=request.user, config=config
                )
        except (TypeError, KeyError, AttributeError) as exc:
            # google-genai converts the body only after the HTTP call returned 200; a body of
            # the wrong shape surfaces as one of these rather than as an SDK error.
            raise MalformedResponseError(
                f"gemini: response body of unexpected shape ({type(exc).__name__})"
            ) from exc
        return completion_from_response(
            response,
            model=self.model,
            latency_ms=watch.elapsed_ms,
            structured=config.response_mime_type is not None,
        )

    def classify_error(self, exc: BaseException) -> ProviderError:
        return classify_vendor_error(exc, "gemini", self._classify_sdk_error, self._secrets)

    def _classify_sdk_error(self, exc: BaseException) -> ProviderError | None:
        genai_errors, httpx2 = self._sdk.errors, self._sdk.httpx2
        if isinstance(exc, genai_errors.APIError):
            return _classify_api_error(exc, self._secrets)
        if isinstance(exc, genai_errors.UnknownApiResponseError):
            return TransientError("gemini: malformed response body", kind="bad response")
        if isinstance(exc, httpx2.TimeoutException):
            return TransientError("gemini: request timed out", kind="timeout")
        # aiohttp is used instead of httpx2 when it is installed; both only reach here for
        # transport failures (status errors arrive as genai APIError).
        if isinstance(exc, httpx2.TransportError) or type(exc).__module__.startswith("aiohttp"):
            detail = scrub_secrets(f"gemini: {type(exc).__name__}: {exc}", self._secrets)
            return connect_error(exc, detail, self._judge.base_url or DEFAULT_BASE_URL)
        return None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aio.aclose()
            self._client.close()
            self._client = None


def _classify_api_error(exc: genai_errors.APIError, secrets: Sequence[str]) -> ProviderError:
    details = _error_details(exc.details)
    message = scrub_secrets(f"gemini HTTP {exc.code} {exc.status}: {exc.message or ''}", secrets)
    # Gemini answers a bad key with 400 INVALID_ARGUMENT; only ErrorInfo.reason tells it apart.
    if any(item.get("reason") in _INVALID_KEY_REASONS for item in details):
        return AuthError(message, status_code=exc.code)
    headers = getattr(exc.response, "headers", None)
    retry_after = parse_retry_after(headers) if headers is not None else None
    if retry_after is None:
        retry_after = _retry_delay(details)
    # Gemini states its per-minute quota only here, in a 429's QuotaFailure details.
    limits = quota_limits(details, retry_after) if exc.code == 429 else None
    return classify_status(exc.code, message, retry_after=retry_after, rate_limits=limits)


def _error_details(body: Any) -> list[dict[str, Any]]:
    """The ``error.details`` list of a google.rpc.Status body (empty when absent)."""
    error = body.get("error", body) if isinstance(body, dict) else None
    items = error.get("details") if isinstance(error, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _retry_delay(details: list[dict[str, Any]]) -> float | None:
    for item in details:
        if str(item.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def completion_from_response(
    response: genai_types.GenerateContentResponse,
    *,
    model: str,
    latency_ms: float,
    structured: bool,
) -> Completion:
    """Turn a generateContent response into a Completion; raises MalformedResponseError."""
    common: dict[str, Any] = {
        "model": response.model_version or model,
        "latency_ms": latency_ms,
        **_usage_fields(response.usage_metadata),
    }
    blocked = _prompt_block(response)
    if blocked is not None:
        return Completion(text="", finish_reason="content_filter", refusal=blocked, **common)
    if not response.candidates:
        raise MalformedResponseError("gemini: response has no candidates and no block reason")
    candidate = response.candidates[0]
    if candidate.content is None and candidate.finish_reason is None:
        raise MalformedResponseError("gemini: candidate has neither content nor finishReason")
    reason = _enum_name(candidate.finish_reason)
    finish = "content_filter" if reason in _FILTERED else _FINISH.get(reason, "other")
    text = _answer_text(candidate)
    refusal = None
    if finish == "content_filter":
        refusal = f"blocked: {reason}" + (
            f" ({candidate.finish_message})" if candidate.finish_message else ""
        )
    parsed = json_object(text) if structured and finish == "stop" else None
    return Completion(text=text, finish_reason=finish, structured=parsed, refusal=refusal, **common)


def _prompt_block(response: genai_types.GenerateContentResponse) -> str | None:
    feedback = response.prompt_feedback
    if feedback is None or feedback.block_reason is None:
        return None
    reason = _enum_name(feedback.block_reason)
    note = f" ({feedback.block_reason_message})" if feedback.block_reason_message else ""
    return f"prompt blocked: {reason}{note}"


def _enum_name(value: Any) -> str:
    return str(getattr(value, "value", value) or "")


def _answer_text(candidate: genai_types.Candidate) -> str:
    # Thought summaries are not the answer: the parser must only ever see what the judge said.
    parts = candidate.content.parts if candidate.content is not None else None
    return "".join(part.text for part in parts or () if part.text and not part.thought)


def _usage_fields(
    usage: genai_types.GenerateContentResponseUsageMetadata | None,
) -> dict[str, int | None]:
    """Shared convention: input includes cached tokens; output includes thinking tokens."""
    if usage is None:
        return {}
    thoughts = usage.thoughts_token_count
    return {
        "input_tokens": usage.prompt_token_count,
        "output_tokens": (usage.candidates_token_count or 0) + (thoughts or 0),
        "cached_input_tokens": usage.cached_content_token_count or 0,
        "reasoning_tokens": thoughts,
    }
