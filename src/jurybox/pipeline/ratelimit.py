"""Per-judge request and token limits: even request pacing and a sliding token window.

Requests are *paced*: one every ``60 / rpm`` seconds, slowed by ``PACING_MARGIN`` (4 %). A
vendor may enforce "rpm" over any 60-second window or as rpm/60 over any 1-second window; an even
pace satisfies both, whereas a bucket or window that lets a minute's (or even a few seconds')
quota out at once draws 429s from the second kind. A wake-up late by at most ``CATCH_UP_S``
(25 ms; a busy loop or CPU contention) is caught up, so the pace does not drift below the limit;
a later one restarts the schedule (no saved-up burst). Hence in any window of ``w`` seconds at
most ``floor((w + 0.025) * rpm / 60 / 1.04) + 1`` requests start: <= rpm/60 for ``w = 1`` and
<= rpm for ``w = 60`` as long as the catch-up (25 ms) is below the margin (40 ms per second).

Tokens use a sliding window, the guarantee vendors state ("at most N per minute"): in *any*
60-second span the tokens charged never exceed the limit. Each charge leaves the window
``WINDOW_MARGIN`` (2 %) after the window, so the client's clock running slightly ahead of the
server's does not turn into a 429. Token use is charged up front from the prompt estimate and
corrected to the actual usage when the call returns (refund or extra charge). Clock and sleep are
injectable so tests run on a fake clock.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]

_MIN_WAIT_S = 0.001
PACING_MARGIN = 0.04
CATCH_UP_S = 0.025
WINDOW_MARGIN = 0.02


@dataclass
class Charge:
    """One acquisition in a window; ``amount`` may be corrected after the call."""

    at: float
    amount: float
    live: bool = True  # False once it has left the window


class SlidingWindowLimiter:
    """At most ``limit`` units in any ``window_s``-second window.

    A single request larger than the limit is let through when the window is empty (otherwise
    it could never run). Waiters are served in arrival order (``asyncio.Lock`` is fair). A charge
    leaves the window ``margin_s`` after ``window_s``. The units in the window are kept as a
    running total, so an acquisition costs O(1) however many charges the window holds.
    """

    def __init__(
        self,
        limit: float,
        window_s: float = 60.0,
        *,
        margin_s: float = 0.0,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if limit <= 0 or window_s <= 0 or margin_s < 0:
            raise ValueError(
                f"limit and window_s must be positive and margin_s >= 0, "
                f"got {limit}, {window_s}, {margin_s}"
            )
        self.limit = limit
        self.window_s = window_s + margin_s
        self._clock = clock
        self._sleep = sleep
        self._charges: deque[Charge] = deque()
        self._used = 0.0
        self._lock = asyncio.Lock()

    def used(self) -> float:
        """Units charged in the current window."""
        self._expire(self._clock())
        return self._used

    def settle(self, charge: Charge, amount: float) -> None:
        """Correct a charge to ``amount`` (e.g. the tokens actually used)."""
        if charge.live:
            self._used += amount - charge.amount
        charge.amount = amount

    async def acquire(self, amount: float = 1.0) -> Charge:
        """Wait until ``amount`` fits in the window, then charge it."""
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                used = self._used
                if not self._charges or used + amount <= self.limit:
                    charge = Charge(now, amount)
                    self._charges.append(charge)
                    self._used += amount
                    return charge
                await self._sleep(self._wait_for(used, amount, now))

    def _expire(self, now: float) -> None:
        while self._charges and self._charges[0].at + self.window_s <= now:
            charge = self._charges.popleft()
            charge.live = False
            self._used -= charge.amount
        if not self._charges:
            self._used = 0.0  # drop the rounding error a running float total collects

    def _wait_for(self, used: float, amount: float, now: float) -> float:
        """Time until enough of the oldest charges leave the window for ``amount`` to fit."""
        for charge in self._charges:
            used -= charge.amount
            if used + amount <= self.limit:
                return max(charge.at + self.window_s - now, _MIN_WAIT_S)
        return max(self._charges[-1].at + self.window_s - now, _MIN_WAIT_S)


class Pacer:
    """Starts at most one request every ``interval_s`` seconds, in arrival order.

    The schedule advances by ``interval_s`` from the previous slot, not from the wake-up, so a
    sleep that overruns by up to ``catch_up_s`` does not slow the pace; after an idle spell the
    schedule restarts from now rather than releasing a burst.
    """

    def __init__(
        self,
        interval_s: float,
        *,
        catch_up_s: float = CATCH_UP_S,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if interval_s <= 0 or catch_up_s < 0:
            raise ValueError(f"interval_s must be positive, got {interval_s}")
        self.interval_s = interval_s
        self.catch_up_s = catch_up_s
        self._clock = clock
        self._sleep = sleep
        self._next = float("-inf")  # the earliest start of the next request
        self._lock = asyncio.Lock()

    async def acquire(self) -> float:
        """Wait for the next slot; returns the time the request may start."""
        async with self._lock:
            now = self._clock()
            if self._next > now:
                await self._sleep(max(self._next - now, _MIN_WAIT_S))
                now = self._clock()
            on_time = now - self._next <= self.catch_up_s  # else idle: restart from now
            self._next = (self._next if on_time else now) + self.interval_s
            return now


class JudgeLimits:
    """A judge's optional rpm and tpm limits; ``acquire`` returns a callback to settle tokens."""

    def __init__(
        self,
        rpm: float | None,
        tpm: float | None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.requests = (
            Pacer(60.0 / rpm * (1.0 + PACING_MARGIN), clock=clock, sleep=sleep) if rpm else None
        )
        self.tokens = (
            SlidingWindowLimiter(tpm, 60.0, margin_s=60.0 * WINDOW_MARGIN, clock=clock, sleep=sleep)
            if tpm
            else None
        )

    async def acquire(self, estimated_tokens: int) -> Callable[[int | None], None]:
        """Wait for a request slot and the estimated tokens; call the result with actual usage."""
        if self.requests is not None:
            await self.requests.acquire()
        tokens = self.tokens
        if tokens is None:
            return _no_settle
        charge = await tokens.acquire(float(estimated_tokens))

        def settle(actual_tokens: int | None) -> None:
            if actual_tokens is not None:
                tokens.settle(charge, float(actual_tokens))

        return settle


def _no_settle(actual_tokens: int | None) -> None:
    del actual_tokens
