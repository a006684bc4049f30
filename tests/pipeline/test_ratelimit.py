from __future__ import annotations

import asyncio
import itertools

from jurybox.pipeline.ratelimit import (
    PACING_MARGIN,
    WINDOW_MARGIN,
    JudgeLimits,
    Pacer,
    SlidingWindowLimiter,
)


class FakeClock:
    """Time that moves only when someone sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        assert seconds > 0
        self.now += seconds
        self.slept += seconds
        await asyncio.sleep(0)


def max_in_any_window(times: list[float], window: float) -> int:
    return max(sum(1 for t in times if start <= t < start + window) for start in times)


def test_rpm_sliding_window_is_respected_under_concurrency() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(3, 60.0, clock=clock, sleep=clock.sleep)
    times: list[float] = []

    async def request() -> None:
        await limiter.acquire(1.0)
        times.append(clock())

    async def main() -> None:
        await asyncio.gather(*(request() for _ in range(10)))

    asyncio.run(main())
    assert len(times) == 10
    assert max_in_any_window(times, 60.0) == 3
    # Ten requests at three a minute: the last one starts in the fourth minute, not later.
    assert 180.0 <= times[-1] - 1000.0 < 181.0


def test_tpm_charges_estimate_and_settles_to_actual_usage() -> None:
    clock = FakeClock()
    limits = JudgeLimits(None, 1000, clock=clock, sleep=clock.sleep)

    async def main() -> None:
        settle = await limits.acquire(900)
        assert limits.tokens is not None and limits.tokens.used() == 900
        settle(100)  # the call used far fewer tokens than estimated: refund
        assert limits.tokens.used() == 100
        await limits.acquire(800)  # fits now, no wait
        assert clock.slept == 0.0
        settle_more = await limits.acquire(500)  # 900 used: waits until both charges expire
        settle_more(None)  # unknown usage keeps the estimate
        assert limits.tokens.used() == 500

    asyncio.run(main())
    # The charges leave the window a small margin after the 60 s, never before.
    expires = 60.0 * (1.0 + WINDOW_MARGIN)
    assert expires - 0.01 < clock.slept <= expires + 0.01


def test_window_margin_delays_expiry() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(1, 1.0, margin_s=0.05, clock=clock, sleep=clock.sleep)

    async def main() -> None:
        await limiter.acquire(1)
        await limiter.acquire(1)

    asyncio.run(main())
    assert 1.05 - 1e-9 <= clock.slept <= 1.051


async def _start_times(limits: JudgeLimits, clock: FakeClock, n: int) -> list[float]:
    times: list[float] = []

    async def request() -> None:
        (await limits.acquire(10))(None)
        times.append(clock())

    await asyncio.gather(*(request() for _ in range(n)))
    return times


def test_rpm_is_paced_evenly_for_one_second_and_sixty_second_windows() -> None:
    clock = FakeClock()
    rpm = 6000.0  # 100 a second
    limits = JudgeLimits(rpm, None, clock=clock, sleep=clock.sleep)
    times = asyncio.run(_start_times(limits, clock, 700))
    assert times == sorted(times)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.01 * (1 + PACING_MARGIN) - 1e-9  # no burst, not even at the start
    assert max_in_any_window(times, 1.0) <= 100  # a server counting per second sees no excess
    # ... yet the pace is the limit less the margin: 699 intervals of 10.4 ms.
    assert abs((times[-1] - times[0]) - 699 * 0.01 * (1 + PACING_MARGIN)) < 1e-6


def test_rpm_pacing_honours_the_sixty_second_window_at_low_rates() -> None:
    clock = FakeClock()
    limits = JudgeLimits(3, None, clock=clock, sleep=clock.sleep)
    times = asyncio.run(_start_times(limits, clock, 10))
    assert max_in_any_window(times, 60.0) <= 3
    assert 180.0 <= times[-1] - times[0] <= 9 * 20.0 * (1 + PACING_MARGIN) + 1e-6


class LateClock(FakeClock):
    """Every sleep overruns by ``late`` seconds, like a busy event loop."""

    def __init__(self, late: float) -> None:
        super().__init__()
        self.late = late

    async def sleep(self, seconds: float) -> None:
        await super().sleep(seconds + self.late)


def test_pacer_catches_up_small_oversleeps_without_bursting() -> None:
    clock = LateClock(0.003)
    pacer = Pacer(0.01, catch_up_s=0.005, clock=clock, sleep=clock.sleep)

    async def main() -> list[float]:
        return [await pacer.acquire() for _ in range(1001)]

    times = asyncio.run(main())
    # Late wake-ups do not slow the pace (1,000 intervals of 10 ms) ...
    assert times[-1] - times[0] < 1000 * 0.01 + 0.01
    # ... nor let requests bunch up: at least interval - catch_up apart.
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.005 - 1e-9
    assert max_in_any_window(times, 1.0) <= 101


def test_pacer_does_not_burst_after_idle() -> None:
    clock = FakeClock()
    pacer = Pacer(1.0, clock=clock, sleep=clock.sleep)

    async def main() -> list[float]:
        first = [await pacer.acquire() for _ in range(2)]
        clock.now += 100.0  # idle: no credit is saved up
        return first + [await pacer.acquire() for _ in range(3)]

    times = asyncio.run(main())
    assert [round(b - a, 6) for a, b in itertools.pairwise(times)] == [
        1.0,
        100.0,
        1.0,
        1.0,
    ]


def test_oversized_request_runs_alone() -> None:
    clock = FakeClock()
    limiter = SlidingWindowLimiter(100, 60.0, clock=clock, sleep=clock.sleep)

    async def main() -> None:
        await limiter.acquire(500)  # larger than the limit: allowed into an empty window
        await limiter.acquire(1)  # waits until the big one has left the window

    asyncio.run(main())
    assert 59.9 < clock.slept <= 60.01


def test_no_limits_means_no_waiting() -> None:
    clock = FakeClock()
    limits = JudgeLimits(None, None, clock=clock, sleep=clock.sleep)

    async def main() -> None:
        for _ in range(100):
            (await limits.acquire(10_000))(5)

    asyncio.run(main())
    assert clock.slept == 0.0


def test_rpm_pace_survives_a_busy_loop_without_exceeding_one_second_windows() -> None:
    clock = LateClock(0.02)  # every wake-up 20 ms late: two intervals at 6,000 rpm
    limits = JudgeLimits(6000.0, None, clock=clock, sleep=clock.sleep)
    times = asyncio.run(_start_times(limits, clock, 700))
    assert max_in_any_window(times, 1.0) <= 100
    # The late wake-ups are caught up: the pace stays within 4 % (the margin) of the limit.
    assert times[-1] - times[0] < 699 * 0.01 * (1 + PACING_MARGIN) + 0.05
