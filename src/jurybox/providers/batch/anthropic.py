"""Anthropic's Message Batches through the official SDK: ``messages.batches.create`` with the
synchronous adapter's own ``messages.create`` parameters per request,
``retrieve``/``cancel``, and ``results`` (which reads the batch's ``results_url`` JSONL).

Each succeeded message is read by ``completion_from_message``, the synchronous reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

from jurybox.errors import BadRequestError, ProviderError, RateLimitError, TransientError
from jurybox.providers._common import scrub_secrets
from jurybox.providers.anthropic import (
    AnthropicProvider,
    build_message_params,
    completion_from_message,
)
from jurybox.providers.batch.base import BatchIntent, BatchLimits, BatchOutcome, BatchState
from jurybox.records import CompletionRequest

LIMITS = BatchLimits(max_requests=100_000, max_bytes=256 * 1024 * 1024)
CLOCK_SKEW = timedelta(minutes=10)  # how far the vendor's clock may be behind this machine's
_FIND_PAGE_SIZE = 100
_FIND_PAGES = 5  # listed newest first: a batch whose answer was just lost is near the top
# Error types a new attempt may cure; anything else (invalid_request_error ...) will not.
_TRANSIENT = frozenset({"api_error", "overloaded_error", "timeout_error", "gateway_timeout_error"})


class AnthropicBatches:
    """One Anthropic judge's message batches, sharing the synchronous provider's client."""

    vendor = "anthropic"
    limits = LIMITS
    keeps_labels = False

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

    async def find(self, intent: BatchIntent) -> str | None:
        """Message batches keep no label: ours is the one batch created since the intent (less
        the clocks' possible skew) with as many requests, that the log does not already hold.
        Two such batches (another run on the same key) leave it unknown: it is sent again. The
        engine's per-batch custom ids confirm the choice when the results are read."""
        earliest = intent.since - CLOCK_SKEW
        matches: list[str] = []
        page = await self.provider._connect().messages.batches.list(limit=_FIND_PAGE_SIZE)
        for _ in range(_FIND_PAGES):
            for batch in page.data:  # newest first
                if batch.created_at < earliest:
                    return _only(matches)
                if batch.id not in intent.taken and _total(batch) == intent.requests:
                    matches.append(batch.id)
            if not page.has_next_page():
                break
            page = await page.get_next_page()
        return _only(matches)

    async def state(self, batch_id: str) -> BatchState:
        batch = await self.provider._connect().messages.batches.retrieve(batch_id)
        processing = batch.request_counts.processing
        return BatchState(
            str(batch.processing_status),
            batch.processing_status == "ended",
            _total(batch) - processing,
            _total(batch),
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


def _total(batch: Any) -> int:
    counts = batch.request_counts
    return int(
        counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
    )


def _only(matches: list[str]) -> str | None:
    return matches[0] if len(matches) == 1 else None
