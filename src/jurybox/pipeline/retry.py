"""The one retry policy: exponential backoff with full jitter, Retry-After honoured up to a cap.

Adapters switch their SDK's own retries off, so this is the only place a call is repeated. What
is retryable is the provider's call (``classify_error``): rate limits, 5xx, timeouts. An exhausted
or permanent failure is returned as ``CallFailed`` for the runner to record, never raised past it.

Two budgets: failures (5xx, timeouts, a 429 *without* Retry-After) get ``max_retries`` retries
with backoff. A 429 that says how long to wait (Retry-After) is the server pacing us, not a
failure: those waits are counted separately, up to ``MAX_RATE_LIMIT_WAITS`` (20) per call, so a
long but honest rate limit ends in ok records instead of ``provider_error``. ``max_retries: 0``
still means "never retry a call" (a resume after a kill makes again the calls that were in
flight at the kill: README).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from jurybox.config import PipelineConfig
from jurybox.errors import ProviderError, RateLimitError, TransientError

Sleep = Callable[[float], Awaitable[None]]
Classify = Callable[[BaseException], ProviderError]
T = TypeVar("T")

MAX_RATE_LIMIT_WAITS = 20


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait. ``cap_s`` bounds every single wait, Retry-After included."""

    max_retries: int = 5
    base_s: float = 1.0
    cap_s: float = 60.0
    max_rate_limit_waits: int = MAX_RATE_LIMIT_WAITS

    @classmethod
    def from_config(cls, pipeline: PipelineConfig) -> RetryPolicy:
        waits = MAX_RATE_LIMIT_WAITS if pipeline.max_retries else 0
        return cls(pipeline.max_retries, pipeline.retry_base_s, pipeline.retry_after_cap_s, waits)

    def delay(self, error: ProviderError, retry_index: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        retry_after = getattr(error, "retry_after", None)
        if isinstance(error, RateLimitError) and retry_after is not None:
            # Up to 10% extra so that calls told the same Retry-After do not all return at once.
            wait = max(float(retry_after), 0.0) * (1.0 + 0.1 * rng.random())
            return min(wait, self.cap_s)
        return rng.uniform(0.0, min(self.cap_s, self.base_s * 2.0**retry_index))


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
        return TransientError(f"timed out: {exc}".rstrip(": "))
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
    (``max_rate_limit_waits``); any other retryable error spends ``max_retries``. Returns
    ``(completion, attempts)`` or ``CallFailed``; ``attempts`` counts every call made.
    Cancellation propagates untouched.
    """
    attempts = failures = waits = 0
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
        else:
            failures += 1
            if failures > policy.max_retries:
                return CallFailed(error, attempts)
        await sleep(policy.delay(error, failures - 1 if failures else 0, rng))


def is_paced(error: ProviderError) -> bool:
    """A 429 that says when to come back: a wait, not a failure."""
    return isinstance(error, RateLimitError) and getattr(error, "retry_after", None) is not None
