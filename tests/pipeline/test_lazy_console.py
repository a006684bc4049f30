"""``LazyConsole`` (start-up, issue #19): off a terminal a run makes no rich Console before it
needs to print, and says "not a terminal" only where rich would say so too."""

from __future__ import annotations

import io
import itertools

import pytest
from rich.console import Console

from jurybox.pipeline.progress import LazyConsole, RunProgress, plainly_not_terminal


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _closed() -> io.StringIO:
    stream = io.StringIO()
    stream.close()
    return stream


ENVIRONMENTS = [
    {},
    {"FORCE_COLOR": "1"},
    {"FORCE_COLOR": ""},
    {"TTY_COMPATIBLE": "0"},
    {"TTY_COMPATIBLE": "1"},
    {"TTY_COMPATIBLE": "1", "FORCE_COLOR": ""},
]


@pytest.mark.parametrize(
    ("environment", "make_stream"),
    list(itertools.product(ENVIRONMENTS, [io.StringIO, _Tty, _closed])),
)
def test_plainly_not_terminal_only_where_rich_agrees(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], make_stream: type[io.StringIO]
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    stream = make_stream()
    if plainly_not_terminal(stream):
        assert not Console(file=stream).is_terminal
    if not environment and make_stream is io.StringIO:
        assert plainly_not_terminal(stream)  # the benchmark's case: piped, nothing forced


def test_lazy_console_makes_rich_s_stderr_console_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # not plainly off a terminal: rich decides
    lazy = LazyConsole()
    assert lazy.is_terminal is Console(stderr=True).is_terminal
    console = lazy.get()
    assert console is lazy.get() and console.stderr


def test_a_given_console_is_used_as_it_is() -> None:
    screen = io.StringIO()
    given = Console(file=screen, force_terminal=False, width=80)
    lazy = LazyConsole(given)
    assert lazy.get() is given and lazy.is_terminal is False
    with RunProgress(lazy, 2) as progress:
        progress.batches(1, 0, True)  # off a terminal, batch events are printed as lines
    assert screen.getvalue() == (
        "batches: 1 submitted, 0 ended · waiting on the provider (up to 24 h)\n"
    )
