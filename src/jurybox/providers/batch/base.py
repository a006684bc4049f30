"""What the pipeline needs from a vendor's batch API, whatever the vendor.

A ``BatchBackend`` turns requests into the vendor's batch lines, submits them as one batch,
reports its state, streams its results and cancels it. Results come back as ``BatchOutcome``: a
``Completion`` read by the same function the synchronous adapter uses, or a ``ProviderError``
carrying the vendor's reason (``TransientError`` for what a resubmission may cure: expired,
cancelled, overloaded; ``BadRequestError`` for what it will not).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from jurybox.errors import ProviderError
from jurybox.records import Completion, CompletionRequest


@dataclass(frozen=True)
class BatchLimits:
    """The most one batch may hold: requests and bytes of request lines."""

    max_requests: int
    max_bytes: int


@dataclass(frozen=True)
class BatchState:
    """A batch as the vendor reports it now."""

    status: str  # the vendor's own word: in_progress, ended, JOB_STATE_SUCCEEDED, ...
    ended: bool  # nothing more will change: results (if any) can be read
    done: int = 0  # requests finished (succeeded or not), as far as the vendor says
    total: int = 0


@dataclass(frozen=True)
class BatchIntent:
    """A batch the run asked for whose answer (its id) never arrived: what finding it needs."""

    label: str  # the run's own name for it, kept by vendors that keep one
    requests: int  # how many requests it holds
    since: datetime  # when the intent was logged, by this machine's clock
    taken: frozenset[str]  # vendor ids the log already holds: never one of these


@dataclass(frozen=True)
class BatchOutcome:
    """One request's result: exactly one of ``completion`` and ``error`` is set."""

    custom_id: str
    completion: Completion | None = None
    error: ProviderError | None = None


class BatchBackend(Protocol):
    """One judge's batch API (built from its synchronous provider, which it shares a client
    and an error classification with)."""

    vendor: str
    limits: BatchLimits
    # False where the vendor keeps no label with a batch: ``find`` then goes by its size and
    # creation time, and the engine makes its custom ids unique, so the results confirm it.
    keeps_labels: bool

    def line(self, custom_id: str, request: CompletionRequest) -> dict[str, Any]:
        """The request as one entry of the vendor's batch (what ``submit`` sends)."""
        ...

    async def submit(self, lines: list[dict[str, Any]], label: str) -> str:
        """Create the batch (uploading its file first where the vendor wants one); its id."""
        ...

    async def find(self, intent: BatchIntent) -> str | None:
        """The id of the batch ``intent`` asked for, where the vendor can tell (else None)."""
        ...

    async def state(self, batch_id: str) -> BatchState: ...

    def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        """Every result of an ended batch (requests without one are simply absent)."""
        ...

    async def cancel(self, batch_id: str) -> None: ...

    def classify_error(self, exc: BaseException) -> ProviderError: ...

    async def aclose(self) -> None: ...


def line_bytes(line: Mapping[str, Any]) -> int:
    """The size a line takes in the vendor's upload (its compact JSON plus a newline)."""
    return len(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode()) + 1
