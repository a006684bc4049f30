"""The batch side of the CLI: ``run --batch --dry-run`` (plan and halved cost) and
``jurybox batches DIR [--cancel]``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chaos.helpers import write_config, write_items
from jurybox.cli import main
from jurybox.config import config_from_mapping
from jurybox.pipeline import run_async
from jurybox.pipeline.batch import BATCH_LOG_FILE, read_log

from .conftest import batch_config, judge
from .wire_batch import BatchWire


def _cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_dry_run_with_batch_shows_the_plan_and_half_the_cost(
    tmp_path: Path, batch_wire: Any
) -> None:
    wire: BatchWire = batch_wire()
    dataset = write_items(tmp_path / "items.jsonl", 4)
    judges = {"oa": judge(wire, "openai"), "scripted": {"provider": "fake"}}
    config = batch_config(dataset, tmp_path / "out", judges, batch=False)
    path = write_config(tmp_path / "config.yaml", config)
    plain = _cli("run", str(path), "--dry-run")
    batched = _cli("run", str(path), "--dry-run", "--batch")
    assert plain.exit_code == 0 and batched.exit_code == 0, batched.output
    assert "batch plan" not in plain.output
    assert (
        "batch plan" in batched.output and "synchronous (no batch API): scripted" in batched.output
    )
    sync_cost = _cost_of(plain.output, "oa")
    assert _cost_of(batched.output, "oa") == pytest.approx(sync_cost / 2, abs=1e-4)  # 4 decimals
    assert wire.requests == 0


def _cost_of(output: str, judge_name: str) -> float:
    """The last dollar figure on the dry-run table row of ``judge_name``."""
    rows = [line for line in output.splitlines() if line.strip("│ ").startswith(judge_name)]
    return float(rows[-1].rsplit("$", 1)[1].split()[0])


def test_batches_lists_and_cancels_a_run_in_flight(tmp_path: Path, batch_wire: Any) -> None:
    wire: BatchWire = batch_wire(polls_to_end=10**9)
    dataset = write_items(tmp_path / "items.jsonl", 3)
    out = tmp_path / "out"
    config = batch_config(dataset, out, {"oa": judge(wire, "openai")})

    async def submit_then_stop() -> None:
        # The run waits on its batch forever (the server never ends it): stop it once submitted.
        task = asyncio.create_task(run_async(config_from_mapping(config), output_dir=out))
        while not any(e.batch_id for e in read_log(out / BATCH_LOG_FILE).values()):
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(submit_then_stop())
    listed = _cli("batches", str(out))
    assert listed.exit_code == 0, listed.output
    assert "batch_0000" in listed.output and "in_progress" in listed.output
    cancelled = _cli("batches", str(out), "--cancel")
    assert cancelled.exit_code == 0 and wire.batches["batch_0000"].cancelled
    assert "cancelled" in cancelled.output


def test_batches_refuses_a_folder_without_a_batch_log(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["batches", str(tmp_path)])
    assert result.exit_code == 2 and "batches.jsonl" in result.output
