"""Gemini batch mode through google-genai: ``client.aio.batches.create`` with inline requests
(each the synchronous adapter's own ``GenerateContentConfig``, tagged with its ``custom_id`` in
``metadata``), ``batches.get`` for state and inline responses, ``batches.cancel``.

Inline batches must stay under 20 MB; larger work is split into several inline batches (the
file route is not used). Each inline response is read by ``completion_from_response``, the
synchronous reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

from jurybox.errors import ProviderError
from jurybox.providers._common import classify_status, scrub_secrets
from jurybox.providers.batch.base import BatchIntent, BatchLimits, BatchOutcome, BatchState
from jurybox.providers.google import GoogleProvider, build_generate_config, completion_from_response
from jurybox.records import CompletionRequest

# Inline requests: under 20 MB for the whole create call (a margin kept for the envelope).
LIMITS = BatchLimits(max_requests=100_000, max_bytes=19 * 1024 * 1024)
_ENDED = frozenset(
    {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}
)
_ID_KEY = "custom_id"
_FIND_LIMIT = 100
_FIND_PAGES = 5  # listed newest first: a batch whose answer was just lost is near the top


class GoogleBatches:
    """One Gemini judge's batches, sharing the synchronous provider's client."""

    vendor = "google"
    limits = LIMITS
    keeps_labels = True

    def __init__(self, provider: GoogleProvider) -> None:
        self.provider = provider

    def line(self, custom_id: str, request: CompletionRequest) -> dict[str, Any]:
        config = build_generate_config(request, self.provider._judge)
        # Per-request options the batch endpoint does not take (they steer the SDK's client).
        config = config.model_copy(
            update={"automatic_function_calling": None, "automatic_continuation": None}
        )
        return {
            "contents": request.user,
            "config": config.model_dump(exclude_none=True, mode="json"),
            "metadata": {_ID_KEY: custom_id},
        }

    async def submit(self, lines: list[dict[str, Any]], label: str) -> str:
        client = self.provider._connect()
        job = await client.aio.batches.create(
            model=self.provider.model,
            src=lines,  # type: ignore[arg-type]
            config={"display_name": label},
        )
        return str(job.name)

    async def find(self, intent: BatchIntent) -> str | None:
        """The batch whose display name is the intent's label, among the newest pages."""
        client = self.provider._connect()
        pager = await client.aio.batches.list(config={"page_size": _FIND_LIMIT})
        for _ in range(_FIND_PAGES):
            for job in pager.page:
                if job.display_name == intent.label:
                    return str(job.name)
            if not pager.config.get("page_token"):
                return None
            await pager.next_page()
        return None

    async def state(self, batch_id: str) -> BatchState:
        job = await self.provider._connect().aio.batches.get(name=batch_id)
        state = str(getattr(job.state, "value", job.state) or "JOB_STATE_UNSPECIFIED")
        return BatchState(state, state in _ENDED)

    async def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        job = await self.provider._connect().aio.batches.get(name=batch_id)
        responses = (job.dest.inlined_responses if job.dest is not None else None) or []
        for index, item in enumerate(responses):
            custom_id = (item.metadata or {}).get(_ID_KEY) or f"r{index:06d}"
            yield self._outcome(custom_id, item, batch_id)

    def _outcome(self, custom_id: str, item: Any, batch_id: str) -> BatchOutcome:
        if item.error is not None or item.response is None:
            code = (item.error.code if item.error is not None else None) or 500
            message = item.error.message if item.error is not None else "no response"
            text = scrub_secrets(f"gemini batch {batch_id}: HTTP {code}: {message}")
            return BatchOutcome(custom_id, error=classify_status(code, text))
        try:
            completion = completion_from_response(
                item.response, model=self.provider.model, latency_ms=0.0, structured=True
            )
        except Exception as exc:
            return BatchOutcome(custom_id, error=self.classify_error(exc))
        return BatchOutcome(custom_id, completion=replace(completion, latency_ms=None))

    async def cancel(self, batch_id: str) -> None:
        await self.provider._connect().aio.batches.cancel(name=batch_id)

    def classify_error(self, exc: BaseException) -> ProviderError:
        return self.provider.classify_error(exc)

    async def aclose(self) -> None:
        await self.provider.aclose()
