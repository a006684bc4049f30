from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

from jurybox.config import PipelineConfig
from jurybox.errors import BadRequestError, ProviderError, RateLimitError, TransientError
from jurybox.pipeline.retry import (
    MAX_RATE_LIMIT_WAITS,
    CallFailed,
    RetryPolicy,
    call_with_retry,
    safe_classify,
)
from jurybox.records import Completion

OK = Completion(text="{}", model="m")


class Script:
    """An attempt function that raises the scripted errors in turn, then succeeds."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> Completion:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return OK


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def classify(exc: BaseException) -> ProviderError:
    return TransientError(str(exc))


def run(
    script: Script, policy: RetryPolicy, sleeps: Sleeps, classifier: Callable[..., ProviderError]
) -> tuple[Completion, int] | CallFailed:
    return asyncio.run(
        call_with_retry(script, classifier, policy, rng=random.Random(0), sleep=sleeps)
    )


def test_rate_limit_retry_after_is_honoured_then_success() -> None:
    script, sleeps = Script(RateLimitError("slow down", retry_after=0.05)), Sleeps()
    result = run(script, RetryPolicy(max_retries=5, base_s=1.0, cap_s=1.0), sleeps, classify)
    assert result == (OK, 2)
    assert len(sleeps.waits) == 1
    assert 0.05 <= sleeps.waits[0] <= 0.055  # the hint, plus at most 10% spread


def test_retry_after_above_the_cap_is_capped() -> None:
    script, sleeps = Script(RateLimitError("slow", retry_after=3600.0)), Sleeps()
    result = run(script, RetryPolicy(max_retries=2, base_s=0.1, cap_s=2.5), sleeps, classify)
    assert result == (OK, 2)
    assert sleeps.waits == [2.5]


def test_permanent_errors_are_not_retried() -> None:
    script, sleeps = Script(BadRequestError("unknown model", status_code=404)), Sleeps()
    result = run(script, RetryPolicy(max_retries=5), sleeps, classify)
    assert isinstance(result, CallFailed)
    assert result.attempts == 1 and script.calls == 1 and sleeps.waits == []
    assert isinstance(result.error, BadRequestError)


def test_exhausted_retries_fail_with_full_jitter_backoff() -> None:
    script, sleeps = Script(*[TransientError("503")] * 10), Sleeps()
    result = run(script, RetryPolicy(max_retries=3, base_s=0.5, cap_s=60.0), sleeps, classify)
    assert isinstance(result, CallFailed)
    assert result.attempts == 4 and script.calls == 4
    assert len(sleeps.waits) == 3
    for index, wait in enumerate(sleeps.waits):
        assert 0.0 <= wait <= 0.5 * 2**index


def test_backoff_is_bounded_by_the_cap() -> None:
    policy = RetryPolicy(max_retries=5, base_s=10.0, cap_s=3.0)
    rng = random.Random(1)
    waits = [policy.delay(TransientError("x"), 4, rng) for _ in range(200)]
    assert max(waits) <= 3.0 and min(waits) >= 0.0
    assert max(waits) > 2.0  # full jitter spreads over the whole range


def test_unknown_exceptions_go_through_the_classifier() -> None:
    def to_rate_limit(exc: BaseException) -> ProviderError:
        return RateLimitError(str(exc), retry_after=0.01)

    script, sleeps = Script(ValueError("429 from sdk")), Sleeps()
    assert run(script, RetryPolicy(), sleeps, to_rate_limit) == (OK, 2)


def test_timeouts_are_transient_and_broken_classifiers_do_not_crash() -> None:
    assert isinstance(safe_classify(classify, TimeoutError()), TransientError)

    def broken(exc: BaseException) -> ProviderError:
        raise RuntimeError("bug")

    error = safe_classify(broken, ValueError("boom"))
    assert isinstance(error, ProviderError) and not error.retryable
    assert "boom" in str(error)


def test_cancellation_propagates() -> None:
    async def cancelled() -> Completion:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(call_with_retry(cancelled, classify, RetryPolicy(), rng=random.Random(0)))


def test_honest_rate_limits_have_their_own_budget() -> None:
    waits = [RateLimitError("429", retry_after=0.01)] * MAX_RATE_LIMIT_WAITS
    errors = [*waits[:10], TransientError("503"), *waits[10:], TransientError("timeout")]
    script, sleeps = Script(*errors), Sleeps()
    result = run(script, RetryPolicy(max_retries=2, base_s=0.01), sleeps, classify)
    # 20 rate-limit waits and 2 failures fit their budgets: the call ends ok.
    assert result == (OK, MAX_RATE_LIMIT_WAITS + 3)
    assert len(sleeps.waits) == MAX_RATE_LIMIT_WAITS + 2


def test_rate_limit_waits_are_capped_too() -> None:
    errors = [RateLimitError("429", retry_after=0.01)] * (MAX_RATE_LIMIT_WAITS + 5)
    script, sleeps = Script(*errors), Sleeps()
    result = run(script, RetryPolicy(max_retries=5), sleeps, classify)
    assert isinstance(result, CallFailed) and isinstance(result.error, RateLimitError)
    assert result.attempts == MAX_RATE_LIMIT_WAITS + 1 == script.calls
    assert len(sleeps.waits) == MAX_RATE_LIMIT_WAITS


def test_rate_limit_without_retry_after_is_a_failure() -> None:
    script, sleeps = Script(*[RateLimitError("429")] * 10), Sleeps()
    result = run(script, RetryPolicy(max_retries=5, base_s=0.01), sleeps, classify)
    assert isinstance(result, CallFailed) and result.attempts == 6  # at most 5 retries


def test_failures_keep_at_most_max_retries_between_rate_limits() -> None:
    limited = RateLimitError("429", retry_after=0.01)
    errors = [TransientError("500"), limited] * 10
    script, sleeps = Script(*errors), Sleeps()
    result = run(script, RetryPolicy(max_retries=5, base_s=0.01), sleeps, classify)
    assert isinstance(result, CallFailed) and isinstance(result.error, TransientError)
    assert result.attempts == 11  # 6 failures (5 retries) and the 5 waits between them


def test_zero_max_retries_never_repeats_a_call() -> None:
    policy = RetryPolicy.from_config(PipelineConfig(max_retries=0))
    assert policy.max_rate_limit_waits == 0
    script, sleeps = Script(RateLimitError("429", retry_after=0.01)), Sleeps()
    result = run(script, policy, sleeps, classify)
    assert isinstance(result, CallFailed) and result.attempts == 1 and sleeps.waits == []
    assert RetryPolicy.from_config(PipelineConfig()).max_rate_limit_waits == MAX_RATE_LIMIT_WAITS
