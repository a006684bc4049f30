"""The Chat Completions wire format, shared by the two adapters that speak it.

``openai`` sends it through the official SDK; ``openai_compatible`` sends the same body through
aiohttp. Both build the body with ``chat_body`` and read the reply with
``completion_from_chat`` (plain JSON in, ``Completion`` out), so they cannot drift apart.

Every parameter comes from the request/config (no model-specific guessing): ``temperature=None``
omits it, ``max_tokens_param`` picks ``max_tokens`` or ``max_completion_tokens``, ``seed`` passes
through and ``extra_body`` is merged into the body. The static system message goes first so
OpenAI's (and vLLM's) automatic prefix caching can reuse it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.providers._common import MalformedResponseError, json_object, safe_schema_name
from jurybox.records import Completion, CompletionRequest, FinishReason, RateLimits

_FINISH_REASONS: dict[str | None, FinishReason] = {
    None: "stop",  # some compatible servers omit it on a normal stop
    "stop": "stop",
    "length": "length",
    "content_filter": "content_filter",
}


def chat_body(judge: JudgeConfig, model: str, request: CompletionRequest) -> dict[str, Any]:
    """The JSON body of one ``POST /chat/completions`` call."""
    body: dict[str, Any] = {
        "model": model,
        "messages": chat_messages(request),
        judge.max_tokens_param: request.max_tokens,
    }
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.seed is not None:
        body["seed"] = request.seed
    if request.response_schema is not None and judge.structured_output:
        body["response_format"] = response_format(request.response_schema, request.schema_name)
    if judge.extra_body:
        body.update(judge.extra_body)
    return body


def chat_messages(request: CompletionRequest) -> list[dict[str, str]]:
    """The static system message first (prefix caching), then the variable user message."""
    messages = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.append({"role": "user", "content": request.user})
    return messages


def completion_from_chat(
    data: Any,
    *,
    default_model: str,
    latency_ms: float | None,
    native: bool,
    rate_limits: RateLimits | None = None,
) -> Completion:
    """Read a ``chat.completion`` JSON object; ``MalformedResponseError`` when it is not one.

    ``native``: the call asked for JSON-schema output, so valid JSON text is the structured
    result (a truncated or refused answer never is).
    """
    choice, message = _first_choice(data)
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise MalformedResponseError("message content is not text")
    refusal = message.get("refusal")
    reason = choice.get("finish_reason")
    finish: FinishReason = "refusal" if refusal else _FINISH_REASONS.get(reason, "other")
    model = data.get("model")
    return Completion(
        text=text,
        model=model if isinstance(model, str) and model else default_model,
        latency_ms=latency_ms,
        finish_reason=finish,
        structured=json_object(text) if native and finish == "stop" else None,
        refusal=str(refusal) if refusal else None,
        rate_limits=rate_limits,
        **_usage(data.get("usage")),
    )


def _first_choice(data: Any) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    if not isinstance(data, dict):
        raise MalformedResponseError(f"the body is not a JSON object ({type(data).__name__})")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponseError("no usable choice in the response")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedResponseError("the first choice has no message")
    return choices[0], message


def response_format(schema: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Native structured output; ``strict`` only when the schema meets OpenAI's strict rules."""
    spec: dict[str, Any] = {"name": safe_schema_name(name), "schema": schema}
    if is_strict_compatible(schema):
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


def error_message(status: int, raw: bytes) -> str:
    """``HTTP <status>: <message>`` from an error body (OpenAI's ``{"error": {"message"}}`` or
    whatever text a proxy sent). Callers scrub it before it goes anywhere."""
    detail = raw[:2000].decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(detail)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if isinstance(error, dict) and error.get("message"):
            detail = str(error["message"])
        elif isinstance(error, str):
            detail = error
    return f"HTTP {status}: {detail or '(empty body)'}"


def _usage(usage: Any) -> dict[str, int | None]:
    if not isinstance(usage, dict):
        return {}
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return {
        "input_tokens": _count(usage.get("prompt_tokens")),
        "output_tokens": _count(usage.get("completion_tokens")),
        "cached_input_tokens": _count(_get(prompt_details, "cached_tokens")),
        "reasoning_tokens": _count(_get(completion_details, "reasoning_tokens")),
    }


def _get(details: Any, key: str) -> Any:
    return details.get(key) if isinstance(details, dict) else None


def _count(value: Any) -> int | None:
    # bool is an int subclass; a server that sends true/false here sent no count
    return value if isinstance(value, int) and not isinstance(value, bool) else None
