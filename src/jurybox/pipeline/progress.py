"""A rich progress bar for a run: done/total, rate, ETA, parse failures, tokens and cost.

The cost is written as every output writes it (``pricing.format_cost``: an unpriced judge is
"unpriced", never $0.0000), followed by a running estimate of the whole run's cost once every
judge has answered: each priced judge's cost per judgment so far times its judgments planned.

It draws only on an interactive terminal; piped or captured output (CI, tests) stays clean.
Start-up (issue #19): rich (~40 ms of imports) is loaded only when something is drawn or
printed, so a run off a terminal sends its first requests without it (``LazyConsole``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from jurybox.pricing import format_cost
from jurybox.records import JudgeRecord, Status

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress


def plainly_not_terminal(stream: TextIO) -> bool:
    """True when rich's ``Console(file=stream).is_terminal`` would certainly be False: no
    variable that forces it (``TTY_COMPATIBLE``, ``FORCE_COLOR``) is set and ``stream`` is not a
    tty. False means "ask rich" (it has more rules: Jupyter, IDLE), not "a terminal"."""
    if os.environ.get("TTY_COMPATIBLE") or "FORCE_COLOR" in os.environ:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return isatty is None or not isatty()
    except ValueError:  # a closed stream: rich says False too
        return True


class LazyConsole:
    """rich's stderr ``Console``, made on first use (or a given one). Off a terminal a run
    prints nothing until its summary, so rich is not imported before the first request."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console

    @property
    def is_terminal(self) -> bool:
        if self._console is None and plainly_not_terminal(sys.stderr):
            return False
        return self.get().is_terminal

    def get(self) -> Console:
        if self._console is None:
            from rich.console import Console  # noqa: PLC0415 - start-up: see the module doc

            self._console = Console(stderr=True)
        return self._console

    def print(self, text: str) -> None:
        self.get().print(text)


def _bar(console: Console) -> Progress:
    """The bar drawn on a terminal (rich's ``Progress``; imported only here)."""
    from rich.progress import (  # noqa: PLC0415 - start-up: see the module doc
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        Task,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text  # noqa: PLC0415

    class RateColumn(ProgressColumn):
        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f}/s" if speed else "-/s", style="progress.data.speed")

    return Progress(
        SpinnerColumn(finished_text=" "),
        TextColumn("judging"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.fields[stats]}", markup=False),  # judge names are text
        console=console,
    )


class RunningCost:
    """What the records so far cost, and what the session will cost at that rate.

    ``planned``: judgments planned per judge in this session. A judge's estimate is its cost
    per priced judgment so far times its judgments planned; the estimate is shown once every
    judge with work planned has answered (before that, a judge's rate is unknown).
    """

    def __init__(self, planned: Mapping[str, int]) -> None:
        self.planned = dict(planned)
        self.done: dict[str, int] = {}
        self.spent: dict[str, float] = {}  # priced judges: their cost so far
        self.priced: dict[str, int] = {}  # ... and how many of their records had a cost
        self.unpriced: set[str] = set()  # judges that answered without a cost: no price

    def add(self, record: JudgeRecord) -> None:
        judge = record.judge_name
        self.done[judge] = self.done.get(judge, 0) + 1
        if record.cost_usd is not None:
            self.spent[judge] = self.spent.get(judge, 0.0) + record.cost_usd
            self.priced[judge] = self.priced.get(judge, 0) + 1
        elif record.input_tokens is not None or record.output_tokens is not None:
            self.unpriced.add(judge)

    def estimate(self) -> float | None:
        """The session's cost at the priced judges' rates so far; None before every judge
        with work planned has answered, when no judge is priced, or when all is done."""
        answered = set(self.priced) | self.unpriced
        if not self.priced or any(n and judge not in answered for judge, n in self.planned.items()):
            return None
        if all(self.done.get(judge, 0) >= n for judge, n in self.planned.items()):
            return None  # nothing left to estimate: the cost so far is the cost
        return sum(
            self.spent[judge] / self.priced[judge] * max(self.planned.get(judge, 0), done)
            for judge, done in self.priced.items()
        )

    def text(self) -> str:
        """``$0.0123`` (``+ unpriced (judge x)``), then ``· est. $0.0456 by the end``."""
        spent = sum(self.spent.values()) if self.spent else None
        unpriced = sorted(self.unpriced - set(self.spent))
        now = format_cost(spent, unpriced)
        estimate = self.estimate()
        if estimate is None:
            return now
        return f"{now} · est. {format_cost(estimate, unpriced)} by the end"


# The counts beside the bar are rebuilt at most this often (rich redraws 10 times a second);
# formatting them for each of hundreds of records a second cost more than the bar itself.
_STATS_EVERY_S = 0.1


class RunProgress:
    """Counts finished records and shows them; a no-op display when not on a terminal."""

    def __init__(
        self,
        console: Console | LazyConsole | None,
        total: int,
        notes: Callable[[], str | None] | None = None,
        *,
        first_wait: str = "",
        planned: Mapping[str, int] | None = None,
    ) -> None:
        # Said (beside a spinner) until the first answer: loading a local model takes ~40 s.
        self._first_wait = first_wait
        self.parse_failures = 0
        self.provider_errors = 0
        self.tokens = 0
        self.costs = RunningCost(planned or {})
        self.batch_note = ""  # "batches 3 submitted / 1 ended · waiting on the provider"
        enabled = console is not None and console.is_terminal
        self._stats_at = -_STATS_EVERY_S
        # e.g. the rate limits learned from the provider; read only when something is drawn
        self._notes = notes if enabled else None
        # Off a terminal there is no bar: batch events, hours apart, get a line each instead.
        self._log_to = None if enabled else console
        # None off a terminal: no bar, and rich stays unloaded (a disabled one drew nothing).
        self._progress: Progress | None = None
        if console is not None and enabled:
            real = console.get() if isinstance(console, LazyConsole) else console
            self._progress = _bar(real)
            self._task = self._progress.add_task("judging", total=total, stats=self._stats())

    def _stats(self) -> str:
        if self._first_wait and not self.batch_note:  # batches say what they wait on
            return self._first_wait
        stats = (
            f"parse failures {self.parse_failures} · errors {self.provider_errors} · "
            f"{self.tokens:,} tok · {self.costs.text()}{self.batch_note}"
        )
        note = self._notes() if self._notes is not None else None
        return f"{stats} · {note}" if note else stats

    def batches(self, submitted: int, ended: int, waiting: bool) -> None:
        """Show provider batches; while they run the ETA is the provider's, not ours."""
        wait = " · waiting on the provider (up to 24 h)" if waiting and ended < submitted else ""
        self.batch_note = f" · batches {submitted} submitted / {ended} ended{wait}"
        if self._progress is not None:
            self._progress.update(self._task, stats=self._stats())
        if self._log_to is not None:
            self._log_to.print(f"batches: {submitted} submitted, {ended} ended{wait}")

    def advance(self, record: JudgeRecord) -> None:
        first = bool(self._first_wait)  # the wait's text goes at once
        self._first_wait = ""
        self.parse_failures += record.status == Status.UNPARSED
        self.provider_errors += record.status == Status.PROVIDER_ERROR
        self.tokens += (record.input_tokens or 0) + (record.output_tokens or 0)
        self.costs.add(record)
        if self._progress is None:
            return  # nothing is drawn: the counts are all there is
        now = time.monotonic()
        if first or now - self._stats_at >= _STATS_EVERY_S:
            self._stats_at = now
            self._progress.update(self._task, advance=1, stats=self._stats())
        else:
            self._progress.update(self._task, advance=1)

    def __enter__(self) -> RunProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.update(self._task, stats=self._stats())  # the final counts
            self._progress.stop()
