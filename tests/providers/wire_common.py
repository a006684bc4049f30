"""Helpers shared by the vendor wire tests (test_anthropic, test_google): one verdict schema,
running calls on one event loop, and reading the JSON body a wire server received."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from pytest_httpserver import HTTPServer

from jurybox.providers.base import Provider
from jurybox.records import Completion, CompletionRequest

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["A", "B", "TIE"]},
        "confidence": {"type": ["string", "null"]},
        "reasoning": {"type": "string"},
    },
    "required": ["verdict", "reasoning"],
    "additionalProperties": False,
}


def run_calls(provider: Provider, *requests: CompletionRequest) -> list[Completion | BaseException]:
    """Run calls in order on one event loop; an exception is returned in place of a result."""

    async def go() -> list[Completion | BaseException]:
        results: list[Completion | BaseException] = []
        try:
            for req in requests:
                try:
                    results.append(await provider.complete(req))
                except Exception as exc:
                    results.append(exc)
        finally:
            await provider.aclose()
        return results

    return asyncio.run(go())


def body_of(server: HTTPServer, index: int = -1) -> dict[str, Any]:
    """The JSON body of one request the server received (the last by default)."""
    data: dict[str, Any] = json.loads(server.log[index][0].get_data())
    return data


def wait_for_log(server: HTTPServer, timeout_s: float = 5.0) -> None:
    """Wait until a released, stalled handler has answered, so its log entry cannot land in the
    next test (the server logs a request only once it has answered it)."""
    deadline = time.monotonic() + timeout_s
    while not server.log and time.monotonic() < deadline:
        time.sleep(0.01)
