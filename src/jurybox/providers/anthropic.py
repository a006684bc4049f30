"""Anthropic judges through the official SDK (Messages API).

What this adapter irons out so an Anthropic judge behaves like every other vendor:

* **No SDK retries.** ``AsyncAnthropic(max_retries=0)``: the SDK would otherwise wait out any
  Retry-After without a cap and stack its retries under the pipeline's. The pipeline's one retry
  policy gets the Retry-After instead, through ``RateLimitError.retry_after``.
* **Sampling parameters through ``extra_body``.** ``messages.create`` in SDK ≥ 1.0 has no
  ``temperature``/``top_p``/``top_k`` keyword, so ``temperature`` travels in ``extra_body`` (and
  is left out entirely when the config says ``null``); ``JudgeConfig.extra_body`` is merged last.
* **Native structured output** is a forced tool call: one tool whose ``input_schema`` is the
  response schema and ``tool_choice={"type": "tool", ...}``. Its input becomes
  ``Completion.structured`` and its JSON the raw text.
* **Prompt caching.** The static prefix (``request.system``) is one system block marked
  ``cache_control: ephemeral``; the tool definition sits before it in the cached prefix.
* **Rate limits.** ``messages.with_raw_response.create``: the same call, plus the response's
  ``anthropic-ratelimit-*`` headers for the pipeline's adaptive limiter (429s carry them too).
* **Errors.** HTTP 529 (overloaded) is classified as ``TransientError``, not ``RateLimitError``:
  it is vendor-wide capacity, not this key's quota, so it gets exponential backoff without
  making the pipeline treat it as a signal that this judge exceeds its rate.

Credentials: the key comes from ``api_key_env`` (``ANTHROPIC_API_KEY`` when the config leaves it
out and talks to the public API; ``api_key_env: null`` sends no key), read once in ``create``;
the client is built from it by ``AnthropicProvider._connect`` on the first call.
Key and ``base_url`` are always passed explicitly, so the SDK's own environment variables
(``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``, credential profiles) are never consulted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from jurybox.config import JudgeConfig
from jurybox.errors import ProviderError, TransientError
from jurybox.providers._common import (
    Dependency,
    MalformedResponseError,
    Stopwatch,
    classify_vendor_error,
    connect_error,
    resolve_api_key,
    safe_schema_name,
    scrub_secrets,
)
from jurybox.providers._rate_headers import rate_limits_from_headers, status_error
from jurybox.records import Completion, CompletionRequest, FinishReason, RateLimits

if TYPE_CHECKING:  # the SDK itself is loaded by ``create`` (``_SDK.load``), when a judge needs it
    import anthropic
    from anthropic.types import Message, Usage

__all__ = ["DEFAULT_API_KEY_ENV", "AnthropicProvider", "build_message_params", "create"]

_SDK = Dependency("anthropic", "the anthropic SDK", ('pip install "jurybox[anthropic]"',))
DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_BASE_URL = "https://api.anthropic.com"
# The SDK's own timeout bounds each phase (connect, each read); this bounds the whole call, so a
# server that trickles bytes cannot hold a worker far past the configured timeout.
_WALL_CLOCK_SLACK = 1.25
_TOOL_DESCRIPTION = (
    "Record your judgment. Call this tool exactly once; its input must follow the schema."
)
_FINISH: Mapping[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
}


def create(judge_name: str, judge: JudgeConfig) -> AnthropicProvider:
    """Build an Anthropic judge. Raises MissingDependencyError or AuthError before any call."""
    sdk = _SDK.load("anthropic")
    key = resolve_api_key(judge, judge_name, vendor_env=DEFAULT_API_KEY_ENV)
    return AnthropicProvider(judge_name, judge, sdk, key=key)


def build_message_params(
    model: str, request: CompletionRequest, judge: JudgeConfig
) -> dict[str, Any]:
    """Keyword arguments for ``messages.create``: what goes on the wire, nothing implicit."""
    params: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [{"role": "user", "content": request.user}],
    }
    if request.system:
        params["system"] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
    tool = _tool_for(request, judge)
    if tool is not None:
        params["tools"] = [tool]
        params["tool_choice"] = {"type": "tool", "name": tool["name"]}
    extra: dict[str, Any] = {}
    if request.temperature is not None:
        extra["temperature"] = request.temperature
    extra.update(judge.extra_body or {})
    if extra:
        params["extra_body"] = extra
    return params


def _tool_for(request: CompletionRequest, judge: JudgeConfig) -> dict[str, Any] | None:
    if not judge.structured_output or request.response_schema is None:
        return None
    return {
        "name": safe_schema_name(request.schema_name),
        "description": _TOOL_DESCRIPTION,
        "input_schema": dict(request.response_schema),
    }


class AnthropicProvider:
    """One Anthropic judge: ``complete`` makes exactly one HTTP request."""

    vendor = "anthropic"
    is_local = False

    def __init__(self, judge_name: str, judge: JudgeConfig, sdk: Any, *, key: str | None) -> None:
        if judge.model is None:  # JudgeConfig's validator guarantees it; this narrows the type
            raise ValueError(f"judge '{judge_name}': provider 'anthropic' needs a `model`")
        self.judge_name = judge_name
        self.model = judge.model
        self._judge = judge
        self._sdk = sdk
        self._key = key
        # Kept only to scrub error texts; never printed (see __repr__).
        self._secrets: Sequence[str] = (key,) if key else ()
        self._client: anthropic.AsyncAnthropic | None = None  # built by ``_connect``

    def __repr__(self) -> str:
        return f"AnthropicProvider(judge={self.judge_name!r}, model={self.model!r})"

    def _connect(self) -> anthropic.AsyncAnthropic:
        """The SDK client: the one place it is configured. ``aclose`` drops it."""
        if self._client is None:
            key = self._key
            self._client = self._sdk.AsyncAnthropic(
                # An explicit (possibly empty) key: with None the SDK would fall back to
                # ANTHROPIC_API_KEY or a credentials profile and could send a real key to a
                # base_url the config points elsewhere.
                api_key=key or "",
                # A keyless server gets no Authorization header at all (rather than "Bearer ");
                # the SDK's header layers accept Omit where their annotations say str.
                default_headers=None
                if key
                else cast("dict[str, str]", {"Authorization": self._sdk.omit}),
                base_url=self._judge.base_url or DEFAULT_BASE_URL,
                max_retries=0,  # the pipeline owns retries; see the module docstring
                timeout=self._judge.timeout_s,
            )
        return self._client

    async def complete(self, request: CompletionRequest) -> Completion:
        params = build_message_params(self.model, request, self._judge)
        watch = Stopwatch()
        async with asyncio.timeout(self._judge.timeout_s * _WALL_CLOCK_SLACK):
            # with_raw_response: the same call, plus the response's rate-limit headers
            raw = await self._connect().messages.with_raw_response.create(**params)
            message: object = await raw.parse()
        limits = rate_limits_from_headers(raw.headers)
        if not isinstance(message, self._sdk.types.Message):
            raise MalformedResponseError(
                f"anthropic: expected a Message body, got {type(message).__name__}"
            )
        try:
            return completion_from_message(
                cast("Message", message),
                model=self.model,
                latency_ms=watch.elapsed_ms,
                rate_limits=limits,
            )
        except (AttributeError, TypeError) as exc:
            # The SDK builds responses without validation, so a body of the wrong shape (say,
            # `"usage": 5`) only fails here, when a field is used.
            raise MalformedResponseError(
                f"anthropic: response body of unexpected shape ({type(exc).__name__})"
            ) from exc

    def classify_error(self, exc: BaseException) -> ProviderError:
        return classify_vendor_error(exc, "anthropic", self._classify_sdk_error, self._secrets)

    def _classify_sdk_error(self, exc: BaseException) -> ProviderError | None:
        anthropic = self._sdk
        if isinstance(exc, anthropic.APIStatusError):
            detail = scrub_secrets(_status_detail(exc), self._secrets)
            return status_error(exc.status_code, detail, exc.response.headers)
        if isinstance(exc, anthropic.APITimeoutError):
            return TransientError("anthropic: request timed out", kind="timeout")
        if isinstance(exc, anthropic.APIConnectionError):
            detail = scrub_secrets(f"anthropic: {exc}", self._secrets)
            return connect_error(exc, detail, self._judge.base_url or DEFAULT_BASE_URL)
        if isinstance(exc, anthropic.APIResponseValidationError):
            return TransientError("anthropic: malformed response body", kind="bad response")
        return None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _status_detail(exc: anthropic.APIStatusError) -> str:
    # The vendor's error type and message, not the whole body: bodies can be long and echo input.
    kind = exc.type or "error"
    return f"anthropic HTTP {exc.status_code} {kind}: {exc.api_message or exc.message}"


def completion_from_message(
    message: Message, *, model: str, latency_ms: float, rate_limits: RateLimits | None = None
) -> Completion:
    """Turn a Messages API response into a Completion; raises MalformedResponseError."""
    blocks = message.content
    if not isinstance(blocks, list):
        raise MalformedResponseError("anthropic: response has no `content` list")
    finish = _FINISH.get(message.stop_reason or "", "other")
    text, structured = _text_and_input(blocks)
    refusal = None
    if finish == "refusal":
        details = message.stop_details
        refusal = (details.explanation if details is not None else None) or text or "refused"
    if finish != "stop":
        structured = None  # a truncated or refused tool call is not a result
    return Completion(
        text=text,
        model=message.model if isinstance(message.model, str) and message.model else model,
        latency_ms=latency_ms,
        finish_reason=finish,
        structured=structured,
        refusal=refusal,
        rate_limits=rate_limits,
        **_usage_fields(message.usage),
    )


def _text_and_input(blocks: list[Any]) -> tuple[str, dict[str, Any] | None]:
    texts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "tool_use" and isinstance(getattr(block, "input", None), dict):
            tool_input = dict(block.input)
            return json.dumps(tool_input, ensure_ascii=False), tool_input
        if kind == "text" and isinstance(getattr(block, "text", None), str):
            texts.append(block.text)
    return "".join(texts), None


def _usage_fields(usage: Usage | None) -> dict[str, int | None]:
    """Token counts in the shared convention: input includes cache reads and cache writes."""
    if usage is None:
        return {}
    cache_read = usage.cache_read_input_tokens or 0
    # Cache writes are billed as input (at a premium the shared cost helper does not model).
    cache_write = usage.cache_creation_input_tokens or 0
    details = usage.output_tokens_details
    return {
        "input_tokens": usage.input_tokens + cache_read + cache_write,
        "output_tokens": usage.output_tokens,
        "cached_input_tokens": cache_read,
        "reasoning_tokens": details.thinking_tokens if details is not None else None,
    }
