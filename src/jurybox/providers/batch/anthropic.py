"""Anthropic's Message Batches through the official SDK: ``messages.batches.create`` with the
synchronous adapter's own ``messages.create`` parameters per request,
``retrieve``/``cancel``, and ``results`` (which reads the batch's ``results_url`` JSONL).

Each succeeded message is read by ``completion_from_message``, the synchronous reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from jurybox.errors import BadRequestError, ProviderError, RateLimitError, TransientError
from jurybox.providers._common import scrub_secrets
from jurybox.providers.anthropic import (
    AnthropicProvider,
    build_message_params,
    completion_from_message,
)
from jurybox.providers.batch.base import BatchLimits, BatchOutcome, BatchState
from jurybox.records import CompletionRequest

LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)
# Error types a new attempt may cure; anything else (invalid_request_error ...) will not.
_TRANSIENT = frozenset({"api_error", "overloaded_error", "timeout_error", "gateway_timeout_error"})


class AnthropicBatches:
    """One Anthropic judge's message batches, sharing the synchronous provider's client."""

    vendor = "anthropic"
    limits = LIMITS

    def __init__(self, provider: AnthropicProvider) -> None:
        self.provider = provider

    def line(self, custom_id: str, request: CompletionRequest) -> dict[str, Any]:
        params = build_message_params(self.provider.model, request, self.provider._judge)
        # A batch request has no extra_body: its fields belong in the params themselves.
        params.update(params.pop("extra_body", None) or {})
        return {"custom_id": custom_id, "params": params}

    async def submit(self, lines: list[dict[str, Any]], label: str) -> str:
        batch = await self.provider._connect().messages.batches.create(requests=lines)  # type: ignore[arg-type]
        return str(batch.id)

    async def find(self, label: str) -> str | None:
        # Message batches carry no metadata to find ours by: an intent that never got its id
        # is sent again (the log says so).
        return None

    async def state(self, batch_id: str) -> BatchState:
        batch = await self.provider._connect().messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        return BatchState(
            str(batch.processing_status),
            batch.processing_status == "ended",
            done,
            done + counts.processing,
        )

    async def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        decoder = await self.provider._connect().messages.batches.results(batch_id)
        async for item in decoder:
            yield self._outcome(item, batch_id)

    def _outcome(self, item: Any, batch_id: str) -> BatchOutcome:
        result = item.result
        if result.type == "succeeded":
            try:
                completion = completion_from_message(
                    result.message, model=self.provider.model, latency_ms=0.0
                )
            except Exception as exc:
                return BatchOutcome(item.custom_id, error=self.classify_error(exc))
            # A batch answer has no latency of its own (the provider took hours, or seconds).
            return BatchOutcome(item.custom_id, completion=replace(completion, latency_ms=None))
        if result.type == "errored":
            inner = getattr(getattr(result, "error", None), "error", None)
            kind = str(getattr(inner, "type", "error"))
            message = str(getattr(inner, "message", ""))
            text = scrub_secrets(f"anthropic batch {batch_id}: {kind}: {message}")
            return BatchOutcome(item.custom_id, error=_error_of(kind, text))
        # canceled / expired: never processed, so a new batch may well answer it
        text = f"anthropic batch {batch_id}: request {result.type}"
        return BatchOutcome(item.custom_id, error=TransientError(text))

    async def cancel(self, batch_id: str) -> None:
        await self.provider._connect().messages.batches.cancel(batch_id)

    def classify_error(self, exc: BaseException) -> ProviderError:
        return self.provider.classify_error(exc)

    async def aclose(self) -> None:
        await self.provider.aclose()


def _error_of(kind: str, text: str) -> ProviderError:
    if kind == "rate_limit_error":
        return RateLimitError(text)
    return TransientError(text) if kind in _TRANSIENT else BadRequestError(text)
