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
imports, the wall of ``jurybox --help`` and ``jurybox run --help``, and the import self time of a
real run by package: over the whole run, and before its first request (an audit hook marks the
first TCP connect in the ``-X importtime`` output).

Usage: ``python bench/startup.py [--tries 10] [--items 4] [--src TREE] [--provider openai]``
(``openai``: the vendor adapter through the openai SDK instead of aiohttp); with ``--baseline
TREE`` it times only the first request, of TREE and of the source tree taking turns (the fair
comparison on a machine whose load changes by the minute); with ``--instructions`` it counts
the instructions the child runs from its start to its first request under valgrind's callgrind
(``PYTHONHASHSEED=0``; of the source tree and, with ``--baseline``, of TREE): a figure the load
does not move, for changes of a few milliseconds (a tree at another path differs by ~0.5 % on its
own: compare copies at paths of the same length). Run it with the venv's python and
``PYTHONPATH=src``. It is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wire_server import Response, WireServer

SRC = Path(__file__).resolve().parents[1] / "src"  # --src names another tree (a baseline)


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


# ``--provider openai``: the vendor adapter, through the openai SDK (httpx), at the same server;
# the SDK requires a key, and this one only ever reaches the loopback server of this process.
LOOPBACK_KEY_ENV = "JURYBOX_BENCH_LOOPBACK_KEY"
PROVIDERS = {
    "openai_compatible": {"provider": "openai_compatible", "api_key_env": None},
    "openai": {"provider": "openai", "api_key_env": LOOPBACK_KEY_ENV},
}


def write_inputs(folder: Path, url: str, items: int, provider: str = "openai_compatible") -> Path:
    """A pairwise dataset of ``items`` items and a config with one keyless local judge."""
    answers = {"control": "a", "treatment": "b"}
    rows = (
        {"id": f"q{n}", "question": f"Question {n}?", "responses": answers} for n in range(items)
    )
    (folder / "items.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), "utf-8")
    config = {
        "judges": {"wire": {**PROVIDERS[provider], "model": "wire-judge", "base_url": url}},
        "task": {"mode": "pairwise"},
        "pipeline": {"cache": False, "test_retest_count": 0},
        "paths": {"dataset": "items.jsonl", "output_dir": "out"},
    }
    path = folder / "run.yaml"
    path.write_text(json.dumps(config), "utf-8")  # JSON is YAML
    return path


def child_env(src: Path = SRC) -> dict[str, str]:
    """``src`` first; bytecode is written and read, as for an installed package."""
    path = os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH", "")]))
    env = {**os.environ, "PYTHONPATH": path, LOOPBACK_KEY_ENV: "sk-loopback-only"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else every start compiles jurybox from source
    return env


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_first_request(
    server: FirstArrivalServer, config: Path, output: Path, src: Path
) -> tuple[float, float, float]:
    """(spawn -> first request, spawn -> exit, CPU user + sys) of one ``jurybox run``, in s."""
    server.rearm()
    command = [sys.executable, "-m", "jurybox", "run", str(config), "--output-dir", str(output)]
    cpu = children_cpu()
    started = time.time()
    done = subprocess.run(
        command, env=child_env(src), capture_output=True, text=True, timeout=120, check=False
    )
    ended = time.time()
    if done.returncode != 0 or server.first_arrival is None:
        raise RuntimeError(f"jurybox run failed ({done.returncode}): {done.stderr[-2000:]}")
    return server.first_arrival - started, ended - started, children_cpu() - cpu


# Runs `jurybox` as `python -m jurybox` does and writes FIRST_REQUEST to stderr when the run opens
# its first TCP connection (an audit hook): the import lines printed before it are the imports
# the first request waited for.
FIRST_REQUEST = "FIRST-REQUEST"
_MARK_FIRST_REQUEST = f"""
import os, runpy, sys, time
def hook(event, args):
    if event == "socket.connect" and not getattr(hook, "seen", False):
        hook.seen = True
        cpu = time.process_time()  # the process's CPU (user + sys) so far, its start included
        os.write(2, f"{FIRST_REQUEST} {{cpu}}\\n".encode())
sys.addaudithook(hook)
sys.argv = ["jurybox", *sys.argv[1:]]
runpy.run_module("jurybox", run_name="__main__", alter_sys=True)
"""


# The same, for callgrind: the child ends at its first TCP connect, so that the instructions
# counted are those of the way to the first request.
_EXIT_AT_FIRST_REQUEST = """
import os, runpy, sys
def hook(event, args):
    if event == "socket.connect":
        os._exit(0)
sys.addaudithook(hook)
sys.argv = ["jurybox", *sys.argv[1:]]
runpy.run_module("jurybox", run_name="__main__", alter_sys=True)
"""


def instructions_to_first_request(config: Path, output: Path, src: Path) -> int:
    """Instructions (callgrind's ``Ir``) from the child's start to its first request."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable]
    command += ["-c", _EXIT_AT_FIRST_REQUEST, "run", str(config), "--output-dir", str(output)]
    env = {**child_env(src), "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    counts = [line for line in done.stderr.splitlines() if "Collected" in line]
    if not counts:
        raise RuntimeError(f"callgrind gave no count: {done.stderr[-2000:]}")
    return int(counts[0].split()[-1])


def import_lines(
    args: Sequence[str], src: Path, *, before_first_request: bool = False
) -> list[tuple[str, int, int]]:
    """(module as printed, self us, cumulative us) of each import of ``python -X importtime``;
    with ``before_first_request``, of those before the run's first request (``args`` are then
    the arguments of ``jurybox``)."""
    command = [sys.executable, "-X", "importtime"]
    command += ["-c", _MARK_FIRST_REQUEST, *args] if before_first_request else [*args]
    done = subprocess.run(
        command, env=child_env(src), capture_output=True, text=True, timeout=120, check=False
    )
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith(FIRST_REQUEST) and before_first_request:
            break
        if line.startswith("import time:") and "self [us]" not in line:
            own, cumulative, name = line.removeprefix("import time:").split("|")
            rows.append((name, int(own), int(cumulative)))
    return rows


def import_profile(config: Path, src: Path) -> tuple[float, int]:
    """(top-level import seconds, modules imported) of ``jurybox run CONFIG --dry-run``."""
    rows = import_lines(["-m", "jurybox", "run", str(config), "--dry-run"], src)
    # One space of padding marks a top-level import; its cumulative time holds the nested ones.
    top_level = sum(cumulative for name, _, cumulative in rows if not name.startswith("  "))
    return top_level / 1e6, len(rows)


def cpu_to_first_request(config: Path, output: Path, src: Path) -> float:
    """CPU seconds (user + sys) ``jurybox run`` spent up to its first request, as the child
    measures it (``time.process_time``, which counts from the process's start)."""
    command = [sys.executable, "-c", _MARK_FIRST_REQUEST, "run", str(config)]
    command += ["--output-dir", str(output)]
    done = subprocess.run(
        command, env=child_env(src), capture_output=True, text=True, timeout=120, check=False
    )
    marks = [line for line in done.stderr.splitlines() if line.startswith(FIRST_REQUEST)]
    if done.returncode != 0 or not marks:
        raise RuntimeError(f"jurybox run failed ({done.returncode}): {done.stderr[-2000:]}")
    return float(marks[0].split()[1])


def import_breakdown(
    config: Path, work: Path, src: Path, tries: int, *, before_first_request: bool = False
) -> dict[str, float]:
    """Seconds of import (each module's least self time over ``tries`` real runs), by package:
    where a run's start-up goes (``before_first_request``: only the imports before its first
    request). ``jurybox`` is split by subpackage."""
    least: dict[str, int] = {}
    for n in range(tries):
        output = str(work / f"imp{n}{'-first' if before_first_request else ''}")
        command = ["run", str(config), "--output-dir", output]
        if not before_first_request:
            command = ["-m", "jurybox", *command]
        for name, own, _ in import_lines(command, src, before_first_request=before_first_request):
            least[name.strip()] = min(least.get(name.strip(), own), own)
    groups: collections.Counter[str] = collections.Counter()
    for name, own in least.items():
        parts = name.split(".")
        groups[".".join(parts[:2]) if parts[0] == "jurybox" else parts[0]] += own
    return {group: own / 1e6 for group, own in groups.most_common()}


def wall_and_cpu(args: Sequence[str], src: Path) -> tuple[float, float]:
    cpu = children_cpu()
    started = time.perf_counter()
    subprocess.run(args, env=child_env(src), capture_output=True, check=True, timeout=60)
    return time.perf_counter() - started, children_cpu() - cpu


def best_and_median(values: Sequence[float]) -> tuple[float, float]:
    return min(values), statistics.median(values)


def measured(measure: Callable[[], tuple[float, float]], tries: int) -> list[tuple[float, float]]:
    return [measure() for _ in range(tries)]


def side_by_side(
    server: FirstArrivalServer, config: Path, work: Path, trees: dict[str, Path], tries: int
) -> None:
    """Spawn -> first request (wall) and start -> first request (CPU) of each tree, the trees
    taking turns try by try, so that a change in the machine's load between minutes falls on
    all of them alike."""
    walls: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    for name, tree in trees.items():
        time_first_request(server, config, work / f"warm-{name}", tree)  # writes the bytecode
    for n in range(tries):
        for name, tree in trees.items():
            walls[name].append(time_first_request(server, config, work / f"w{n}{name}", tree)[0])
            cpus[name].append(cpu_to_first_request(config, work / f"c{n}{name}", tree))
    print(f"side by side, taking turns, {tries} tries each; seconds, best / median:")
    for name, tree in trees.items():
        wall, cpu = best_and_median(walls[name]), best_and_median(cpus[name])
        print(f"  {name:9s} spawn -> first request (wall) {wall[0]:6.3f} / {wall[1]:6.3f}", end="")
        print(f"   start -> first request (CPU) {cpu[0]:6.3f} / {cpu[1]:6.3f}   {tree}")


def count_instructions(src: Path, baseline: Path | None, items: int) -> None:
    trees = {"source": src} if baseline is None else {"baseline": baseline.resolve(), "source": src}
    with tempfile.TemporaryDirectory() as tmp, ServerThread() as server:
        config = write_inputs(Path(tmp), server.url, items)
        print("instructions from start to the first request (callgrind, PYTHONHASHSEED=0):")
        for name, tree in trees.items():
            time_first_request(server, config, Path(tmp) / f"warm-{name}", tree)  # bytecode
            count = instructions_to_first_request(config, Path(tmp) / f"i-{name}", tree)
            print(f"  {name:9s} {count:>15,}   {tree}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--top", type=int, default=20, help="Packages listed in the breakdown.")
    parser.add_argument(
        "--provider",
        choices=sorted(PROVIDERS),
        default="openai_compatible",
        help="The judge's adapter: openai_compatible (aiohttp) or openai (the openai SDK).",
    )
    parser.add_argument("--src", type=Path, help="Source tree to time (default: this one's).")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="Only time the first request of this tree and the source tree, taking turns.",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="Only count the instructions to the first request (valgrind), once per tree.",
    )
    args = parser.parse_args()
    src = args.src.resolve() if args.src is not None else SRC
    if args.instructions:
        count_instructions(src, args.baseline, args.items)
        return
    if args.baseline is not None:
        print(f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}; {platform.platform()}")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        with tempfile.TemporaryDirectory() as tmp, ServerThread() as server:
            config = write_inputs(Path(tmp), server.url, args.items, args.provider)
            trees = {"baseline": args.baseline.resolve(), "source": src}
            side_by_side(server, config, Path(tmp), trees, args.tries)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    print(f"source: {src}")
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}; {platform.platform()}; {os.cpu_count()} CPUs")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp, ServerThread() as server:
        config = write_inputs(Path(tmp), server.url, args.items, args.provider)
        time_first_request(server, config, Path(tmp) / "warm-up", src)  # writes the bytecode
        outputs = [Path(tmp) / f"out{n}" for n in range(args.tries)]
        runs = [time_first_request(server, config, output, src) for output in outputs]
        cpu_first = [
            cpu_to_first_request(config, Path(tmp) / f"cpu{n}", src) for n in range(args.tries)
        ]
        imports = [import_profile(config, src) for _ in range(args.tries)]
        breakdown = import_breakdown(config, Path(tmp), src, args.tries)
        first = import_breakdown(config, Path(tmp), src, args.tries, before_first_request=True)
        python, jurybox = sys.executable, [sys.executable, "-m", "jurybox"]
        dry = [*jurybox, "run", str(config), "--dry-run"]
        timed = {
            "python -c pass": measured(
                lambda: wall_and_cpu([python, "-c", "pass"], src), args.tries
            ),
            "jurybox run --dry-run": measured(lambda: wall_and_cpu(dry, src), args.tries),
            "jurybox --help": measured(lambda: wall_and_cpu([*jurybox, "--help"], src), args.tries),
            "jurybox run --help": measured(
                lambda: wall_and_cpu([*jurybox, "run", "--help"], src), args.tries
            ),
        }
    print(f"{args.tries} tries each, {args.items} items x 2 orders; seconds, best / median:")
    rows = {
        "run: spawn -> first request (wall)": best_and_median([r[0] for r in runs]),
        "run: start -> first request (CPU)": best_and_median(cpu_first),
        "run: whole (wall)": best_and_median([r[1] for r in runs]),
        "run: whole (CPU user+sys)": best_and_median([r[2] for r in runs]),
        "run --dry-run: imports (-X importtime)": best_and_median([t for t, _ in imports]),
    }
    for label, values in timed.items():
        rows[f"{label} (wall)"] = best_and_median([wall for wall, _ in values])
        rows[f"{label} (CPU user+sys)"] = best_and_median([cpu for _, cpu in values])
    for label, (best, median) in rows.items():
        print(f"  {label:42s} {best:7.3f} / {median:7.3f}")
    print(f"  {'run --dry-run: modules imported':42s} {imports[0][1]}")
    for title, groups in (("", breakdown), (", before the first request", first)):
        total = sum(groups.values())
        print(f"run (real): import self time by package{title}, least of {args.tries}: ", end="")
        print(f"{total:.3f} s")
        for group, seconds in list(groups.items())[: args.top]:
            print(f"  {group:32s} {seconds * 1000:7.1f} ms  {seconds / total:6.1%}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
