"""One timer for all of a judge's calls in flight: the per-attempt ``timeout_s``.

``asyncio.timeout`` schedules a timer per call and cancels it when the call ends; the event loop
keeps each cancelled timer in its heap (ordered by a Python ``__lt__``) until it rebuilds the
heap. At hundreds of calls a second that was a visible share of a call's CPU (issue 19; figures in
``git log -p BENCHMARKS.md``). The calls of one judge share one limit, so they expire in the
order they started: a queue in start order and one timer for the oldest call do the same work.

A call that runs past its deadline has its task cancelled and ``TimeoutError`` raised where the
block ends, exactly as ``asyncio.timeout`` does it: a cancellation from elsewhere (a stop signal,
the task group) that comes as well is never turned into a timeout.
"""

from __future__ import annotations

import asyncio
from collections import deque
from types import TracebackType

_ACTIVE, _EXPIRED, _DONE = 0, 1, 2
# A timer may run up to the clock's resolution early (the loop's own rule); a call due that close
# to now is due.
_EARLY_S = 1e-6


class Deadlines:
    """Bounds blocks (``with deadlines.bound(): ...``) to ``limit_s`` seconds each."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self._calls: deque[_Bound] = deque()  # in start order, so in deadline order
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the timer's

    def bound(self) -> _Bound:
        return _Bound(self)

    def _enter(self, call: _Bound) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # used from another event loop: the old one's timer is gone
            self._loop, self._timer = loop, None
            self._calls.clear()
        call.deadline = loop.time() + self.limit_s
        self._calls.append(call)
        if self._timer is None:
            self._timer = loop.call_at(call.deadline, self._expire)

    def _exit(self) -> None:
        calls = self._calls
        while calls and calls[0].state == _DONE:  # calls mostly end in the order they started
            calls.popleft()
        # The timer stays: cancelling it would cost what it saves. Finding nothing due, it
        # moves to the oldest call then in flight, or stops.

    def _expire(self) -> None:
        """The timer: cancel the calls past their deadline, then wait for the next one's."""
        self._timer = None
        loop = asyncio.get_running_loop()
        due = loop.time() + _EARLY_S
        calls = self._calls
        while calls and (calls[0].state != _ACTIVE or calls[0].deadline <= due):
            call = calls.popleft()
            if call.state == _ACTIVE:
                call.state = _EXPIRED
                call.task.cancel()
        if calls:
            self._timer = loop.call_at(calls[0].deadline, self._expire)


class _Bound:
    """One block under a deadline (what ``asyncio.timeout``'s ``Timeout`` is for one call)."""

    __slots__ = ("_deadlines", "cancelling", "deadline", "state", "task")

    def __init__(self, deadlines: Deadlines) -> None:
        self._deadlines = deadlines
        self.deadline = 0.0
        self.state = _ACTIVE

    def __enter__(self) -> _Bound:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a deadline bounds a block inside a task")
        self.task = task
        self.cancelling = task.cancelling()
        self._deadlines._enter(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        expired, self.state = self.state == _EXPIRED, _DONE
        self._deadlines._exit()
        # As asyncio.timeout: the cancellation was ours only if no other one came meanwhile.
        if (
            expired
            and self.task.uncancel() <= self.cancelling
            and exc_type is asyncio.CancelledError
        ):
            raise TimeoutError from exc
