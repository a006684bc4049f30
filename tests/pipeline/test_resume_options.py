"""A run's own options (``--limit``, engine, batch ...) are recorded in its manifest: every
resume command is built from them, and ``--resume DIR`` carries the run on with them rather
than with what the resuming command line happens to leave out (issue 31, item 2)."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chaos.helpers import CLI, run_cli
from jurybox.cli import main
from jurybox.config import load_config
from jurybox.errors import ConfigError
from jurybox.io.datasets import load_dataset
from jurybox.pipeline import plan_units
from jurybox.pipeline.options import (
    RunOptions,
    recorded_options,
    resume_command,
    resumed_options,
)

from .helpers import fake_judge, write_config, write_dataset

ITEMS = 12


def _cli(*args: str | Path) -> Any:
    return CliRunner().invoke(main, [str(arg) for arg in args], catch_exceptions=False)


def _manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


def units_of(config: Path, items: int) -> set[str]:
    """The keys a run of the config's first ``items`` items plans."""
    loaded = load_config(config)
    dataset = load_dataset(loaded.resolve(loaded.paths.dataset), loaded.dataset)
    return {unit.key for unit in plan_units(loaded, dataset[:items])}


def _keys(folder: Path) -> list[str]:
    lines = (folder / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["key"] for line in lines]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    dataset = write_dataset(tmp_path / "items.jsonl", ITEMS)
    return write_config(
        tmp_path / "run.yaml", dataset, tmp_path / "out", judges={"j1": fake_judge()}
    )


def test_the_manifest_records_the_options_and_a_resume_keeps_the_limit(
    config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = _cli("run", config, "--limit", "3")
    assert first.exit_code == 0, first.output
    recorded = _manifest(out)["options"]
    assert recorded["limit"] == 3 and recorded["engine"] == "local" and recorded["batch"] is False
    assert recorded["config_path"] == str(config) and recorded["output_dir"] == str(out)
    planned = _manifest(out)["units_planned"]
    assert planned == len(units_of(config, 3))

    again = _cli("run", config, "--resume", out)  # no --limit: the run's own 3 items
    assert again.exit_code == 0, again.output
    assert _manifest(out)["units_planned"] == planned
    assert "0 judged now" in again.output
    assert set(_keys(out)) == units_of(config, 3)


def test_a_resume_may_extend_the_limit_but_not_shrink_or_drop_it(
    config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert _cli("run", config, "--limit", "3").exit_code == 0
    before = (out / "judgments.jsonl").read_bytes()
    shrink = _cli("run", config, "--resume", out, "--limit", "2")
    assert shrink.exit_code == 2
    assert "--limit 2" in shrink.output and "--limit 3" in shrink.output
    assert (out / "judgments.jsonl").read_bytes() == before, "a refused resume changed the file"

    grow = _cli("run", config, "--resume", out, "--limit", "5")
    assert grow.exit_code == 0, grow.output
    assert set(_keys(out)) == units_of(config, 5)
    assert _manifest(out)["options"]["limit"] == 5


def test_a_limit_on_the_resume_of_a_run_of_every_item_is_refused(
    config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert _cli("run", config).exit_code == 0
    refused = _cli("run", config, "--resume", out, "--limit", "4")
    assert refused.exit_code == 2
    assert "--limit 4" in refused.output and "every item" in refused.output


def test_the_already_holds_a_run_error_names_the_runs_own_resume_command(
    config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    assert _cli("run", config, "--limit", "3").exit_code == 0
    again = _cli("run", config)
    assert again.exit_code == 2
    assert f"jurybox run {config} --resume {out} --limit 3" in " ".join(again.output.split())


def test_provider_errors_are_followed_by_the_command_that_redoes_them(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 6)
    flaky = fake_judge(error_rate=0.5, seed=3)
    config = write_config(
        tmp_path / "run.yaml",
        dataset,
        tmp_path / "out",
        judges={"j1": flaky},
        pipeline={"max_retries": 0},
    )
    result = _cli("run", config, "--limit", "4")
    assert "provider_error records are redone by:" in result.output
    command = f"jurybox run {config} --resume {tmp_path / 'out'} --limit 4"
    assert command in " ".join(result.output.split())


# --- the rules themselves -----------------------------------------------------------------------

RECORDED = RunOptions("a.yaml", "runs/a", limit=10, engine="ray", ray_address="auto", batch=True)
GIVEN = RunOptions("b.yaml", "runs/a")


def test_what_the_command_line_leaves_out_is_the_runs_own() -> None:
    options = resumed_options(RECORDED, GIVEN, engine_given=False)
    assert options == RunOptions(
        "b.yaml", "runs/a", limit=10, engine="ray", ray_address="auto", batch=True
    )
    assert resume_command(options) == (
        "jurybox run b.yaml --resume runs/a --limit 10 --batch --engine ray --ray-address auto"
    )


def test_the_engine_and_fallback_may_change_and_a_batch_run_stays_one() -> None:
    local = RunOptions("b.yaml", "runs/a", batch_fallback="sync")
    options = resumed_options(RECORDED, local, engine_given=True)
    assert (options.engine, options.ray_address) == ("local", None)
    assert options.batch and options.batch_fallback == "sync"
    on_ray = resumed_options(RECORDED, RunOptions(engine="ray"), engine_given=True)
    assert on_ray.ray_address == "auto"  # the same engine: the same cluster


def test_a_shrinking_limit_names_both_values() -> None:
    with pytest.raises(ConfigError, match=r"--limit 9 contradicts the run's recorded --limit 10"):
        resumed_options(RECORDED, RunOptions(limit=9), engine_given=False)
    assert resumed_options(RECORDED, RunOptions(limit=10), engine_given=False).limit == 10


def test_a_manifest_without_options_leaves_the_command_line_as_it_is() -> None:
    assert recorded_options(None) is None
    assert recorded_options({"run_id": "r", "batch": True}) is None
    assert resumed_options(None, GIVEN, engine_given=False) == GIVEN
    written = recorded_options({"options": RECORDED.recorded()})
    assert written == RECORDED


def test_a_config_built_in_python_is_named_as_a_placeholder() -> None:
    command = resume_command(RunOptions("<config>", "out dir"))
    assert command == "jurybox run CONFIG --resume 'out dir'"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_command_printed_after_sigterm_on_a_limited_run_plans_its_items(
    tmp_path: Path,
) -> None:
    """SIGTERM a ``--limit 10`` run of 30 items; the command it prints, run as printed, plans
    and judges the 10 items' units, no more."""
    dataset = write_dataset(tmp_path / "items.jsonl", 30)
    out = tmp_path / "out"
    slow = fake_judge(latency_ms=400)
    config = write_config(
        tmp_path / "run.yaml", dataset, out, judges={"j1": slow}, pipeline={"concurrency": 2}
    )
    process = subprocess.Popen(
        [*CLI, "run", str(config), "--limit", "10"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while _lines(out) < 4:
            assert process.poll() is None and time.monotonic() < deadline, "no records"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 128 + signal.SIGTERM, stderr
    printed = stderr.split("Resume with:", 1)[1].split()
    command = shlex.split(" ".join(printed))
    assert command[:2] == ["jurybox", "run"] and "--limit" in command
    resumed = run_cli(command[1:])
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    wanted = units_of(config, 10)
    assert _manifest(out)["units_planned"] == len(wanted)
    keys = _keys(out)
    assert len(keys) == len(set(keys)) and set(keys) == wanted


def _lines(folder: Path) -> int:
    path = folder / "judgments.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0
