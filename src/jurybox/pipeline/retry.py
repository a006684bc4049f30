"""The one retry policy: exponential backoff with full jitter, Retry-After honoured up to a cap.

Adapters switch their SDK's own retries off, so this is the only place a call is repeated. What
is retryable is the provider's call (``classify_error``): rate limits, 5xx, timeouts. An exhausted
or permanent failure is returned as ``CallFailed`` for the runner to record, never raised past it.

Three budgets: failures (5xx, timeouts, a 429 *without* Retry-After) get ``max_retries`` retries
with backoff. A connection that finds no server (refused, a host name that does not resolve:
``ConnectError.unreachable``) gets ``connect_retries`` (2) quick retries, a fraction of a second
apart: a dead endpoint is told in about a second, not after half a minute of backoff per call
(the runner then stops that judge). A 429 that says how long to wait (Retry-After) is the
server pacing us, not a failure: those waits are counted separately, up to
``MAX_RATE_LIMIT_WAITS`` (20) per call, so a long but honest rate limit ends in ok records
instead of ``provider_error``. ``max_retries: 0`` still means "never retry a call" (a resume
after a kill makes again the calls that were in flight at the kill: README).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from jurybox.config import PipelineConfig
from jurybox.errors import ConnectError, ProviderError, RateLimitError, TransientError

Sleep = Callable[[float], Awaitable[None]]
Classify = Callable[[BaseException], ProviderError]
T = TypeVar("T")

MAX_RATE_LIMIT_WAITS = 20
CONNECT_RETRIES = 2  # retries of a call that found no server, before the judge is stopped


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait. ``cap_s`` bounds every single wait, Retry-After included."""

    max_retries: int = 5
    base_s: float = 1.0
    cap_s: float = 60.0
    max_rate_limit_waits: int = MAX_RATE_LIMIT_WAITS
    connect_retries: int = CONNECT_RETRIES
    connect_base_s: float = 0.25

    @classmethod
    def from_config(cls, pipeline: PipelineConfig) -> RetryPolicy:
        retries = pipeline.max_retries
        waits = MAX_RATE_LIMIT_WAITS if retries else 0
        return cls(
            retries,
            pipeline.retry_base_s,
            pipeline.retry_after_cap_s,
            waits,
            connect_retries=min(retries, CONNECT_RETRIES),
        )

    def delay(self, error: ProviderError, retry_index: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        retry_after = getattr(error, "retry_after", None)
        if isinstance(error, RateLimitError) and retry_after is not None:
            # Up to 10% extra so that calls told the same Retry-After do not all return at once.
            wait = max(float(retry_after), 0.0) * (1.0 + 0.1 * rng.random())
            return min(wait, self.cap_s)
        base = self.connect_base_s if is_unreachable(error) else self.base_s
        return rng.uniform(0.0, min(self.cap_s, base * 2.0**retry_index))


@dataclass(frozen=True, slots=True)
class CallFailed:
    """A call that did not produce a completion: the last error and how many attempts it took."""

    error: ProviderError
    attempts: int


def safe_classify(classify: Classify, exc: BaseException) -> ProviderError:
    """Map any exception to the ProviderError tree, without letting a classifier bug crash a run."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, TimeoutError):
        return TransientError(f"timed out: {exc}".rstrip(": "), kind="timeout")
    try:
        return classify(exc)
    except Exception as inner:  # a broken classifier must still leave a record, not a crash
        return ProviderError(f"{type(exc).__name__}: {exc} (classify_error failed: {inner})")


async def call_with_retry(
    attempt: Callable[[], Awaitable[T]],
    classify: Classify,
    policy: RetryPolicy,
    *,
    rng: random.Random,
    sleep: Sleep = asyncio.sleep,
    forgive: Callable[[ProviderError], bool] | None = None,
) -> tuple[T, int] | CallFailed:
    """Run ``attempt`` until it succeeds, fails permanently, or its retry budget is spent.

    ``attempt`` is a provider call (a ``Completion``) or any other request to a vendor (a batch
    look-up: its state, its results, a search for it): every one is retried by this policy.

    A 429 with Retry-After, or one the judge's adaptive limiter ``forgive``s (it is backing
    off and the server admits other calls), spends the rate-limit budget
    (``max_rate_limit_waits``); a connection that found no server spends ``connect_retries``;
    any other retryable error spends ``max_retries``. Returns ``(completion, attempts)`` or
    ``CallFailed``; ``attempts`` counts every call made. Cancellation propagates untouched.
    """
    attempts = failures = waits = unreachable = 0
    while True:
        attempts += 1
        try:
            return await attempt(), attempts
        except Exception as exc:
            error = safe_classify(classify, exc)
        if not error.retryable:
            return CallFailed(error, attempts)
        if is_paced(error) or (forgive is not None and forgive(error)):
            waits += 1
            if waits > policy.max_rate_limit_waits:
                return CallFailed(error, attempts)
        elif is_unreachable(error):
            unreachable += 1
            if unreachable > policy.connect_retries:
                return CallFailed(error, attempts)
        else:
            failures += 1
            if failures > policy.max_retries:
                return CallFailed(error, attempts)
        index = unreachable if is_unreachable(error) else failures
        await sleep(policy.delay(error, index - 1 if index else 0, rng))


def is_unreachable(error: ProviderError) -> bool:
    """No server there (a refused connection, an unknown host): ``ConnectError.unreachable``."""
    return isinstance(error, ConnectError) and error.unreachable


def is_paced(error: ProviderError) -> bool:
    """A 429 that says when to come back: a wait, not a failure."""
    return isinstance(error, RateLimitError) and getattr(error, "retry_after", None) is not None
