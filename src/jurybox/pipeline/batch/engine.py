"""One judge's work through its vendor's batch API: submit, wait, collect, resubmit.

The order of events is what makes a kill -9 harmless (see ``log.py``): a batch's intent is in
the log before anything is sent, its id before the process waits, and its ``collected`` mark
only after every result is in the judgments file. A resumed run adopts the log's open batches
(polls them instead of submitting their requests again) and skips units whose records are
already in the file, so nothing is paid for twice and nothing is written twice.

Every look-up at the vendor (a batch's state, its results, the search for a batch whose
creation was never answered) is retried by the run's one retry policy (``pipeline.retry``:
classified errors, backoff, Retry-After). A batch is given up for lost only when the vendor
answers that it does not hold it; a look-up that cannot tell (a 500, a timeout, the budget
spent) leaves the batch open, to be looked up again on the next poll or resume: its requests
are never sent again in the dark.

Results go to the host (the runner), which reads them through the same mode parser and writes
them with the same statuses as synchronous completions.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from jurybox.errors import AuthError, BadRequestError, ProviderError, TransientError
from jurybox.pipeline.batch.log import BatchEntry, BatchLog
from jurybox.pipeline.batch.plan import (
    Call,
    PlannedBatch,
    no_prefix,
    plan_batches,
    random_prefix,
)
from jurybox.pipeline.retry import CallFailed, RetryPolicy, Sleep, call_with_retry, safe_classify
from jurybox.providers.batch.base import BatchBackend, BatchIntent, BatchOutcome, BatchState
from jurybox.records import Completion, CompletionRequest, WorkUnit

T = TypeVar("T")


@dataclass(frozen=True)
class BatchSettings:
    """Polling (``pipeline.batch_poll_*``), the run's retry policy and the fallback."""

    poll_s: float
    poll_max_s: float
    retry: RetryPolicy
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
    sent: bool = True  # False: its batch never reached the vendor (no attempt was spent)


_NEVER_MADE = "never submitted (sent again)"


def _missing(entry: BatchEntry, state: BatchState, *, mistaken: bool) -> TransientError:
    """Why a request of an ended batch has no result: ``mistaken`` when every result carried
    another batch's ids (one found by its size and time that was not this run's)."""
    if mistaken:
        return TransientError(f"batch {entry.batch_id} holds no result of this run's: sent again")
    return TransientError(f"batch {entry.batch_id} ended {state.status} without a result")


class JudgeBatches:
    """Runs one judge's calls as batches until each has a record."""

    def __init__(
        self,
        judge: str,
        backend: BatchBackend,
        log: BatchLog,
        host: BatchHost,
        settings: BatchSettings,
        *,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.judge, self.backend, self.log, self.host = judge, backend, log, host
        self.settings, self.sleep = settings, sleep
        self.rng = rng or random.Random(0)  # backoff jitter only
        self.submitted = self.ended = 0

    async def run(self, calls: Sequence[Call]) -> None:
        """Follow the log's open batches for these calls, submit the rest, redo what failed."""
        pending = {unit.key: unit for call in calls for unit in call}
        logged = self.log.open_entries(self.judge)
        inflight = [entry for entry in logged if any(key in pending for key in entry.keys)]
        self.submitted += sum(entry.batch_id is not None for entry in inflight)
        covered = {key for entry in inflight for key in entry.keys}
        fresh = [call for call in calls if not all(unit.key in covered for unit in call)]
        fresh = [call for call in fresh if not self.host.from_cache(call)]
        inflight += await self._submit(fresh, attempts=1)
        while inflight:
            results = await asyncio.gather(*(self._follow(entry, pending) for entry in inflight))
            failures = [failure for batch in results for failure in batch]
            inflight = await self._redo(failures)

    async def _ask(self, request: Callable[[], Awaitable[T]]) -> T | ProviderError:
        """A request to the vendor that changes nothing there (a state, results, a search),
        retried by the run's retry policy; the last error once its budget is spent."""
        result = await call_with_retry(
            request,
            self.backend.classify_error,
            self.settings.retry,
            rng=self.rng,
            sleep=self.sleep,
        )
        return result.error if isinstance(result, CallFailed) else result[0]

    async def _find(self, entry: BatchEntry) -> str | ProviderError | None:
        """The vendor's id for a batch whose creation was asked for but never answered: None
        when the vendor answers that it holds no such batch, an error when it cannot tell."""
        if entry.intent_at is None:  # a log written before intents were timed
            return None
        taken = frozenset(e.batch_id for e in self.log.entries.values() if e.batch_id)
        since = datetime.fromisoformat(entry.intent_at)
        intent = BatchIntent(entry.label, len(entry.requests), since, taken)
        return await self._ask(lambda: self.backend.find(intent))

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
        """Create the batch; after a failed create, ask the vendor whether it made it anyway.
        None when it surely did not and will not (its calls then have records)."""
        label = self.log.next_label(self.judge)
        entry = BatchEntry(label, self.judge, self.backend.vendor, batch.requests, attempts)
        self.log.submitting(entry)  # fsync'd before anything is sent: a kill is recoverable
        policy = self.settings.retry
        for retry in range(policy.max_retries + 1):
            try:
                return self._opened(label, await self.backend.submit(batch.lines, label))
            except Exception as exc:
                error = safe_classify(self.backend.classify_error, exc)
            if isinstance(error, AuthError | BadRequestError):
                break  # the vendor refused the request: it made no batch
            found = await self._find(self.log.entries[label])
            if isinstance(found, str):  # created after all; only its answer was lost
                return self._opened(label, found)
            if found is not None:  # it may exist: looked up again, never sent again blindly
                return self.log.entries[label]
            if not error.retryable or retry == policy.max_retries:
                break
            await self.sleep(policy.delay(error, retry, self.rng))
        self.log.abandoned(label, str(error))
        for call in batch.calls.values():
            self.host.record(call, error, "", retry + 1)
        return None

    def _opened(self, label: str, batch_id: str) -> BatchEntry:
        self.log.submitted(label, batch_id)
        self.submitted += 1
        self.host.batch_event(self.submitted, self.ended, waiting=True)
        return self.log.entries[label]

    async def _follow(self, entry: BatchEntry, pending: dict[str, WorkUnit]) -> list[_Failure]:
        """Wait for the batch to end, then write its results; the failures to redo."""
        if entry.batch_id is None:
            known = await self._identify(entry, pending)
            if not isinstance(known, BatchEntry):
                return known
            entry = known
        assert entry.batch_id is not None
        state = await self._wait(entry.batch_id)
        if isinstance(state, ProviderError):
            return self._fail_open(entry, pending, state)
        read = await self._ask(lambda: self._read(entry, pending))
        if isinstance(read, ProviderError):
            return self._fail_open(entry, pending, read)
        failures, seen, foreign = read
        missing = _missing(entry, state, mistaken=foreign > 0 and not seen)
        for custom_id in entry.requests:
            call = self._call_of(entry, custom_id, pending) if custom_id not in seen else []
            if call:
                failures.append(_Failure(call, entry.attempt, missing))
        self.log.collected(entry.label, state.status)
        self.ended += 1
        self.host.batch_event(self.submitted, self.ended, waiting=False)
        return failures

    async def _identify(
        self, entry: BatchEntry, pending: dict[str, WorkUnit]
    ) -> BatchEntry | list[_Failure]:
        """A batch whose creation was never answered (a kill, a lost answer): adopted when the
        vendor shows it; its requests sent again only when the vendor says it holds no such
        batch; left open (its units failed for now) when the look-up cannot tell."""
        found = await self._find(entry)
        if isinstance(found, str):
            return self._opened(entry.label, found)
        if isinstance(found, ProviderError):
            return self._fail_open(entry, pending, found)
        self.log.abandoned(entry.label, _NEVER_MADE)
        calls = (self._call_of(entry, custom_id, pending) for custom_id in entry.requests)
        error = TransientError(f"batch {entry.label} was never made")
        return [_Failure(call, entry.attempt - 1, error, sent=False) for call in calls if call]

    async def _read(
        self, entry: BatchEntry, pending: dict[str, WorkUnit]
    ) -> tuple[list[_Failure], set[str], int]:
        """Write an ended batch's answers; its failures, the ids seen, and how many results
        carried ids the batch never sent. Read again whole after an error: what is written
        already is skipped."""
        assert entry.batch_id is not None
        failures: list[_Failure] = []
        seen: set[str] = set()
        foreign = 0  # results whose ids this batch never sent
        outcomes: AsyncIterator[BatchOutcome] = self.backend.results(entry.batch_id)
        async for outcome in outcomes:
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
        return failures, seen, foreign

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
        """Poll with doubling waits up to ``poll_max_s``; each poll is retried by the run's
        policy (429, 5xx, timeouts waited out, Retry-After honoured)."""
        delay = self.settings.poll_s
        while True:
            state = await self._ask(lambda: self.backend.state(batch_id))
            if isinstance(state, ProviderError) or state.ended:
                return state
            await self.sleep(delay)
            delay = min(delay * 2, self.settings.poll_max_s)

    async def _redo(self, failures: list[_Failure]) -> list[BatchEntry]:
        """Resubmit what a new attempt may cure, within the retry budget, and what never
        reached the vendor; record the rest."""
        again: list[_Failure] = []
        direct: list[_Failure] = []
        for failure in failures:
            if not failure.sent:
                again.append(failure)  # a batch, whatever the fallback: it was never sent
            elif failure.error.retryable and failure.attempts <= self.settings.retry.max_retries:
                (direct if self.settings.fallback == "sync" else again).append(failure)
            else:
                self.host.record(failure.call, failure.error, "", failure.attempts)
        await asyncio.gather(*(self.host.call_sync(failure.call) for failure in direct))
        if not again:
            return []
        attempts = max(failure.attempts for failure in again) + 1
        return await self._submit([failure.call for failure in again], attempts=attempts)
