"""The Chat Completions wire format, shared by the two adapters that speak it.

``openai`` sends it through the official SDK; ``openai_compatible`` sends the same bytes through a
lean aiohttp client. Both build the body with ``chat_body`` and read the reply with
``completion_from_chat`` (plain JSON in, ``Completion`` out), so they cannot drift apart.

Every parameter comes from the request/config (no model-specific guessing): ``temperature=None``
omits it, ``max_tokens_param`` picks ``max_tokens`` or ``max_completion_tokens``, ``seed`` passes
through and ``extra_body`` is merged into the body. The static system message goes first so
OpenAI's (and vLLM's) automatic prefix caching can reuse it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.providers._common import MalformedResponseError, json_object, safe_schema_name
from jurybox.records import (
    Completion,
    CompletionRequest,
    FinishReason,
    RateLimits,
    json_encoder,
    schema_json,
)

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


# ``json.dumps``'s own defaults (ASCII-escaped, ", " and ": "): ``chat_payload`` must give the
# very bytes ``json.dumps(chat_body(...))`` gives, so a server sees no difference.
_ENCODE = json_encoder()
_PAYLOAD_LIMIT = 256  # distinct heads (model, system prompt) and tails kept: a run has a few
_HEADS: dict[tuple[str, str], str] = {}
_TAILS: dict[tuple[Any, ...], str] = {}


def chat_payload(judge: JudgeConfig, model: str, request: CompletionRequest) -> tuple[bytes, bool]:
    """``json.dumps(chat_body(judge, model, request)).encode()``, and whether the body asks for
    native structured output (``response_format``).

    Of a body only the user message changes from call to call: what comes before it (the
    model, the system prompt) and after it (the parameters, the schema's ``response_format``)
    is encoded once per distinct value and kept, so a call encodes just its user message.
    ``extra_body`` may replace any key where it stands: such a body takes the general path.
    """
    if judge.extra_body:
        body = chat_body(judge, model, request)
        return json.dumps(body).encode(), "response_format" in body
    head = _HEADS.get((model, request.system))
    if head is None:
        head = _keep(_HEADS, (model, request.system), _payload_head(model, request.system))
    native = request.response_schema is not None and judge.structured_output
    schema = schema_json(request.response_schema, _ENCODE) if native else None
    # Types are part of the key: 0 == 0.0 == False, but they encode as 0, 0.0 and false.
    tail_key = (
        judge.max_tokens_param,
        *_typed(request.max_tokens),
        *_typed(request.temperature),
        *_typed(request.seed),
        schema,
        request.schema_name if native else None,
    )
    tail = _TAILS.get(tail_key)
    if tail is None:
        tail = _keep(_TAILS, tail_key, _payload_tail(judge, request, native))
    return (head + request.user_json_ascii() + tail).encode("ascii"), native


def _typed(value: Any) -> tuple[type, Any]:
    return type(value), value


def _keep(store: dict[Any, str], key: Any, value: str) -> str:
    if len(store) >= _PAYLOAD_LIMIT:
        store.clear()
    store[key] = value
    return value


def _payload_head(model: str, system: str) -> str:
    """The body's JSON up to the user message's text (as ``chat_body`` orders it)."""
    messages = ""
    if system:
        messages = f'{{"role": "system", "content": {_ENCODE(system)}}}, '
    return f'{{"model": {_ENCODE(model)}, "messages": [{messages}{{"role": "user", "content": '


def _payload_tail(judge: JudgeConfig, request: CompletionRequest, native: bool) -> str:
    """The body's JSON after the user message's text (as ``chat_body`` orders it)."""
    parts = [f"}}], {_ENCODE(judge.max_tokens_param)}: {_ENCODE(request.max_tokens)}"]
    if request.temperature is not None:
        parts.append(f', "temperature": {_ENCODE(request.temperature)}')
    if request.seed is not None:
        parts.append(f', "seed": {_ENCODE(request.seed)}')
    if native:
        assert request.response_schema is not None  # native says so
        spec = response_format(request.response_schema, request.schema_name)
        parts.append(f', "response_format": {_ENCODE(spec)}')
    return "".join(parts) + "}"


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
    """Native structured output; ``strict`` only when the schema meets OpenAI's strict rules.

    The ``schema`` inside is shared by every call with the same schema: read it, never change it.
    """
    text = json.dumps(schema)  # -> plain dicts/lists: the schema may be a read-only view
    spec = _schema_spec(text, name)
    return {"type": "json_schema", "json_schema": dict(spec)}


@functools.lru_cache(maxsize=64)
def _schema_spec(schema_json: str, name: str) -> dict[str, Any]:
    # A run sends the same few schemas thousands of times; reading one back and walking it
    # costs more than its JSON.
    schema = json.loads(schema_json)
    spec: dict[str, Any] = {"name": safe_schema_name(name), "schema": schema}
    if is_strict_compatible(schema):
        spec["strict"] = True
    return spec


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
