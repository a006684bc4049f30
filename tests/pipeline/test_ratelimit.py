from __future__ import annotations

import asyncio

from jurybox.pipeline.ratelimit import JudgeLimits, SlidingWindowLimiter


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
    assert 59.9 < clock.slept <= 60.01


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
