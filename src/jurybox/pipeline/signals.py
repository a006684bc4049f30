"""Stop signals: SIGINT, SIGTERM and SIGHUP all stop a run the same orderly way.

SIGTERM is how docker, Slurm and Kubernetes stop a job, SIGHUP what a closed terminal sends; both
used to kill the process at once, leaving the manifest ``running`` with stale totals. While a run
judges, all three are caught on the event loop: the first one stops workers from taking new work
and gives the calls in flight ``grace_s`` seconds to finish before they are cancelled; a second
one cancels at once. The run then writes its manifest as ``interrupted`` (totals are kept per
record, so they are exact) and raises :class:`RunInterrupted`, which the CLI turns into the
shell's convention for death by signal, 128 + the signal number (130, 143, 129).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any

from jurybox.errors import JuryboxError

# Stop within 5 s of the signal: 3 s for calls in flight, the rest for closing and the manifest.
GRACE_S = 3.0
_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class RunInterrupted(JuryboxError):
    """A run stopped by a signal after writing its manifest as ``interrupted``."""

    def __init__(self, signum: int, directory: Path, summary: Any = None) -> None:
        self.signum = signum
        self.signal_name = signal.Signals(signum).name
        self.directory = directory
        self.summary = summary  # the RunSummary of what the file holds now
        self.exit_code = 128 + signum
        super().__init__(f"interrupted by {self.signal_name}")


class StopSignals:
    """Catch the stop signals on the running loop for the ``with`` block (main thread only;
    elsewhere, e.g. a run embedded in a worker thread, signals are left to their handlers)."""

    def __init__(self, grace_s: float = GRACE_S) -> None:
        self.grace_s = grace_s
        self.received: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, Any] = {}
        self._task: asyncio.Future[Any] | None = None
        self._on_stop: Callable[[], None] = lambda: None
        self._timer: asyncio.TimerHandle | None = None

    def __enter__(self) -> StopSignals:
        self._loop = asyncio.get_running_loop()
        for sig in _SIGNALS:
            previous = signal.getsignal(sig)
            try:
                self._loop.add_signal_handler(sig, self._received, sig)
            except (ValueError, RuntimeError, NotImplementedError):
                continue  # not the main thread, or a platform without loop signal handlers
            self._previous[sig] = previous
        return self

    def reinstall(self) -> None:
        """Take the stop signals back after a library put handlers of its own on them (Ray's
        start makes SIGTERM end the process at once: no orderly stop, no resume command)."""
        assert self._loop is not None
        for sig in self._previous:
            self._loop.remove_signal_handler(sig)
            self._loop.add_signal_handler(sig, self._received, sig)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        assert self._loop is not None
        for sig, previous in self._previous.items():
            self._loop.remove_signal_handler(sig)
            if previous is not None:
                signal.signal(sig, previous)

    async def run(self, work: Coroutine[Any, Any, None], on_stop: Callable[[], None]) -> None:
        """Await ``work``; a signal calls ``on_stop`` (take no new work), then cancels ``work``
        after the grace period, and this returns normally (``received`` says a signal came)."""
        task = asyncio.ensure_future(work)
        self.guard(task, on_stop)
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.received is None or (current is not None and current.cancelling()):
                raise  # cancelled from outside, not by our stop

    def guard(self, task: asyncio.Future[Any], on_stop: Callable[[], None]) -> None:
        """Stop ``task`` on a signal: ``on_stop`` (take no more work), then cancel after grace."""
        self._task, self._on_stop = task, on_stop
        if self.received is not None:  # arrived before the work started
            on_stop()
            task.cancel()

    def _received(self, signum: int) -> None:
        first = self.received is None
        if first:
            self.received = signum
        if self._task is None or self._loop is None:
            return  # judging has not started: ``guard`` stops it at once
        if first:
            self._on_stop()
            self._timer = self._loop.call_later(self.grace_s, self._task.cancel)
        else:
            self._task.cancel()  # asked twice: stop now
