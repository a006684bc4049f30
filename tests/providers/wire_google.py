"""Gemini API (generativelanguage v1beta) wire bodies, camelCase as the real API sends them."""

from __future__ import annotations

from typing import Any


def generate_path(model: str, api_version: str = "v1beta") -> str:
    return f"/{api_version}/models/{model}:generateContent"


def usage(
    *,
    prompt: int = 120,
    candidates: int | None = 8,
    cached: int | None = None,
    thoughts: int | None = None,
) -> dict[str, Any]:
    """``usageMetadata``; optional counts are left out when None, as the API does."""
    body: dict[str, Any] = {"promptTokenCount": prompt}
    total = prompt
    for key, value in (
        ("candidatesTokenCount", candidates),
        ("cachedContentTokenCount", cached),
        ("thoughtsTokenCount", thoughts),
    ):
        if value is not None:
            body[key] = value
            total += value if key != "cachedContentTokenCount" else 0
    body["totalTokenCount"] = total
    return body


def text_part(text: str, *, thought: bool = False) -> dict[str, Any]:
    return {"text": text, "thought": True} if thought else {"text": text}


def response(
    parts: list[dict[str, Any]] | None,
    *,
    finish_reason: str | None = "STOP",
    usage_body: dict[str, Any] | None = None,
    model_version: str = "gemini-test-001",
    extra_candidate: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``GenerateContentResponse`` with one candidate."""
    candidate: dict[str, Any] = {"index": 0}
    if parts is not None:
        candidate["content"] = {"role": "model", "parts": parts}
    if finish_reason is not None:
        candidate["finishReason"] = finish_reason
    candidate.update(extra_candidate or {})
    return {
        "candidates": [candidate],
        "usageMetadata": usage_body if usage_body is not None else usage(),
        "modelVersion": model_version,
        "responseId": "resp-TEST",
    }


def blocked_prompt(reason: str = "PROHIBITED_CONTENT") -> dict[str, Any]:
    """A prompt the API refused outright: no candidates, only ``promptFeedback``."""
    return {
        "promptFeedback": {"blockReason": reason},
        "usageMetadata": usage(candidates=None),
        "modelVersion": "gemini-test-001",
    }


def retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


def error_info(reason: str) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
    }


def error(
    code: int, status: str, text: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A ``google.rpc.Status`` error body."""
    body: dict[str, Any] = {"code": code, "message": text, "status": status}
    if details:
        body["details"] = details
    return {"error": body}
