"""Anthropic Messages API wire bodies, as the real API sends them, for the local test server."""

from __future__ import annotations

from typing import Any

MESSAGES_PATH = "/v1/messages"


def usage(
    *,
    input_tokens: int = 20,
    output_tokens: int = 7,
    cache_read: int | None = None,
    cache_creation: int | None = None,
    thinking: int | None = None,
) -> dict[str, Any]:
    """A ``usage`` object; optional fields are left out when None, as older API versions do."""
    body: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cache_read is not None:
        body["cache_read_input_tokens"] = cache_read
    if cache_creation is not None:
        body["cache_creation_input_tokens"] = cache_creation
    if thinking is not None:
        body["output_tokens_details"] = {"thinking_tokens": thinking}
    return body


def message(
    content: list[dict[str, Any]],
    *,
    stop_reason: str = "end_turn",
    model: str = "claude-test-1",
    usage_body: dict[str, Any] | None = None,
    stop_details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A complete ``message`` response body."""
    body: dict[str, Any] = {
        "id": "msg_01TEST",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage_body if usage_body is not None else usage(),
    }
    if stop_details is not None:
        body["stop_details"] = stop_details
    return body


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": "toolu_01TEST", "name": name, "input": tool_input}


def error(status_type: str, text: str) -> dict[str, Any]:
    """An error body: ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
    return {"type": "error", "error": {"type": status_type, "message": text}}
