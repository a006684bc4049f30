"""Time from process start to the first HTTP request of ``jurybox run`` (issue 19: <= 0.3 s).

A ``wire_server.WireServer`` (OpenAI Chat Completions wire format, valid judge JSON) listens on
127.0.0.1 on a thread of this process; a subclass notes the wall-clock time (``time.time()``) at
which each run's first ``/chat/completions`` request arrives. (``wire_server.py`` run as its own
process cannot report that time, and the server is idle while the child starts, so the thread
costs the child nothing.) Each try spawns a fresh ``python -m jurybox run cfg.yaml``: one
``openai_compatible`` judge with ``api_key_env: null``, a tiny pairwise dataset, cache off, a new
output folder, and measures spawn -> first request, so Python's own start is included.

It prints, with the load average: spawn -> first request (best and median of ``--tries``), the
whole run's wall, the import time of ``python -X importtime -m jurybox run cfg.yaml --dry-run``
(sum of the top-level modules' cumulative times, best of the tries) and how many modules it
imports, and the wall of ``jurybox --help`` and ``jurybox run --help``.

Usage: ``python bench/startup.py [--tries 10] [--items 4]``. Run it with the venv's python and
``PYTHONPATH=src``. It is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wire_server import Response, WireServer

SRC = Path(__file__).resolve().parents[1] / "src"


class FirstArrivalServer(WireServer):
    """A wire server that keeps the arrival time of the first chat request since ``rearm``."""

    def __init__(self) -> None:
        super().__init__()
        self.first_arrival: float | None = None
        self.arrived = threading.Event()

    def rearm(self) -> None:
        self.first_arrival = None
        self.arrived.clear()

    async def _chat(self, raw: bytes, arrived: float) -> Response | None:
        if self.first_arrival is None:
            # The body was read just now; its head arrived microseconds earlier.
            self.first_arrival = time.time()
            self.arrived.set()
        return await super()._chat(raw, arrived)


class ServerThread:
    """The server on a daemon thread with its own event loop."""

    def __init__(self) -> None:
        self.server = FirstArrivalServer()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> FirstArrivalServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result(10)
        return self.server

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def write_inputs(folder: Path, url: str, items: int) -> Path:
    """A pairwise dataset of ``items`` items and a config with one keyless local judge."""
    rows = (
        {"id": f"q{n}", "question": f"Question {n}?", "responses": {"control": "a", "treatment": "b"}}
        for n in range(items)
    )
    (folder / "items.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    config = {
        "judges": {
            "wire": {
                "provider": "openai_compatible",
                "model": "wire-judge",
                "base_url": url,
                "api_key_env": None,
            }
        },
        "task": {"mode": "pairwise"},
        "pipeline": {"cache": False, "test_retest_count": 0},
        "paths": {"dataset": "items.jsonl", "output_dir": "out"},
    }
    path = folder / "run.yaml"
    path.write_text(json.dumps(config), "utf-8")  # JSON is YAML
    return path


def child_env() -> dict[str, str]:
    """This tree's source first; bytecode is written and read, as for an installed package."""
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH", "")]))
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else every start compiles jurybox from source
    return env


def time_first_request(
    server: FirstArrivalServer, config: Path, output: Path
) -> tuple[float, float]:
    """(spawn -> first request, spawn -> exit) of one ``jurybox run``, in seconds."""
    server.rearm()
    command = [sys.executable, "-m", "jurybox", "run", str(config), "--output-dir", str(output)]
    started = time.time()
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, timeout=120)
    ended = time.time()
    if done.returncode != 0 or server.first_arrival is None:
        raise RuntimeError(f"jurybox run failed ({done.returncode}): {done.stderr[-2000:]}")
    return server.first_arrival - started, ended - started


def import_profile(config: Path) -> tuple[float, int]:
    """(top-level import seconds, modules imported) of ``jurybox run CONFIG --dry-run``."""
    command = [sys.executable, "-X", "importtime", "-m", "jurybox", "run", str(config), "--dry-run"]
    done = subprocess.run(command, env=child_env(), capture_output=True, text=True, timeout=120)
    total_us, modules = 0, 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        modules += 1
        if not name.startswith(" " * 2):  # one space of padding: a top-level import
            total_us += int(cumulative)
    return total_us / 1e6, modules


def wall_of(args: Sequence[str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=child_env(), capture_output=True, check=True, timeout=60)
    return time.perf_counter() - started


def best_and_median(measure: Callable[[], float], tries: int) -> tuple[float, float]:
    values = [measure() for _ in range(tries)]
    return min(values), statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--items", type=int, default=4)
    args = parser.parse_args()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}; {platform.platform()}; {os.cpu_count()} CPUs")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp, ServerThread() as server:
        config = write_inputs(Path(tmp), server.url, args.items)
        time_first_request(server, config, Path(tmp) / "warm-up")  # writes the bytecode
        firsts, walls = [], []
        for n in range(args.tries):
            first, wall = time_first_request(server, config, Path(tmp) / f"out{n}")
            firsts.append(first)
            walls.append(wall)
        imports = [import_profile(config) for _ in range(args.tries)]
        python = sys.executable
        rows: dict[str, Any] = {
            "spawn -> first request": (min(firsts), statistics.median(firsts)),
            "whole run (wall)": (min(walls), statistics.median(walls)),
            "import time (-X importtime, top level)": (
                min(t for t, _ in imports),
                statistics.median(t for t, _ in imports),
            ),
            "python -c pass": best_and_median(lambda: wall_of([python, "-c", "pass"]), args.tries),
            "jurybox --help": best_and_median(
                lambda: wall_of([python, "-m", "jurybox", "--help"]), args.tries
            ),
            "jurybox run --help": best_and_median(
                lambda: wall_of([python, "-m", "jurybox", "run", "--help"]), args.tries
            ),
        }
    print(f"{args.tries} tries each, {args.items} items x 2 orders; seconds (best / median):")
    for label, (best, median) in rows.items():
        print(f"  {label:40s} {best:7.3f} / {median:7.3f}")
    print(f"  modules imported (run --dry-run)         {imports[0][1]}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
