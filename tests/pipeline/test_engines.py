"""``--engine`` / ``--ray-address`` on the command line, without needing Ray itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.errors import ConfigError
from jurybox.pipeline.engines import open_engine
from jurybox.pipeline.options import RunOptions, resume_command


def test_local_is_the_runner_itself() -> None:
    assert open_engine("local") is None
    with pytest.raises(ConfigError, match="unknown engine 'spark'"):
        open_engine("spark")


def test_a_ray_address_without_the_ray_engine_is_refused_before_any_call(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    out = tmp_path / "out"
    args = ["run", str(examples / "pairwise.yaml"), "--output-dir", str(out)]
    result = CliRunner().invoke(main, [*args, "--ray-address", "auto"])
    assert result.exit_code == 2
    assert "--ray-address needs --engine ray" in result.output
    assert not out.exists()


def test_run_help_names_the_engines() -> None:
    result = CliRunner().invoke(main, ["run", "--help"])
    assert result.exit_code == 0
    assert "--engine [local|ray]" in result.output and "--ray-address ADDR" in result.output


@pytest.mark.parametrize(
    ("engine", "address", "tail"),
    [
        ("local", None, ""),
        ("ray", None, " --engine ray"),
        ("ray", "ray://head node:10001", " --engine ray --ray-address 'ray://head node:10001'"),
    ],
)
def test_the_resume_hint_names_the_engine_the_run_was_on(
    tmp_path: Path, engine: str, address: str | None, tail: str
) -> None:
    options = RunOptions("cfg.yaml", str(tmp_path / "my run"), engine=engine, ray_address=address)
    command = resume_command(options)
    assert command == f"jurybox run cfg.yaml --resume '{tmp_path / 'my run'}'{tail}"
