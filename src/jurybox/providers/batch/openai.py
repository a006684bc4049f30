"""OpenAI's Batch API through the official SDK: a JSONL file of ``/v1/chat/completions`` bodies
(``files.create(purpose="batch")``), ``batches.create/retrieve/cancel/list`` and the output and
error files (``files.content``).

Each line's body is the synchronous adapter's own (``OpenAIProvider.request_params``) and each
answer is read by the same ``completion_from_chat``, so a batch answer and a synchronous one
cannot differ in what they send or how they are read.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

from jurybox.errors import BadRequestError, ProviderError, TransientError
from jurybox.providers._chat_format import completion_from_chat, error_message
from jurybox.providers._common import MalformedResponseError, classify_status, scrub_secrets
from jurybox.providers.batch.base import BatchIntent, BatchLimits, BatchOutcome, BatchState
from jurybox.providers.openai import OpenAIProvider
from jurybox.records import CompletionRequest

LIMITS = BatchLimits(max_requests=50_000, max_bytes=200 * 1024 * 1024)
ENDPOINT = "/v1/chat/completions"
_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
# Per-request error codes a new batch may cure (the request itself was never judged bad).
_RETRYABLE_CODES = frozenset({"batch_expired", "batch_cancelled", "server_error", "rate_limit"})
_LABEL_KEY = "jurybox_label"
_FIND_PAGES = 5  # batches are listed newest first: ours, if it exists, is near the top


class OpenAIBatches:
    """One OpenAI judge's batches, sharing the synchronous provider's client and key."""

    vendor = "openai"
    limits = LIMITS
    keeps_labels = True

    def __init__(self, provider: OpenAIProvider) -> None:
        self.provider = provider

    def line(self, custom_id: str, request: CompletionRequest) -> dict[str, Any]:
        body = self.provider.request_params(request)
        return {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    async def submit(self, lines: list[dict[str, Any]], label: str) -> str:
        client = self.provider._connect()
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        uploaded = await client.files.create(file=(f"{label}.jsonl", data), purpose="batch")
        batch = await client.batches.create(
            input_file_id=uploaded.id,
            endpoint=ENDPOINT,
            completion_window="24h",
            metadata={_LABEL_KEY: label},
        )
        return str(batch.id)

    async def find(self, intent: BatchIntent) -> str | None:
        client = self.provider._connect()
        page = await client.batches.list(limit=100)
        for _ in range(_FIND_PAGES):
            for batch in page.data:
                if (batch.metadata or {}).get(_LABEL_KEY) == intent.label:
                    return str(batch.id)
            if not page.has_next_page():
                return None
            page = await page.get_next_page()
        return None

    async def state(self, batch_id: str) -> BatchState:
        batch = await self.provider._connect().batches.retrieve(batch_id)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts is not None else 0
        total = counts.total if counts is not None else 0
        return BatchState(str(batch.status), batch.status in _ENDED, done, total)

    async def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        client = self.provider._connect()
        batch = await client.batches.retrieve(batch_id)
        if batch.status == "failed":  # rejected as a whole (validation): no file, one reason
            reason = "; ".join(f"{e.code}: {e.message}" for e in (batch.errors.data or ()))
            error = BadRequestError(f"openai batch {batch_id} failed: {reason or 'no reason'}")
            for custom_id in await self._input_ids(batch.input_file_id):
                yield BatchOutcome(custom_id, error=error)
            return
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                content = await client.files.content(file_id)
                for line in _jsonl(content.text):
                    yield self._outcome(line, batch_id)

    async def _input_ids(self, file_id: str) -> list[str]:
        content = await self.provider._connect().files.content(file_id)
        return [str(line.get("custom_id")) for line in _jsonl(content.text)]

    def _outcome(self, line: dict[str, Any], batch_id: str) -> BatchOutcome:
        custom_id = str(line.get("custom_id"))
        response = line.get("response") or {}
        status = response.get("status_code")
        if status == 200:
            try:
                completion = completion_from_chat(
                    response.get("body"),
                    default_model=self.provider.model,
                    latency_ms=None,
                    # Valid JSON is kept as the structured answer; the pipeline drops it again
                    # where the request asked for no schema (the synchronous adapter's rule).
                    native=True,
                )
            except MalformedResponseError as exc:
                return BatchOutcome(custom_id, error=TransientError(f"malformed answer: {exc}"))
            return BatchOutcome(custom_id, completion=completion)
        return BatchOutcome(custom_id, error=self._line_error(line, status, batch_id))

    def _line_error(self, line: dict[str, Any], status: Any, batch_id: str) -> ProviderError:
        secrets = self.provider._secrets
        error = line.get("error") or {}
        if isinstance(status, int):
            body = (line.get("response") or {}).get("body")
            raw = json.dumps(body).encode() if body is not None else b""
            return classify_status(status, scrub_secrets(error_message(status, raw), secrets))
        code, message = str(error.get("code") or "error"), str(error.get("message") or "")
        text = scrub_secrets(f"openai batch {batch_id}: {code}: {message}", secrets)
        return TransientError(text) if code in _RETRYABLE_CODES else BadRequestError(text)

    async def cancel(self, batch_id: str) -> None:
        await self.provider._connect().batches.cancel(batch_id)

    def classify_error(self, exc: BaseException) -> ProviderError:
        return self.provider.classify_error(exc)

    async def aclose(self) -> None:
        await self.provider.aclose()


def _jsonl(text: str) -> Iterable[dict[str, Any]]:
    for raw in text.splitlines():
        if raw.strip():
            line = json.loads(raw)
            if isinstance(line, dict):
                yield line
