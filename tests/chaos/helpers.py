"""Builders and checks shared by the chaos tests."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from jurybox.config import RunConfig, load_config
from jurybox.io.datasets import load_dataset
from jurybox.pipeline import plan_units

# `python -m jurybox.cli` runs nothing (cli.py has no __main__ guard), so call main() directly.
CLI = [sys.executable, "-c", "from jurybox.cli import main; main()"]
ALLOWED_END_STATES = {"ok", "unparsed", "provider_error"}


def write_items(path: Path, n: int) -> Path:
    """Two-arm items with responses of a few sentences."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            row = {
                "id": f"q{i:04d}",
                "question": f"Question {i}: which answer handles the situation better?",
                "responses": {
                    "control": f"Control answer {i}. " + "It explains the steps. " * (1 + i % 3),
                    "treatment": f"Treatment answer {i}. " + "It cites the rule. " * (2 + i % 2),
                },
            }
            handle.write(json.dumps(row) + "\n")
    return path


def write_marked_items(
    path: Path, n: int, *, labelled: int | None = None, hard: Sequence[int] = ()
) -> Path:
    """Two-arm items for the wire server's scripted judges (``pick="marked"``): the better
    response (treatment on two items in three) carries ``[GOOD]``, the first ``labelled`` items
    (all by default) have it as their gold ``human.preferred_arm``, and the questions of the
    items numbered in ``hard`` carry ``[HARD]`` (``unsure_mark``)."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            gold = "treatment" if i % 3 else "control"
            responses = {"control": f"Control answer {i}.", "treatment": f"Treatment answer {i}."}
            responses[gold] += " [GOOD]"
            row: dict[str, Any] = {
                "id": f"q{i:04d}",
                "question": f"Question {i}: which answer is better?" + (" [HARD]" * (i in hard)),
                "responses": responses,
            }
            if labelled is None or i < labelled:
                row["human"] = {"preferred_arm": gold}
            handle.write(json.dumps(row) + "\n")
    return path


def run_config(
    dataset: Path,
    output_dir: Path,
    url: str,
    *,
    judge: dict[str, Any] | None = None,
    pipeline: dict[str, Any] | None = None,
    mode: str = "pairwise",
) -> dict[str, Any]:
    """A config mapping with one ``openai`` judge pointed at the wire server at ``url``."""
    return {
        "judges": {
            "wire": {
                "provider": "openai",
                "model": "wire-judge",
                "base_url": url,
                "api_key_env": None,
                "timeout_s": 30.0,
                **(judge or {}),
            }
        },
        "task": {"mode": mode},
        "pipeline": {"test_retest_count": 5, "retry_base_s": 0.01, **(pipeline or {})},
        "paths": {"dataset": str(dataset), "output_dir": str(output_dir)},
    }


def write_config(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def planned_keys(config: RunConfig | Path) -> list[str]:
    """The keys ``plan_units`` gives for a config (the ground truth of what a run must hold)."""
    if isinstance(config, Path):
        config = load_config(config)
    items = load_dataset(config.resolve(config.paths.dataset), config.dataset)
    return [unit.key for unit in plan_units(config, items)]


def split_jsonl(path: Path) -> tuple[list[dict[str, Any]], bytes]:
    """(parsed complete lines, torn tail). Every complete line must be a JSON object."""
    if not path.exists():
        return [], b""
    raw = path.read_bytes()
    complete, newline, torn = raw.rpartition(b"\n")
    if not newline:
        return [], raw
    rows = []
    for number, line in enumerate(complete.split(b"\n"), start=1):
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            raise AssertionError(f"{path}:{number} is not valid JSON: {line[:120]!r}") from exc
    return rows, torn


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def check_manifest(path: Path) -> dict[str, Any] | None:
    """A manifest must be absent or valid JSON (it is replaced atomically)."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data.get("run_id"), f"{path} lacks a run_id"
    return data


def run_cli(
    args: list[str], *, timeout: float = 120.0, preexec_fn: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=preexec_fn,
    )


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def kill_when(
    args: list[str],
    ready: Callable[[], bool],
    command: Sequence[str] = CLI,
    timeout_s: float = 60.0,
) -> None:
    """Start the CLI (or ``command``) with ``args``, wait for ``ready``, then SIGKILL it."""
    process = subprocess.Popen([*command, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if process.poll() is not None:
                _, err = process.communicate()
                raise AssertionError(f"the run ended before the kill: {err.decode()[-2000:]}")
            assert time.monotonic() < deadline, "never reached the kill point"
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(30)
        if process.stderr is not None:
            process.stderr.close()
