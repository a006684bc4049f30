"""OpenAI Chat Completions through the official SDK; with ``base_url`` the same adapter serves
vLLM, Ollama, llama.cpp server and LM Studio.

Every parameter comes from the request/config (no model-specific guessing): ``temperature=None``
omits it, ``max_tokens_param`` picks ``max_tokens`` or ``max_completion_tokens``, ``seed`` and
``extra_body`` pass through. The static system message goes first so OpenAI's automatic prompt
caching can reuse the prefix. SDK retries are off; ``jurybox.pipeline`` owns the retry policy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.errors import ProviderError, TransientError
from jurybox.providers._common import (
    MalformedResponseError,
    Stopwatch,
    classify_common,
    classify_status,
    missing_dependency,
    parse_retry_after,
    resolve_api_key,
    safe_schema_name,
    scrub_secrets,
)
from jurybox.records import Completion, CompletionRequest, FinishReason

# The SDK insists on a key even for servers that ignore it (Ollama, vLLM without --api-key).
PLACEHOLDER_KEY = "not-needed"
_FINISH_REASONS: dict[str | None, FinishReason] = {
    None: "stop",  # some compatible servers omit it on a normal stop
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
}


def _import_sdk() -> ModuleType:
    try:
        import openai  # noqa: PLC0415 - only this module may import the SDK, and only when used
    except ImportError:
        raise missing_dependency("openai", "the openai SDK", "pip install openai") from None
    return openai


class OpenAIProvider:
    """One judge behind the Chat Completions API."""

    vendor = "openai"
    is_local = False

    def __init__(self, judge_name: str, judge: JudgeConfig) -> None:
        if not judge.model:
            raise ValueError(f"judge '{judge_name}': the openai provider needs a model")
        self._sdk = _import_sdk()
        self._judge_name = judge_name
        self._judge = judge
        self.model = judge.model
        self._client: Any = None  # created on first call, so the key is read then

    def __repr__(self) -> str:
        where = self._judge.base_url or "api.openai.com"
        return f"OpenAIProvider(judge={self._judge_name!r}, model={self.model!r}, at={where!r})"

    def _get_client(self) -> Any:
        if self._client is None:
            key = resolve_api_key(self._judge, self._judge_name, vendor_env="OPENAI_API_KEY")
            self._client = self._sdk.AsyncOpenAI(
                api_key=key or PLACEHOLDER_KEY,
                base_url=self._judge.base_url,
                max_retries=0,
                timeout=self._judge.timeout_s,
            )
        return self._client

    async def complete(self, request: CompletionRequest) -> Completion:
        client = self._get_client()
        watch = Stopwatch()
        body = self.request_params(request)
        # ``chat.completions.create`` would walk the (multi-KB) messages through the SDK's
        # TypedDict transform on every call (~0.8 ms CPU) only to send the same plain JSON; the
        # client's own ``post`` sends ``body`` as is, with the same auth, timeout and (no) retries.
        extra_body = body.pop("extra_body", None)
        response = await client.post(
            "/chat/completions",
            body=body,
            cast_to=self._sdk.types.chat.ChatCompletion,
            options=_request_options(extra_body),
        )
        return self._to_completion(response, watch.elapsed_ms, native="response_format" in body)

    def request_params(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body of the call, plus ``extra_body`` (merged into it by the SDK)."""
        messages = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": request.user})
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            self._judge.max_tokens_param: request.max_tokens,
        }
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.seed is not None:
            params["seed"] = request.seed
        if request.response_schema is not None and self._judge.structured_output:
            params["response_format"] = response_format(
                request.response_schema, request.schema_name
            )
        if self._judge.extra_body:
            params["extra_body"] = dict(self._judge.extra_body)
        return params

    def _to_completion(self, response: Any, latency_ms: float, *, native: bool) -> Completion:
        try:
            choice = response.choices[0]
            message = choice.message
            text = message.content or ""
            refusal = getattr(message, "refusal", None)
            reason = getattr(choice, "finish_reason", None)
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise MalformedResponseError(f"no usable choice in the response ({exc})") from None
        if not isinstance(text, str):
            raise MalformedResponseError("message content is not text")
        finish: FinishReason = "refusal" if refusal else _FINISH_REASONS.get(reason, "other")
        return Completion(
            text=text,
            model=getattr(response, "model", None) or self.model,
            latency_ms=latency_ms,
            finish_reason=finish,
            structured=_structured(text) if native and finish == "stop" else None,
            refusal=refusal or None,
            **_usage(getattr(response, "usage", None)),
        )

    def classify_error(self, exc: BaseException) -> ProviderError:
        sdk = self._sdk
        secrets = self._secrets()
        if isinstance(exc, sdk.APIStatusError):
            message = scrub_secrets(f"HTTP {exc.status_code}: {exc.message}", secrets)
            headers = exc.response.headers
            return classify_status(exc.status_code, message, retry_after=parse_retry_after(headers))
        if isinstance(exc, sdk.APITimeoutError):
            return TransientError(f"timed out after {self._judge.timeout_s:g} s")
        if isinstance(exc, sdk.APIConnectionError):
            return TransientError(scrub_secrets(f"connection failed: {exc.message}", secrets))
        if isinstance(exc, sdk.APIResponseValidationError):
            return TransientError(scrub_secrets(f"malformed response body: {exc}", secrets))
        known = classify_common(exc, secrets)
        if known is not None:
            return known
        # Unknown failures are not retried: repeating a bug only burns budget.
        return ProviderError(scrub_secrets(f"unexpected {type(exc).__name__}: {exc}", secrets))

    def _secrets(self) -> list[str]:
        key = getattr(self._client, "api_key", None)
        return [key] if isinstance(key, str) and key != PLACEHOLDER_KEY else []

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def _request_options(extra_body: Mapping[str, Any] | None) -> dict[str, Any]:
    """What ``chat.completions.create`` passes as ``options``: bearer auth and ``extra_body``."""
    options: dict[str, Any] = {"security": {"bearer_auth": True}}
    if extra_body is not None:
        options["extra_json"] = extra_body
    return options


def create(judge_name: str, judge: JudgeConfig) -> OpenAIProvider:
    """Build the OpenAI (or OpenAI-compatible server) judge."""
    return OpenAIProvider(judge_name, judge)


def response_format(schema: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Native structured output; ``strict`` only when the schema meets OpenAI's strict rules."""
    plain = json.loads(json.dumps(schema))  # plain dicts/lists: the schema may be a read-only view
    spec: dict[str, Any] = {"name": safe_schema_name(name), "schema": plain}
    if is_strict_compatible(plain):
        spec["strict"] = True
    return {"type": "json_schema", "json_schema": spec}


def is_strict_compatible(schema: Any) -> bool:
    """True when every object forbids extra properties and requires all of its properties.

    Strict mode rejects any other schema with a 400, so a schema that does not qualify is sent
    non-strict rather than rewritten behind the rubric author's back.
    """
    if isinstance(schema, list):
        return all(is_strict_compatible(part) for part in schema)
    if not isinstance(schema, dict):
        return True
    is_object = schema.get("type") == "object" or "properties" in schema
    if is_object:
        properties = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(properties):
            return False
    return all(is_strict_compatible(value) for value in schema.values())


def _structured(text: str) -> dict[str, Any] | None:
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _usage(usage: Any) -> dict[str, int | None]:
    if usage is None:
        return {}
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return {
        "input_tokens": getattr(usage, "prompt_tokens", None),
        "output_tokens": getattr(usage, "completion_tokens", None),
        "cached_input_tokens": getattr(prompt_details, "cached_tokens", None),
        "reasoning_tokens": getattr(completion_details, "reasoning_tokens", None),
    }
