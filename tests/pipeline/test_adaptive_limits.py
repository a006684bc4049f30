"""Adaptive rate control on a fake clock: pace learned from headers, AIMD on 429 episodes, the
guessed pace's floor, holds for Retry-After and spent budgets, forgiveness, configured limits."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from jurybox.errors import ProviderError, RateLimitError, TransientError
from jurybox.pipeline.ratelimit import (
    DECREASE,
    FORGIVE_WITHIN_S,
    GUESS_FLOOR,
    PACING_MARGIN,
    START_IN_FLIGHT,
    AdaptiveLimits,
    JudgeLimits,
    limits_for,
)
from jurybox.records import Completion, RateLimits

from .test_ratelimit import FakeClock, max_in_any_window


def _classify(exc: BaseException) -> ProviderError:
    return exc if isinstance(exc, ProviderError) else TransientError(str(exc))


def _answer(limits: RateLimits | None = None) -> Completion:
    return Completion("{}", "m", input_tokens=10, output_tokens=2, rate_limits=limits)


def _limits(clock: FakeClock, max_in_flight: int = 64, **kwargs: Any) -> AdaptiveLimits:
    return AdaptiveLimits(max_in_flight, clock=clock, sleep=clock.sleep, **kwargs)


async def _ok(limits: AdaptiveLimits, stated: RateLimits | None = None) -> float:
    async with limits.attempt(10, _classify) as turn:
        turn.done(_answer(stated))
    return turn.started


async def _429(limits: AdaptiveLimits, error: RateLimitError | None = None) -> None:
    with pytest.raises(RateLimitError):
        async with limits.attempt(10, _classify):
            raise error or RateLimitError("429")


async def _429_while_one_waits(limits: AdaptiveLimits) -> None:
    """A 429 while another call waits for the (one-call) window: the run asks for more than
    the server admits, so what it admitted measures the server."""
    assert limits.window < 2
    with pytest.raises(RateLimitError):
        async with limits.attempt(10, _classify):
            waiter = asyncio.create_task(_ok(limits))
            await asyncio.sleep(0)
            assert limits.waiting == 1
            raise RateLimitError("429")
    await waiter


def test_a_stated_request_limit_sets_an_even_pace() -> None:
    clock = FakeClock()
    limits = _limits(clock)

    async def main() -> list[float]:
        await _ok(limits, RateLimits(requests_limit=600, requests_remaining=599))
        return [await _ok(limits) for _ in range(200)]

    times = asyncio.run(main())
    assert limits.learned_rpm == 600
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) == pytest.approx(0.1 * (1 + PACING_MARGIN))
    assert max_in_any_window(times, 60.0) <= 600
    assert limits.describe() == "learned 600 rpm"


def test_a_stated_token_limit_keeps_a_minute_under_it() -> None:
    clock = FakeClock()
    limits = _limits(clock)

    async def main() -> list[float]:
        await _ok(limits, RateLimits(tokens_limit=1200))
        return [await _ok(limits) for _ in range(300)]  # 12 tokens a call: 100 a minute

    times = asyncio.run(main())
    assert limits.learned_tpm == 1200
    assert max_in_any_window(times, 60.0) <= 100
    assert times[-1] - times[0] > 120.0
    assert limits.describe() == "1,200 tpm"


def test_window_starts_small_doubles_until_the_first_episode_then_aimd() -> None:
    clock = FakeClock()
    limits = _limits(clock, max_in_flight=64)
    assert limits.window == START_IN_FLIGHT

    async def main() -> None:
        for _ in range(20):
            await _ok(limits)
        assert limits.window == START_IN_FLIGHT + 20  # slow start: +1 per answer
        await _429(limits)
        assert limits.window == pytest.approx((START_IN_FLIGHT + 20) * DECREASE)
        before = limits.window
        await _ok(limits)
        assert limits.window == pytest.approx(before + 1 / before)  # +1 per round trip

    asyncio.run(main())
    assert limits.episodes == 1


def test_no_new_episode_until_something_is_admitted() -> None:
    clock = FakeClock()
    limits = _limits(clock)

    async def main() -> None:
        await _ok(limits)
        for _ in range(10):
            await _429(limits)  # a burst of 429s is one episode, however long it lasts
        assert limits.episodes == 1
        await _ok(limits)
        await _429(limits)
        assert limits.episodes == 2

    asyncio.run(main())


def test_a_429_from_a_call_started_before_the_episode_belongs_to_it() -> None:
    clock = FakeClock()
    limits = _limits(clock)

    async def slow_429(started: asyncio.Event, release: asyncio.Event) -> None:
        with pytest.raises(RateLimitError):
            async with limits.attempt(10, _classify):
                started.set()
                await release.wait()
                raise RateLimitError("429, sent before the first episode")

    async def main() -> None:
        started, release = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(slow_429(started, release))
        await started.wait()
        clock.now += 1.0
        await _429(limits)  # episode 1
        await _ok(limits)
        release.set()
        await task

    asyncio.run(main())
    assert limits.episodes == 1


def test_calls_in_flight_never_exceed_the_window() -> None:
    clock = FakeClock()
    limits = _limits(clock, max_in_flight=64)
    over: list[tuple[int, float]] = []
    release = asyncio.Event()

    async def call() -> None:
        async with limits.attempt(10, _classify) as turn:
            if limits.in_flight > limits.window:
                over.append((limits.in_flight, limits.window))
            await release.wait()
            turn.done(_answer())

    async def main() -> int:
        tasks = [asyncio.create_task(call()) for _ in range(40)]
        for _ in range(10):
            await asyncio.sleep(0)
        started_before_any_answer = limits.in_flight
        release.set()
        await asyncio.gather(*tasks)
        return started_before_any_answer

    # Only 16 start before any answer: no storm at the start of a run.
    assert asyncio.run(main()) == START_IN_FLIGHT
    assert not over
    assert limits.in_flight == 0


def test_a_guessed_pace_follows_what_the_server_admitted() -> None:
    clock = FakeClock()
    limits = _limits(clock, max_in_flight=1)

    async def main() -> None:
        for _ in range(50):  # 10 admitted a second for 5 s
            await _ok(limits)
            clock.now += 0.1
        await _429_while_one_waits(limits)

    asyncio.run(main())
    assert limits.learned_rpm is None
    note = limits.describe()
    assert note is not None and "rpm (from 429s)" in note
    guess = limits._guess_now(clock())
    assert guess == pytest.approx(10 * 0.9, rel=0.05)


def test_a_429_when_few_calls_are_asked_for_sets_no_pace() -> None:
    """Four calls for a server that always refuses one request (tests/integration's key-leak
    run): what was admitted measures the run, not the server; only the window shrinks."""
    clock = FakeClock()
    limits = _limits(clock)

    async def main() -> None:
        for _ in range(3):
            await _ok(limits)
        await _429(limits)

    asyncio.run(main())
    assert limits.episodes == 1 and limits.window < START_IN_FLIGHT + 3
    assert limits._guess_now(clock()) is None and limits.describe() is None


def test_the_guessed_pace_has_a_floor_of_a_quarter_of_the_best_seen() -> None:
    clock = FakeClock()
    limits = _limits(clock, max_in_flight=1)

    async def main() -> None:
        for _ in range(100):  # 20 a second at best
            await _ok(limits)
            clock.now += 0.05
        for _ in range(60):  # then a server that admits about one call in two, and slowly
            await _429_while_one_waits(limits)

    asyncio.run(main())
    assert limits.episodes == 60
    guess = limits._guess_now(clock())
    assert guess is not None and guess >= GUESS_FLOOR * limits.best_rate
    assert 20.0 <= limits.best_rate <= 25.0  # measured over >= 0.25 s: the start is noisy
    assert guess * 60 > 250  # not walked down toward one call a minute


def test_retry_after_holds_every_start() -> None:
    clock = FakeClock()
    limits = _limits(clock)

    async def main() -> float:
        await _ok(limits)
        await _429(limits, RateLimitError("429", retry_after=2.0))
        return await _ok(limits)

    start = clock.now
    assert asyncio.run(main()) - start == pytest.approx(2.0)


def test_a_spent_budget_holds_until_enough_is_back() -> None:
    clock = FakeClock()
    limits = _limits(clock)
    spent = RateLimits(requests_limit=60, requests_remaining=0, requests_reset_s=120.0)

    async def main() -> tuple[float, float]:
        first = await _ok(limits, spent)
        return first, await _ok(limits)

    first, second = asyncio.run(main())
    # The whole budget is back in 120 s, so one request's worth in 2 s (more than the pace).
    assert second - first == pytest.approx(2.0)


def test_forgiven_only_while_backing_off_and_the_server_admits() -> None:
    clock = FakeClock()
    limits = _limits(clock)
    error = RateLimitError("429")

    async def main() -> None:
        await _ok(limits)
        assert not limits.forgives(error)  # no episode yet: nothing to back off from
        await _429(limits, error)
        assert limits.forgives(error)
        assert not limits.forgives(TransientError("503"))
        clock.now += FORGIVE_WITHIN_S + 1  # nothing admitted for 30 s: an always-429 server
        await _429(limits, error)
        assert not limits.forgives(error)

    asyncio.run(main())


def test_configured_limits_always_win() -> None:
    clock = FakeClock()
    fixed = limits_for(60, None, 8, clock=clock, sleep=clock.sleep)
    assert isinstance(fixed, JudgeLimits)
    assert isinstance(limits_for(None, 1000, 8, clock=clock, sleep=clock.sleep), JudgeLimits)
    assert isinstance(limits_for(None, None, 8, adaptive=False), JudgeLimits)
    assert isinstance(limits_for(None, None, 8), AdaptiveLimits)

    async def main() -> list[float]:
        times = []
        for _ in range(3):  # headers claiming far more are ignored: the config's 60 rpm holds
            async with fixed.attempt(10, _classify) as turn:
                turn.done(_answer(RateLimits(requests_limit=100_000)))
            times.append(clock())
        return times

    times = asyncio.run(main())
    assert times[2] - times[0] == pytest.approx(2 * 1.0 * (1 + PACING_MARGIN))
    assert not fixed.forgives(RateLimitError("429"))


def test_learned_limits_are_reported_and_restored() -> None:
    clock = FakeClock()
    entry: dict[str, Any] = {}
    limits = _limits(clock, report=entry)

    async def learn() -> None:
        await _ok(limits, RateLimits(requests_limit=1200, tokens_limit=400_000))

    asyncio.run(learn())
    assert entry["rate_limits"] == {"learned_rpm": 1200, "learned_tpm": 400_000}
    resumed = _limits(clock, saved=entry["rate_limits"])

    async def paced() -> list[float]:
        return [await _ok(resumed) for _ in range(3)]

    times = asyncio.run(paced())  # paced from the first call, before any header
    assert times[1] - times[0] == pytest.approx(0.05 * (1 + PACING_MARGIN))
    assert resumed.describe() == "learned 1,200 rpm · 400,000 tpm"


def test_a_pace_learned_late_counts_the_calls_already_sent() -> None:
    """The first answer's headers arrive after the opening burst went out: pacing from then
    on would add a second's worth of calls on top of it."""
    clock = FakeClock()
    limits = _limits(clock)
    burst_started = asyncio.Event()
    release = asyncio.Event()

    async def opening_call(stated: RateLimits | None) -> None:
        async with limits.attempt(10, _classify) as turn:
            burst_started.set()
            await release.wait()
            turn.done(_answer(stated))

    async def main() -> list[float]:
        stated = RateLimits(requests_limit=600)  # 10 a second
        burst = [asyncio.create_task(opening_call(stated)) for _ in range(START_IN_FLIGHT)]
        await burst_started.wait()
        release.set()
        await asyncio.gather(*burst)
        return [await _ok(limits) for _ in range(5)]

    start = clock.now
    times = asyncio.run(main())
    # 16 calls went out at once: the next waits until 16 paced slots would have passed.
    assert times[0] - start == pytest.approx(START_IN_FLIGHT * 0.1 * (1 + PACING_MARGIN))
    everything = [start] * START_IN_FLIGHT + times
    assert max_in_any_window(everything, 60.0) <= 600
