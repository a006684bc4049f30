"""Builders shared by the hardening tests: a run folder with work left, the CLI as a process."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from jurybox.cli import main
from jurybox.config import load_config
from jurybox.io.judgments import JUDGMENTS_FILE
from jurybox.pipeline import run_async
from jurybox.pipeline.runner import Runtime
from jurybox.providers.fake import FakeProvider
from pipeline.helpers import fake_judge, write_config, write_dataset

CLI = [sys.executable, "-m", "jurybox"]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def partial_run(
    tmp_path: Path, *, items: int, keep: int, latency_ms: float, concurrency: int = 1
) -> tuple[Path, Path, int]:
    """A finished run cut back to its first ``keep`` records, and its config (whose fake judge
    answers after ``latency_ms``): (config path, run folder, units planned)."""
    dataset = write_dataset(tmp_path / "items.jsonl", items)
    out = tmp_path / "run"
    judge = fake_judge(latency_ms=latency_ms)
    config_path = write_config(
        tmp_path / "run.yaml",
        dataset,
        out,
        judges={"j1": judge},
        pipeline={"concurrency": concurrency, "cache": False},
    )
    # The seed run is made in-process with an instant provider; only the resumes are slow.
    runtime = Runtime(providers={"j1": FakeProvider("fake-model")})
    summary = asyncio.run(run_async(load_config(config_path), output_dir=out, runtime=runtime))
    judgments = out / JUDGMENTS_FILE
    kept = judgments.read_text(encoding="utf-8").splitlines(keepends=True)[:keep]
    judgments.write_text("".join(kept), encoding="utf-8")
    return config_path, out, summary.units_total


def copy_run(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def start_cli(*args: str | Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def fake_run(tmp_path: Path, *, items: int = 3) -> Path:
    """A finished run of the instant fake judge in ``tmp_path/run`` (its config is
    ``tmp_path/run.yaml``, its dataset ``tmp_path/items.jsonl``): the run folder."""
    dataset = write_dataset(tmp_path / "items.jsonl", items)
    config_path = write_config(
        tmp_path / "run.yaml",
        dataset,
        tmp_path / "run",
        judges={"j1": fake_judge()},
        pipeline={"test_retest_count": 0, "cache": False},
    )
    summary = asyncio.run(run_async(load_config(config_path), output_dir=tmp_path / "run"))
    return summary.output_dir


def invoke(*args: str | Path) -> Result:
    """The CLI in this process (click's runner), exceptions not caught."""
    return CliRunner().invoke(main, [str(arg) for arg in args], catch_exceptions=False)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (symlinks as their target's bytes) by relative path."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }
