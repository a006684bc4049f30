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

A judge with neither ``rpm`` nor ``tpm`` gets ``AdaptiveLimits`` instead (see its docstring and
docs/rate_limits.md): it learns the limits from the provider's rate-limit headers and 429s, paces
to them and adapts how many calls are in flight. Configured limits always win over learned ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from jurybox.errors import ProviderError, RateLimitError
from jurybox.records import Completion, RateLimits

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

    def defer(self, until: float) -> None:
        """No start before ``until`` (a pace learned after some calls already went out)."""
        self._next = max(self._next, until)


class FixedLimits:
    """A ``Limiter`` over fixed limits: subclasses give ``acquire``; they learn nothing."""

    async def acquire(self, estimated_tokens: int) -> Callable[[int | None], None]:
        raise NotImplementedError

    def attempt(self, estimated_tokens: int, classify: Classify) -> _FixedAttempt:
        """``acquire`` as a block (the ``Limiter`` protocol)."""
        del classify
        return _FixedAttempt(self, estimated_tokens)

    def forgives(self, error: ProviderError) -> bool:
        del error
        return False

    def describe(self) -> str | None:
        return None


class JudgeLimits(FixedLimits):
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
        return await _charge(self.tokens, estimated_tokens)


def _no_settle(actual_tokens: int | None) -> None:
    del actual_tokens


async def _charge(
    tokens: SlidingWindowLimiter | None, estimated_tokens: int
) -> Callable[[int | None], None]:
    """Wait for the estimated tokens in the window; the callback settles what was used."""
    if tokens is None:
        return _no_settle
    charge = await tokens.acquire(float(estimated_tokens))

    def settle(actual_tokens: int | None) -> None:
        if actual_tokens is not None:
            tokens.settle(charge, float(actual_tokens))

    return settle


Classify = Callable[[BaseException], ProviderError]

# Adaptive control (``AdaptiveLimits``); the figures behind them are in docs/rate_limits.md.
START_IN_FLIGHT = 16  # calls in flight before anything is known: a small burst, not a storm
SLOW_START_PACE = 2.0  # while the window grows: at most 2 x the best admitted rate
DECREASE = 0.8  # calls in flight x 0.8 per 429 episode (multiplicative decrease)
PACE_DECREASE = 0.9  # a guessed pace x 0.9 per episode, from what the server admitted
PACE_GROWTH_PER_S = 0.02  # a guessed pace grows by 2 % of itself per second without a 429
GUESS_FLOOR = 0.25  # a guessed pace never drops below 1/4 of the best admitted rate seen
GUESS_CAP = 1.5  # nor grows beyond 1.5 x the best admitted rate (it would mean no pace at all)
ADMITTED_SPAN_S = 5.0  # the admitted rate is measured over the last 5 s (at least 0.25 s)
FORGIVE_WITHIN_S = 30.0  # a 429 is the limiter's business only if the server admitted lately


@dataclass
class Turn:
    """One attempt's go-ahead from the limits; ``done`` reports its answer."""

    started: float
    settle: Callable[[int | None], None]
    answered: Callable[[Completion, float], None] | None = None

    def done(self, completion: Completion) -> None:
        """Settle the tokens actually used and pass the response's rate limits on."""
        used = (completion.input_tokens or 0) + (completion.output_tokens or 0)
        self.settle(used or None)
        if self.answered is not None:
            self.answered(completion, self.started)


class Limiter(Protocol):
    """What the runner asks of a judge's limits, configured (``JudgeLimits``) or learned."""

    def attempt(
        self, estimated_tokens: int, classify: Classify
    ) -> contextlib.AbstractAsyncContextManager[Turn]:
        """Wait until a call may start; the block is the call (errors are seen, not caught)."""
        ...

    def forgives(self, error: ProviderError) -> bool:
        """True when a retry of ``error`` should not count against the call's failure budget."""
        ...

    def describe(self) -> str | None:
        """What the limits learned, for the progress display (``None``: nothing to say)."""
        ...


class AdaptiveLimits:
    """Limits learned from the provider: its rate-limit headers first, its 429s otherwise.

    * **Headers** (``Completion.rate_limits`` / ``RateLimitError.rate_limits``): a stated
      request limit sets an even pace (like a configured ``rpm``, 4 % under it); a token limit
      a sliding token window (like ``tpm``); a budget left at zero holds every start until the
      stated reset (pro rata: budgets refill evenly); ``Retry-After`` holds them for as long
      as it says. A pace learned after calls went out counts them as paced.
    * **429 episodes**: the first 429 after something was admitted, from a call started after
      the previous episode, is an episode; the others belong to it. Each episode multiplies the
      calls allowed in flight by ``DECREASE`` (0.8); each answer adds one back per round trip
      (additive increase), from ``START_IN_FLIGHT`` up to the judge's concurrency (doubling per
      round trip, paced at twice the best admitted rate, until the first episode). Without a
      stated limit an episode also sets a guessed pace: first 0.9 x what the server admitted
      over the last seconds (only while calls were waiting: else the run, not the server, set
      that rate), then 0.9 x the last guess, never under ``GUESS_FLOOR`` of the best rate seen
      (else repeated episodes would walk it down toward one call a minute), growing by 2 % a
      second until the next episode.

    ``report`` (the manifest's entry for the judge) receives what was learned; ``saved`` (that
    entry's ``rate_limits`` from an earlier session) is the starting point.
    """

    def __init__(
        self,
        max_in_flight: int,
        *,
        saved: Mapping[str, Any] | None = None,
        report: MutableMapping[str, Any] | None = None,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.max_in_flight = max(1, max_in_flight)
        self.window = float(min(self.max_in_flight, START_IN_FLIGHT))
        self.in_flight = 0
        self.waiting = 0  # calls held by the window, a hold or the pace right now
        self.learned_rpm: float | None = None
        self.learned_tpm: float | None = None
        self.episodes = 0
        self.best_rate = 0.0  # requests/s: the most the server was seen to admit
        self._clock = clock
        self._sleep = sleep
        self._pacer = Pacer(1.0, clock=clock, sleep=sleep)  # interval set before every use
        self._tokens: SlidingWindowLimiter | None = None
        self._guess: float | None = None  # requests/s, set by an episode without headers
        self._guess_at = 0.0
        self._pause_until = -math.inf
        self._episode_at = -math.inf
        self._admitted_since_episode = True
        self._last_admitted = -math.inf
        self._admitted: deque[float] = deque()  # when answers came, over ADMITTED_SPAN_S
        self._starts: deque[float] = deque()  # when calls started, over the last minute
        self._first_start: float | None = None
        self._estimate = 0.0  # tokens of the latest request, against the tokens left
        self._free = asyncio.Event()
        self._report = report
        self._published: tuple[Any, ...] = ()
        self._restore(saved or {})

    # --- the Limiter protocol ------------------------------------------------------------
    def attempt(self, estimated_tokens: int, classify: Classify) -> _AdaptiveAttempt:
        return _AdaptiveAttempt(self, estimated_tokens, classify)

    def forgives(self, error: ProviderError) -> bool:
        """A 429 while backing off (an episode or a hold in the last 30 s) from a server that
        admitted a call in the last 30 s: the pace's doing, not the call's. A server that
        admits nothing gets no such credit, so an always-429 server still ends the call."""
        if not isinstance(error, RateLimitError):
            return False
        now = self._clock()
        backing_off = now - self._episode_at <= FORGIVE_WITHIN_S or now < self._pause_until
        return backing_off and now - self._last_admitted <= FORGIVE_WITHIN_S

    def describe(self) -> str | None:
        parts = []
        if self.learned_rpm:
            parts.append(f"learned {self.learned_rpm:,.0f} rpm")
        if self.learned_tpm:
            parts.append(f"{self.learned_tpm:,.0f} tpm")
        guess = self._guess_now(self._clock())
        if not parts and guess:
            parts.append(f"pacing ~{guess * 60.0:,.0f} rpm (from 429s)")
        return " · ".join(parts) or None

    # --- what the provider said ----------------------------------------------------------
    def answered(self, completion: Completion, started: float) -> None:
        """A call was admitted: count it, widen the window, learn from its headers."""
        now = self._clock()
        self._admitted_since_episode = True
        self._last_admitted = now
        self._admitted.append(now)
        self.best_rate = max(self.best_rate, self._admitted_rate(now))
        growth = 1.0 if self.episodes == 0 else 1.0 / self.window  # +1 per round trip
        self.window = min(float(self.max_in_flight), self.window + growth)
        self._free.set()
        if completion.rate_limits:
            self.learn(completion.rate_limits, started)

    def rate_limited(self, error: RateLimitError, started: float) -> None:
        """A 429: hold for its Retry-After, learn from its headers, maybe start an episode."""
        now = self._clock()
        if error.rate_limits:
            self.learn(error.rate_limits, started)
        if error.retry_after is not None:
            self._pause_until = max(self._pause_until, now + error.retry_after)
        if self._admitted_since_episode and started >= self._episode_at:
            self._episode(now)

    def learn(self, limits: RateLimits, started: float) -> None:
        """Take the stated limits; a spent budget holds starts until enough of it is back
        (counted from when the call started: the server read its budget no earlier)."""
        if limits.requests_limit and limits.requests_limit != self.learned_rpm:
            self.learned_rpm = limits.requests_limit
            self._pace_past_starts()
        if limits.tokens_limit:
            self._learn_tokens(limits.tokens_limit)
        holds = (
            _refill_s(
                limits.requests_remaining, 1.0, limits.requests_limit, limits.requests_reset_s
            ),
            _refill_s(
                limits.tokens_remaining,
                max(self._estimate, 1.0),
                limits.tokens_limit,
                limits.tokens_reset_s,
            ),
        )
        hold = max((h for h in holds if h is not None), default=None)
        if hold is not None:
            self._pause_until = max(self._pause_until, started + hold)
        self._publish()

    # --- internals -----------------------------------------------------------------------
    async def _start(self, estimated_tokens: int) -> Turn:
        now = self._clock()
        if (
            self.in_flight < max(1, int(self.window))
            and self._pause_until <= now
            and self._tokens is None
            and self._interval(now) is None
        ):
            # Nothing to wait for (no hold, pace or token window: a server that states no
            # limits and sends no 429s): what the general path below does when nothing waits,
            # without its coroutines, once per call.
            self.in_flight += 1
            self._estimate = float(estimated_tokens)
            return self._started(now, _no_settle)
        self.waiting += 1
        try:
            while self.in_flight >= max(1, int(self.window)):
                self._free.clear()
                await self._free.wait()
        except BaseException:
            self.waiting -= 1
            raise
        self.in_flight += 1
        try:
            await self._paced_turn()
            settle = await self._charge_tokens(estimated_tokens)
        except BaseException:
            self._leave()
            raise
        finally:
            self.waiting -= 1
        return self._started(self._clock(), settle)

    def _started(self, now: float, settle: Callable[[int | None], None]) -> Turn:
        """A call starts now: counted for the admitted rate and for a pace learned later."""
        if self._first_start is None:
            self._first_start = now
        self._starts.append(now)
        while self._starts[0] <= now - 60.0:
            self._starts.popleft()
        return Turn(now, settle, self.answered)

    async def _paced_turn(self) -> None:
        """Wait out any hold, then the pace; a hold set meanwhile (a 429 came back) means both
        again: released together when it ends, calls paced before it would go out at once."""
        while True:
            waited_out = self._pause_until
            await self._hold()
            interval = self._interval(self._clock())
            if interval is not None:
                self._pacer.interval_s = interval
                await self._pacer.acquire()
            if self._pause_until in (waited_out, -math.inf) or self._pause_until <= self._clock():
                return

    def _leave(self) -> None:
        self.in_flight -= 1
        self._free.set()

    async def _hold(self) -> None:
        """Wait out a hold; again only if a new one was set meanwhile (an injected sleep that
        does not move the clock must not spin)."""
        seen = None
        while (until := self._pause_until) != seen and (wait := until - self._clock()) > 0:
            seen = until
            await self._sleep(max(wait, _MIN_WAIT_S))

    async def _charge_tokens(self, estimated_tokens: int) -> Callable[[int | None], None]:
        self._estimate = float(estimated_tokens)
        return await _charge(self._tokens, estimated_tokens)

    def _pace_past_starts(self) -> None:
        """A newly learned pace counts the last minute's starts as if they had been paced: the
        first answers' headers come after a burst already went out, and pacing from now would
        add a second's worth on top of it."""
        interval = self._interval(self._clock())
        if interval is not None and self._starts:
            self._pacer.defer(self._starts[0] + len(self._starts) * interval)

    def _learn_tokens(self, tpm: float) -> None:
        self.learned_tpm = tpm
        if self._tokens is None:
            self._tokens = SlidingWindowLimiter(
                tpm, 60.0, margin_s=60.0 * WINDOW_MARGIN, clock=self._clock, sleep=self._sleep
            )
        else:
            self._tokens.limit = tpm

    def _interval(self, now: float) -> float | None:
        """Seconds between starts: a stated limit's pace, else the guessed one, else none;
        while the window still grows from its start (no 429 yet), twice the best admitted
        rate, so that a doubled window goes out over a round trip rather than at once."""
        if self.learned_rpm:
            return 60.0 / self.learned_rpm * (1.0 + PACING_MARGIN)
        guess = self._guess_now(now)
        if guess:
            return 1.0 / guess
        growing = self.episodes == 0 and self.window < self.max_in_flight
        return 1.0 / (SLOW_START_PACE * self.best_rate) if growing and self.best_rate else None

    def _guess_now(self, now: float) -> float | None:
        if self._guess is None:
            return None
        grown = self._guess * (1.0 + PACE_GROWTH_PER_S * max(0.0, now - self._guess_at))
        return min(grown, max(self._guess, GUESS_CAP * self.best_rate))

    def _admitted_rate(self, now: float) -> float:
        """Answers per second over the last ``ADMITTED_SPAN_S`` (or since the first start)."""
        while self._admitted and self._admitted[0] <= now - ADMITTED_SPAN_S:
            self._admitted.popleft()
        since = now - (self._first_start if self._first_start is not None else now)
        return len(self._admitted) / min(max(since, 0.25), ADMITTED_SPAN_S)

    def _episode(self, now: float) -> None:
        self.episodes += 1
        self._episode_at = now
        self._admitted_since_episode = False
        self.window = max(1.0, self.window * DECREASE)
        if not self.learned_rpm:
            self._lower_guess(now)
        self._publish()

    def _lower_guess(self, now: float) -> None:
        """The first guess is 0.9 x what the server admitted lately; later ones 0.9 x the last
        (what was admitted since also counts the holds and bunched arrivals: it undershoots).

        What was admitted measures the server only while the run asked for more than the
        limits let through (calls were waiting): a run with few calls to make admits few
        whatever the server's limit, and a 429 then (say, for one request the server always
        refuses) must not slow the run to that trickle; the smaller window acts alone.
        """
        guess = self._guess_now(now)
        if guess is None and self.waiting > 0:
            guess = self._admitted_rate(now) or None
        if guess is None:
            return  # nothing measured and nothing guessed yet: the window and holds act alone
        self._guess = max(guess * PACE_DECREASE, GUESS_FLOOR * self.best_rate)
        self._guess_at = now

    def _restore(self, saved: Mapping[str, Any]) -> None:
        """Start from an earlier session's learned limits (resume)."""
        rpm, tpm, guessed = (
            _positive(saved.get(key)) for key in ("learned_rpm", "learned_tpm", "guessed_rpm")
        )
        self.learned_rpm = rpm
        if tpm is not None:
            self._learn_tokens(tpm)
        if guessed is not None and rpm is None:
            self._guess, self._guess_at = guessed / 60.0, self._clock()

    def _publish(self) -> None:
        """Put what was learned into the manifest's entry for the judge (when it changed)."""
        if self._report is None:
            return
        guess = self._guess_now(self._clock()) if self.learned_rpm is None else None
        state = (self.learned_rpm, self.learned_tpm, round(guess * 60.0) if guess else None)
        if state == self._published:
            return
        self._published = state
        learned: dict[str, Any] = {"learned_rpm": state[0], "learned_tpm": state[1]}
        if state[2] is not None:
            learned["guessed_rpm"] = state[2]
        self._report["rate_limits"] = learned


# The limiters' ``attempt`` blocks as plain classes: a generator-based context manager
# (``contextlib.asynccontextmanager``) costs several times as much, once per call.


class _FixedAttempt(contextlib.AbstractAsyncContextManager[Turn]):
    __slots__ = ("_limits", "_tokens")

    def __init__(self, limits: FixedLimits, estimated_tokens: int) -> None:
        self._limits, self._tokens = limits, estimated_tokens

    async def __aenter__(self) -> Turn:
        return Turn(0.0, await self._limits.acquire(self._tokens))

    async def __aexit__(self, *exc_info: object) -> None:
        return None  # errors pass through


class _AdaptiveAttempt(contextlib.AbstractAsyncContextManager[Turn]):
    """A call's turn: a 429 (or what the adapter classifies as one) ending the block reaches the
    limits on its way out; the slot in flight is given back however the block ends."""

    __slots__ = ("_classify", "_limits", "_tokens", "_turn")

    def __init__(self, limits: AdaptiveLimits, estimated_tokens: int, classify: Classify) -> None:
        self._limits, self._tokens, self._classify = limits, estimated_tokens, classify
        self._turn: Turn | None = None

    async def __aenter__(self) -> Turn:
        self._turn = await self._limits._start(self._tokens)
        return self._turn

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if isinstance(exc, Exception) and self._turn is not None:
                error = exc if isinstance(exc, ProviderError) else _classify(self._classify, exc)
                if isinstance(error, RateLimitError):
                    self._limits.rate_limited(error, self._turn.started)
        finally:
            self._limits._leave()


def limits_for(
    rpm: float | None,
    tpm: float | None,
    max_in_flight: int,
    *,
    adaptive: bool = True,
    saved: Mapping[str, Any] | None = None,
    report: MutableMapping[str, Any] | None = None,
    clock: Clock = time.monotonic,
    sleep: Sleep = asyncio.sleep,
) -> JudgeLimits | AdaptiveLimits:
    """A judge's limits: the configured ones when it has any (they always win), else learned."""
    if rpm or tpm or not adaptive:
        return JudgeLimits(rpm, tpm, clock=clock, sleep=sleep)
    return AdaptiveLimits(max_in_flight, saved=saved, report=report, clock=clock, sleep=sleep)


def _refill_s(
    remaining: float | None, needed: float, limit: float | None, reset_s: float | None
) -> float | None:
    """How long until ``needed`` units are back when fewer remain, else ``None``. The stated
    reset is when the whole budget is back (OpenAI, Anthropic); budgets refill evenly, so a
    deficit of ``d`` units takes ``reset x d / (limit - remaining)``."""
    if remaining is None or reset_s is None or remaining >= needed:
        return None
    used = limit - remaining if limit else 0.0
    return reset_s if used <= 0 else min(reset_s, reset_s * (needed - remaining) / used)


def _positive(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def _classify(classify: Classify, exc: Exception) -> ProviderError | None:
    """The provider's reading of ``exc`` (a classifier bug must not hide the call's error)."""
    try:
        return classify(exc)
    except Exception:
        return None
