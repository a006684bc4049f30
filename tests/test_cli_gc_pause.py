"""`handle_errors(keeps_gc_paused=...)`: which commands end the start-up GC pause as they start.

Every command but ``run`` resumes the collector on entry; ``run`` keeps it paused until its modules
are imported and then freezes them (``cli.resume_gc(freeze=True)``). The choice is an explicit
option of the decorator, not the command's name.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from jurybox import cli


@pytest.fixture
def paused_gc() -> Iterator[None]:
    """The state `python -m jurybox` starts a command in: collector off, pause recorded."""
    was_enabled = gc.isenabled()
    gc.disable()
    cli.GC_STATE["paused"] = True
    try:
        yield
    finally:
        cli.GC_STATE["paused"] = False
        if was_enabled:
            gc.enable()


def _seen_at_entry(**options: bool) -> dict[str, bool]:
    seen: dict[str, bool] = {}

    @click.command()
    @cli.handle_errors(**options) if options else cli.handle_errors
    def command() -> None:
        seen["gc_enabled"] = gc.isenabled()
        seen["paused"] = cli.GC_STATE["paused"]

    done = CliRunner().invoke(command, [])
    assert done.exit_code == 0, done.output
    return seen


@pytest.mark.usefixtures("paused_gc")
def test_a_command_resumes_the_gc_as_it_starts() -> None:
    assert _seen_at_entry() == {"gc_enabled": True, "paused": False}
    assert _seen_at_entry(keeps_gc_paused=False) == {"gc_enabled": True, "paused": False}


@pytest.mark.usefixtures("paused_gc")
def test_a_command_that_keeps_the_pause_finds_the_gc_still_paused() -> None:
    assert _seen_at_entry(keeps_gc_paused=True) == {"gc_enabled": False, "paused": True}


@pytest.mark.usefixtures("paused_gc")
def test_errors_are_still_handled_with_the_option() -> None:
    @click.command()
    @cli.handle_errors(keeps_gc_paused=True)
    def failing() -> None:
        from jurybox.errors import ConfigError

        raise ConfigError("bad key", field="x")

    done = CliRunner().invoke(failing, [])
    assert done.exit_code == cli.EXIT_BAD_INPUT
    assert "error: " in done.output and "bad key" in done.output


def test_only_run_keeps_the_pause() -> None:
    """Which of the real commands keep the pause: `run` alone (it resumes after its imports)."""
    keeping = sorted(
        name
        for name, command in cli.main.commands.items()
        if getattr(command.callback, "keeps_gc_paused", False)
    )
    assert keeping == ["run"]
