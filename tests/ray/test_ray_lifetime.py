"""A Ray run's stop and kill: SIGTERM stops it in order and prints a resume command that carries
it on on Ray with its own ``--limit`` (issue 31, item 2); after SIGKILL of the driver no
jurybox worker process of the run outlives it by more than 30 s (issue 31, item 12).

The driver is the real CLI in a subprocess; its Ray is the shared local one (``ray_address``)
or one it starts itself. The run's worker processes (``ray::UnitJudge``, ``ray::_LimiterState``)
are found as new processes under this test process (the shared Ray's raylet is its child) or
under the driver (the Ray it started).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from chaos.conftest import StartServer
from chaos.helpers import CLI, count_lines, run_cli, run_config, write_config, write_items
from jurybox.config import load_config
from jurybox.io.datasets import load_dataset
from jurybox.pipeline import plan_units

pytest.importorskip("ray", reason="the `ray` extra is not installed (pip install 'jurybox[ray]')")
psutil = pytest.importorskip("psutil", reason="psutil (a Ray dependency) is not installed")

pytestmark = pytest.mark.slow

WORKERS = ("ray::UnitJudge", "ray::_LimiterState")  # what the Ray engine starts for a run
GONE_WITHIN_S = 30.0


def _config(tmp_path: Path, url: str, items: int = 30) -> Path:
    dataset = write_items(tmp_path / "items.jsonl", items)
    judge = {"provider": "openai_compatible", "concurrency": 4}
    data = run_config(
        dataset, tmp_path / "run", url, judge=judge, pipeline={"test_retest_count": 0}
    )
    return write_config(tmp_path / "run.yaml", data)


def _driver(args: Iterable[str], *, own_ray: bool = False) -> subprocess.Popen[str]:
    env = dict(os.environ)
    if own_ray:  # never the shared Ray: the driver starts one of its own
        env.pop("RAY_ADDRESS", None)
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )


def _wait(condition: Callable[[], bool], driver: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        if driver.poll() is not None:
            raise AssertionError(f"the run ended before {what}: {driver.communicate()[1][-3000:]}")
        assert time.monotonic() < deadline, f"never reached: {what}"
        time.sleep(0.05)


def _workers(root: int) -> dict[int, Any]:
    """The Ray engine's worker processes under ``root``, by pid."""
    found = {}
    for proc in psutil.Process(root).children(recursive=True):
        try:
            name = " ".join(proc.cmdline()) or proc.name()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if name.startswith(WORKERS):
            found[proc.pid] = proc
    return found


def _alive(procs: Iterable[Any]) -> list[Any]:
    """Still running (a zombie, its exit not yet reaped, is gone: it runs no code)."""
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.NoSuchProcess:
            continue
    return alive


def _kill_and_watch(driver: subprocess.Popen[str], workers: dict[int, Any]) -> None:
    driver.send_signal(signal.SIGKILL)
    driver.wait(30)
    deadline = time.monotonic() + GONE_WITHIN_S
    while _alive(workers.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [" ".join(proc.cmdline()) for proc in _alive(workers.values())]
    assert not left, f"jurybox workers alive {GONE_WITHIN_S:g} s after the driver's SIGKILL: {left}"


def _units_of(config: Path, items: int) -> set[str]:
    loaded = load_config(config)
    dataset = load_dataset(loaded.resolve(loaded.paths.dataset), loaded.dataset)
    return {unit.key for unit in plan_units(loaded, dataset[:items])}


def test_sigterm_on_ray_prints_a_resume_command_that_carries_the_run_on_on_ray(
    tmp_path: Path, ray_address: str, wire_server: StartServer
) -> None:
    server = wire_server(latency_s=0.3, seed=4)
    config = _config(tmp_path, server.url)
    run_dir = tmp_path / "run"
    on_ray = ["--engine", "ray", "--ray-address", ray_address]
    driver = _driver(["run", str(config), "--limit", "10", *on_ray])
    try:
        _wait(lambda: count_lines(run_dir / "judgments.jsonl") >= 2, driver, "two records")
        driver.send_signal(signal.SIGTERM)
        _, stderr = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    command = shlex.split(stderr.split("Resume with:", 1)[1].strip().splitlines()[0])
    assert command[:2] == ["jurybox", "run"]
    assert {"--limit", "10", "--engine", "ray", "--ray-address", ray_address} <= set(command)

    resumed = run_cli(command[1:], timeout=150)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["options"]["engine"] == "ray"
    rows = [json.loads(line) for line in (run_dir / "judgments.jsonl").read_text().splitlines()]
    assert sorted(row["key"] for row in rows) == sorted(_units_of(config, 10))

    # A bare --resume (no engine, no limit) takes both from the manifest: on Ray, 10 items.
    again = run_cli(["run", str(config), "--resume", str(run_dir)], timeout=150)
    assert again.returncode == 0, again.stderr[-3000:]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["options"]["engine"] == "ray" and manifest["options"]["limit"] == 10
    assert manifest["options"]["ray_address"] == ray_address
    assert manifest["units_planned"] == len(_units_of(config, 10))


def _killed_mid_run(
    tmp_path: Path,
    args: list[str],
    workers_of: Callable[[subprocess.Popen[str]], dict[int, Any]],
    *,
    own_ray: bool = False,
) -> None:
    """Start the driver, find the run's workers once it writes records, SIGKILL it and watch
    them go."""
    driver = _driver(args, own_ray=own_ray)
    try:
        _wait(lambda: count_lines(tmp_path / "run" / "judgments.jsonl") >= 2, driver, "records")
        workers = workers_of(driver)
        assert workers, "no worker of the run found: the test would prove nothing"
        _kill_and_watch(driver, workers)
    finally:
        if driver.poll() is None:
            driver.kill()
        assert driver.stderr is not None
        driver.stderr.close()


def test_the_workers_of_a_killed_driver_on_a_shared_ray_are_gone_within_30_s(
    tmp_path: Path, ray_address: str, wire_server: StartServer
) -> None:
    server = wire_server(latency_s=0.3, seed=5)
    config = _config(tmp_path, server.url)
    before = set(_workers(os.getpid()))  # the shared Ray's raylet is this process's child

    def new_workers(_: subprocess.Popen[str]) -> dict[int, Any]:
        return {pid: p for pid, p in _workers(os.getpid()).items() if pid not in before}

    args = ["run", str(config), "--engine", "ray", "--ray-address", ray_address]
    _killed_mid_run(tmp_path, args, new_workers)


def test_the_workers_of_a_killed_driver_on_its_own_ray_are_gone_within_30_s(
    tmp_path: Path, wire_server: StartServer
) -> None:
    """Ray's own agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``) may stay up to a
    minute longer by Ray's design (docs/engines.md); no jurybox code runs in them."""
    server = wire_server(latency_s=0.3, seed=6)
    config = _config(tmp_path, server.url)
    args = ["run", str(config), "--engine", "ray"]
    _killed_mid_run(tmp_path, args, lambda driver: _workers(driver.pid), own_ray=True)
