"""One judge's work through its vendor's batch API: submit, wait, collect, resubmit.

The order of events is what makes a kill -9 harmless (see ``log.py``): a batch's intent is in
the log before its upload, its id before the process waits, and its ``collected`` mark only
after every result is in the judgments file. A resumed run adopts the log's open batches (polls
them instead of submitting their requests again) and skips units whose records are already in
the file, so nothing is paid for twice and nothing is written twice.

Results go to the host (the runner), which reads them through the same mode parser and writes
them with the same statuses as synchronous completions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jurybox.errors import ProviderError, RateLimitError, TransientError
from jurybox.pipeline.batch.log import BatchEntry, BatchLog
from jurybox.pipeline.batch.plan import (
    Call,
    PlannedBatch,
    no_prefix,
    plan_batches,
    random_prefix,
)
from jurybox.providers.batch.base import BatchBackend, BatchIntent, BatchState
from jurybox.records import Completion, CompletionRequest, WorkUnit

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class BatchSettings:
    """Polling and retry settings (``pipeline.batch_*``, ``max_retries``, ``retry_base_s``)."""

    poll_s: float
    poll_max_s: float
    max_retries: int
    retry_base_s: float
    fallback: str  # "batch": failed requests go in a new batch; "sync": they are called directly


class BatchHost(Protocol):
    """What the runner does for the engine: build, cache-check and record calls."""

    def request(self, call: Call) -> CompletionRequest: ...

    def from_cache(self, call: Call) -> bool:
        """Write the call's records from the response cache; False when it is not cached."""
        ...

    def record(
        self, call: Call, outcome: Completion | ProviderError, batch_id: str, attempts: int
    ) -> None: ...

    async def call_sync(self, call: Call) -> None: ...

    def is_done(self, key: str) -> bool: ...

    def batch_event(self, submitted: int, ended: int, waiting: bool) -> None: ...


@dataclass
class _Failure:
    call: Call
    attempts: int
    error: ProviderError


def _missing(entry: BatchEntry, state: BatchState, *, mistaken: bool) -> TransientError:
    """Why a request of an ended batch has no result: ``mistaken`` when every result carried
    another batch's ids (one found by its size and time that was not this run's)."""
    if mistaken:
        return TransientError(f"batch {entry.batch_id} holds no result of this run's: sent again")
    return TransientError(f"batch {entry.batch_id} ended {state.status} without a result")


class JudgeBatches:
    """Runs one judge's calls as batches until each has a record."""

    def __init__(  # noqa: PLR0917 - the engine's collaborators, each used throughout
        self,
        judge: str,
        backend: BatchBackend,
        log: BatchLog,
        host: BatchHost,
        settings: BatchSettings,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.judge, self.backend, self.log, self.host = judge, backend, log, host
        self.settings, self.sleep = settings, sleep
        self.submitted = self.ended = 0

    async def run(self, calls: Sequence[Call]) -> None:
        """Adopt the log's open batches for these calls, submit the rest, then follow them."""
        pending = {unit.key: unit for call in calls for unit in call}
        adopted = await self._adopt(pending)
        covered = {key for entry in adopted for key in entry.keys}
        fresh = [call for call in calls if not all(unit.key in covered for unit in call)]
        fresh = [call for call in fresh if not self.host.from_cache(call)]
        inflight = adopted + await self._submit(fresh, attempts=1)
        while inflight:
            results = await asyncio.gather(*(self._follow(entry, pending) for entry in inflight))
            failures = [failure for batch in results for failure in batch]
            inflight = await self._redo(failures)

    async def _adopt(self, pending: dict[str, WorkUnit]) -> list[BatchEntry]:
        """Open batches from an earlier session that still hold pending units."""
        adopted = []
        for logged in self.log.open_entries(self.judge):
            if not any(key in pending for key in logged.keys):
                continue
            if logged.batch_id is None:
                # Killed between intent and answer: the vendor may hold it under our label.
                found = await self._find(logged)
                if not isinstance(found, str):
                    self.log.abandoned(logged.label, "never submitted (sent again)")
                    continue
                self.log.submitted(logged.label, found)
            self.submitted += 1
            adopted.append(self.log.entries[logged.label])
        return adopted

    async def _find(self, entry: BatchEntry) -> str | ProviderError | None:
        """The vendor's id for a batch whose creation was asked for but never answered."""
        if entry.intent_at is None:  # a log written before intents were timed
            return None
        taken = frozenset(e.batch_id for e in self.log.entries.values() if e.batch_id)
        since = datetime.fromisoformat(entry.intent_at)
        intent = BatchIntent(entry.label, len(entry.requests), since, taken)
        return await self._safely(self.backend.find(intent))

    async def _safely(self, work: Awaitable[str | None]) -> str | ProviderError | None:
        try:
            return await work
        except Exception as exc:
            return self.backend.classify_error(exc)

    async def _submit(self, calls: Sequence[Call], *, attempts: int) -> list[BatchEntry]:
        if not calls:
            return []
        # Where a lost batch can be found only by its size and time, ids of its own confirm it.
        prefix = no_prefix if self.backend.keeps_labels else random_prefix
        planned = plan_batches(calls, self._line, self.backend.limits, prefix)
        entries = []
        for batch in planned:
            entry = await self._submit_one(batch, attempts)
            if entry is not None:
                entries.append(entry)
        return entries

    def _line(self, custom_id: str, call: Call) -> dict[str, object]:
        return self.backend.line(custom_id, self.host.request(call))

    async def _submit_one(self, batch: PlannedBatch, attempts: int) -> BatchEntry | None:
        label = self.log.next_label(self.judge)
        entry = BatchEntry(label, self.judge, self.backend.vendor, batch.requests, attempts)
        self.log.submitting(entry)  # before the upload: a kill during it is recoverable
        for retry in range(self.settings.max_retries + 1):
            try:
                batch_id = await self.backend.submit(batch.lines, label)
                break
            except Exception as exc:
                error = self.backend.classify_error(exc)
            found = await self._find(self.log.entries[label])
            if isinstance(found, str):  # created after all; only its answer was lost
                batch_id = found
                break
            if not error.retryable or retry == self.settings.max_retries:
                self.log.abandoned(label, str(error))
                for call in batch.calls.values():
                    self.host.record(call, error, "", retry + 1)
                return None
            await self.sleep(self._backoff(error, retry))
        self.log.submitted(label, batch_id)
        self.submitted += 1
        self.host.batch_event(self.submitted, self.ended, waiting=True)
        return self.log.entries[label]

    def _backoff(self, error: ProviderError, retry: int) -> float:
        hint = getattr(error, "retry_after", None)
        if isinstance(error, RateLimitError) and hint is not None:
            return min(float(hint), self.settings.poll_max_s)
        return min(self.settings.retry_base_s * 2.0**retry, self.settings.poll_max_s)

    async def _follow(self, entry: BatchEntry, pending: dict[str, WorkUnit]) -> list[_Failure]:
        """Wait for the batch to end, then write its results; the failures to redo."""
        assert entry.batch_id is not None
        state = await self._wait(entry.batch_id)
        if isinstance(state, ProviderError):
            return self._fail_open(entry, pending, state)
        failures: list[_Failure] = []
        seen: set[str] = set()
        foreign = 0  # results whose ids this batch never sent
        try:
            async for outcome in self.backend.results(entry.batch_id):
                call = self._call_of(entry, outcome.custom_id, pending)
                if outcome.custom_id in entry.requests:
                    seen.add(outcome.custom_id)
                else:
                    foreign += 1
                if not call:
                    continue  # written before a kill, or not ours
                if outcome.completion is not None:
                    self.host.record(call, outcome.completion, entry.batch_id, entry.attempt)
                elif outcome.error is not None:
                    failures.append(_Failure(call, entry.attempt, outcome.error))
        except Exception as exc:
            return failures + self._fail_open(entry, pending, self.backend.classify_error(exc))
        missing = _missing(entry, state, mistaken=foreign > 0 and not seen)
        for custom_id in entry.requests:
            call = self._call_of(entry, custom_id, pending) if custom_id not in seen else []
            if call:
                failures.append(_Failure(call, entry.attempt, missing))
        self.log.collected(entry.label, state.status)
        self.ended += 1
        self.host.batch_event(self.submitted, self.ended, waiting=False)
        return failures

    def _call_of(self, entry: BatchEntry, custom_id: str, pending: dict[str, WorkUnit]) -> Call:
        keys = entry.requests.get(custom_id, ())
        return [pending[key] for key in keys if key in pending and not self.host.is_done(key)]

    def _fail_open(
        self, entry: BatchEntry, pending: dict[str, WorkUnit], error: ProviderError
    ) -> list[_Failure]:
        """The batch could not be read: its units get provider_error records now, and the batch
        stays open in the log, so a resume reads it again rather than paying for it twice."""
        for custom_id in entry.requests:
            call = self._call_of(entry, custom_id, pending)
            if call:
                self.host.record(call, error, entry.batch_id or "", entry.attempt)
        return []

    async def _wait(self, batch_id: str) -> BatchState | ProviderError:
        """Poll with doubling waits up to ``poll_max_s``; errors on the status endpoint that a
        wait may cure (429, 5xx, timeouts) are waited out, within the retry budget in a row."""
        delay, errors_in_row = self.settings.poll_s, 0
        while True:
            try:
                state = await self.backend.state(batch_id)
            except Exception as exc:
                error = self.backend.classify_error(exc)
                errors_in_row += 1
                if not error.retryable or errors_in_row > self.settings.max_retries:
                    return error
                await self.sleep(max(delay, self._backoff(error, errors_in_row - 1)))
                continue
            errors_in_row = 0
            if state.ended:
                return state
            await self.sleep(delay)
            delay = min(delay * 2, self.settings.poll_max_s)

    async def _redo(self, failures: list[_Failure]) -> list[BatchEntry]:
        """Resubmit what a new attempt may cure, within the retry budget; record the rest."""
        again: list[_Failure] = []
        for failure in failures:
            if failure.error.retryable and failure.attempts <= self.settings.max_retries:
                again.append(failure)
            else:
                self.host.record(failure.call, failure.error, "", failure.attempts)
        if not again:
            return []
        if self.settings.fallback == "sync":
            await asyncio.gather(*(self.host.call_sync(f.call) for f in again))
            return []
        attempts = max(failure.attempts for failure in again) + 1
        return await self._submit([failure.call for failure in again], attempts=attempts)
