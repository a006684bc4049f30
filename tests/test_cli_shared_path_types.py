"""`jurybox.cli` shares three ``click.Path`` types between its commands (start-up, issue #19).

Each parameter's help line and its error for a wrong kind of path are the same as with a
``click.Path`` of its own, made with the same settings, as the CLI had before.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from jurybox.cli import main


def _path_params() -> list[tuple[str, click.Parameter]]:
    return [
        (name, param)
        for name, command in sorted(main.commands.items())
        for param in command.params
        if isinstance(param.type, click.Path)
    ]


def _own_type(shared: click.Path) -> click.Path:
    return click.Path(
        exists=shared.exists,
        file_okay=shared.file_okay,
        dir_okay=shared.dir_okay,
        path_type=shared.type,
    )


def test_every_path_parameter_uses_one_of_the_shared_types() -> None:
    kinds = {
        (p.type.file_okay, p.type.dir_okay, p.type.type)  # type: ignore[attr-defined]
        for _, p in _path_params()
    }
    assert kinds == {(True, False, Path), (False, True, Path), (True, True, Path)}
    assert len({id(p.type) for _, p in _path_params()}) == 3
    assert len(_path_params()) >= 20


@pytest.mark.parametrize(("command", "param"), _path_params(), ids=lambda x: getattr(x, "name", x))
def test_help_and_errors_as_with_a_type_of_its_own(command: str, param: click.Parameter) -> None:
    shared = param.type
    assert isinstance(shared, click.Path)
    ctx = click.Context(main.commands[command])
    wrong = "/" if not shared.dir_okay else __file__  # a folder where a file is wanted, or back
    with_shared = param.get_help_record(ctx), _failure(shared, wrong, param, ctx)
    param.type = _own_type(shared)
    try:
        assert (param.get_help_record(ctx), _failure(param.type, wrong, param, ctx)) == with_shared
    finally:
        param.type = shared


def _failure(kind: click.Path, value: str, param: click.Parameter, ctx: click.Context) -> str:
    try:
        kind.convert(value, param, ctx)
    except click.BadParameter as exc:
        return exc.format_message()
    return "accepted"


def test_run_help_unchanged_in_the_parts_that_name_paths() -> None:
    text = CliRunner().invoke(main, ["run", "--help"]).output
    assert "Usage: main run [OPTIONS] CONFIG" in text
    assert "--output-dir DIRECTORY" in text and "--resume DIRECTORY" in text
