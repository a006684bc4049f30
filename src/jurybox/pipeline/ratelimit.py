"""Per-judge request and token limits as sliding windows.

A sliding window gives the guarantee vendors state ("at most N per minute"): in *any* 60-second
span the requests (or tokens) sent never exceed the limit, which a token bucket with a full
burst does not. Token use is charged up front from the prompt estimate and corrected to the
actual usage when the call returns (refund or extra charge). Clock and sleep are injectable so
tests run on a fake clock.
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


@dataclass
class Charge:
    """One acquisition in a window; ``amount`` may be corrected after the call."""

    at: float
    amount: float


class SlidingWindowLimiter:
    """At most ``limit`` units in any ``window_s``-second window.

    A single request larger than the limit is let through when the window is empty (otherwise
    it could never run). Waiters are served in arrival order (``asyncio.Lock`` is fair).
    """

    def __init__(
        self,
        limit: float,
        window_s: float = 60.0,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if limit <= 0 or window_s <= 0:
            raise ValueError(f"limit and window_s must be positive, got {limit}, {window_s}")
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._sleep = sleep
        self._charges: deque[Charge] = deque()
        self._lock = asyncio.Lock()

    def used(self) -> float:
        """Units charged in the current window."""
        self._expire(self._clock())
        return sum(charge.amount for charge in self._charges)

    async def acquire(self, amount: float = 1.0) -> Charge:
        """Wait until ``amount`` fits in the window, then charge it."""
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                used = sum(charge.amount for charge in self._charges)
                if not self._charges or used + amount <= self.limit:
                    charge = Charge(now, amount)
                    self._charges.append(charge)
                    return charge
                await self._sleep(self._wait_for(used, amount, now))

    def _expire(self, now: float) -> None:
        while self._charges and self._charges[0].at + self.window_s <= now:
            self._charges.popleft()

    def _wait_for(self, used: float, amount: float, now: float) -> float:
        """Time until enough of the oldest charges leave the window for ``amount`` to fit."""
        for charge in self._charges:
            used -= charge.amount
            if used + amount <= self.limit:
                return max(charge.at + self.window_s - now, _MIN_WAIT_S)
        return max(self._charges[-1].at + self.window_s - now, _MIN_WAIT_S)


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
        self.requests = SlidingWindowLimiter(rpm, clock=clock, sleep=sleep) if rpm else None
        self.tokens = SlidingWindowLimiter(tpm, clock=clock, sleep=sleep) if tpm else None

    async def acquire(self, estimated_tokens: int) -> Callable[[int | None], None]:
        """Wait for a request slot and the estimated tokens; call the result with actual usage."""
        if self.requests is not None:
            await self.requests.acquire(1.0)
        if self.tokens is None:
            return _no_settle
        charge = await self.tokens.acquire(float(estimated_tokens))

        def settle(actual_tokens: int | None) -> None:
            if actual_tokens is not None:
                charge.amount = float(actual_tokens)

        return settle


def _no_settle(actual_tokens: int | None) -> None:
    del actual_tokens
