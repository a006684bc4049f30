"""Side by side: jurybox, Inspect AI and promptfoo grade the same samples against one server.

Issue 19's comparison. For each scenario and tool this starts ``bench/wire_server.py`` in its
own process (OpenAI Chat Completions, ``--latency-s`` per answer; in the ``*_rpm`` scenarios
``--server-rpm`` requests a minute, enforced as rpm/60 in any 1-second window, answered 429 with
Retry-After beyond it, and OpenAI's ``x-ratelimit-*`` headers on every answer, the remaining
requests in per-minute units as OpenAI states them), runs the tool as
a subprocess over the same ``--samples`` graded samples (one judge call each; see ``tools.py``)
and prints:

* wall: spawn to exit (``time.perf_counter``), and wall / bound, where bound = max(samples x
  latency / calls in flight, samples / (rpm / 60)) for the tool's calls in flight;
* CPU: user + system seconds of the tool's process and every descendant it waited for
  (``os.wait4``'s rusage), in total and per judgment (start-up included);
* peak RSS: ``ru_maxrss`` from the same rusage (the largest single process; Node's worker
  threads share its process, so they are in it);
* requests and 429s as the server counted them;
* first request: from spawn to the first request's arrival at the server;
* judged / failed: samples whose verdict the tool recorded, and the rest (see ``tools.py``).

Scenarios: ``defaults`` (each tool's own default calls in flight: jurybox 16, Inspect AI
adaptive from 20 up to 100, promptfoo 4), ``c64`` (64 in flight), ``defaults_rpm`` and
``c64_rpm`` (the same under the limit). Under the limit jurybox runs twice: ``jurybox`` with
no ``rpm`` configured (it learns the limit from the headers) and ``jurybox_rpm`` with ``rpm:
1200`` in its config. Ratios are each tool's figure over jurybox's in the same scenario.

Before measuring, each tool makes one untimed warm-up run of 5 samples (byte-compiled caches,
promptfoo's database), so every measured run is a second, ordinary start. Needs
``bash bench/side_by_side/setup.sh`` first. A benchmark, not a test: CI does not run it.

Usage: ``python bench/side_by_side/run.py [--samples 1000] [--scenarios defaults,c64,...]
[--tools jurybox,inspect,promptfoo] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tools
from wire_server import WireConfig, spawn_server

SCENARIOS = ("defaults", "c64", "defaults_rpm", "c64_rpm")
TOOLS = ("jurybox", "inspect", "promptfoo")
# Each tool's default calls in flight, as its docs and code say: the label printed, and the
# number the bound is computed with. Inspect AI adapts (AIMD from 20, between 10 and 100): its
# bound uses 100, the most it may reach.
DEFAULT_IN_FLIGHT = {
    "jurybox": ("16", 16),
    "jurybox_rpm": ("16", 16),
    "inspect": ("20-100 adaptive", 100),
    "promptfoo": ("4", 4),
}


@dataclass
class Row:
    scenario: str
    tool: str
    in_flight: str
    samples: int
    judged: int
    failed: int
    exit_code: int
    wall_s: float
    bound_s: float
    cpu_s: float
    peak_rss_mb: float
    requests: int
    http_429: int
    first_request_s: float | None
    load_before: float
    note: str

    @property
    def cpu_ms_per_judgment(self) -> float:
        return 1000.0 * self.cpu_s / max(1, self.judged)


@dataclass(frozen=True)
class Exited:
    code: int
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    spawned_unix: float


def run_measured(launch: tools.Launch, log: Path, timeout_s: float) -> Exited:
    """Spawn, wait with ``os.wait4`` (the rusage of the child and its reaped descendants)."""
    with log.open("wb") as out:
        spawned = time.time()
        start = time.perf_counter()
        process = subprocess.Popen(
            launch.argv,
            env=launch.env,
            cwd=launch.cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own group: a timeout ends the tool's workers too
        )
        timer = threading.Timer(timeout_s, _kill_group, (process.pid,))
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Exited(process.returncode, wall, cpu, usage.ru_maxrss / 1024.0, spawned)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def server_config(scenario: str, args: argparse.Namespace) -> WireConfig:
    if scenario.endswith("_rpm"):
        return WireConfig(
            latency_s=args.latency_s,
            rpm=args.server_rpm,
            rate_window_s=1.0,
            rate_headers=True,
            remaining_per_minute=not args.remaining_in_window,
            seed=1,
        )
    return WireConfig(latency_s=args.latency_s, seed=1)


def launcher(
    tool: str, work: Path, samples: Path, args: argparse.Namespace
) -> Callable[[str, int | None], tools.Launch]:
    """A function (server URL, calls in flight or None for the default) -> the tool's launch."""
    if tool in ("jurybox", "jurybox_rpm"):
        rpm = args.server_rpm if tool == "jurybox_rpm" else None
        return lambda url, c: tools.jurybox_launch(
            work, samples, url, c, rpm=rpm, python=args.python
        )
    if tool == "inspect":
        return lambda url, c: tools.inspect_launch(work, samples, url, c)
    home = args.work / "promptfoo-home"
    return lambda url, c: tools.promptfoo_launch(work, samples, url, c, home)


COUNTERS: dict[str, Callable[[Path], tools.Counted]] = {
    "jurybox": tools.jurybox_count,
    "jurybox_rpm": tools.jurybox_count,
    "inspect": tools.inspect_count,
    "promptfoo": tools.promptfoo_count,
}


def run_one(scenario: str, tool: str, args: argparse.Namespace, n: int) -> Row:
    """One tool over ``n`` samples against a fresh server; returns its row."""
    name = f"{scenario}-{tool}-{n}"
    work = args.work / name
    work.mkdir(parents=True)
    samples = work / "samples.src.jsonl"
    tools.write_samples(samples, n)
    in_flight = 64 if scenario.startswith("c64") else None
    with spawn_server(server_config(scenario, args), max_lifetime_s=1800) as server:
        launch = launcher(tool, work, samples, args)(server.url, in_flight)
        time.sleep(1.1)  # an empty rate window
        server.reset()
        load = os.getloadavg()[0]
        exited = run_measured(launch, args.work / f"{name}.log", args.timeout_s)
        stats = server.stats()
    counted = COUNTERS[tool](work)
    first = stats["first_request_unix"] - exited.spawned_unix if stats["requests"] else None
    label, flight = (str(in_flight), in_flight) if in_flight else DEFAULT_IN_FLIGHT[tool]
    rpm = args.server_rpm if scenario.endswith("_rpm") else None
    bound = max(n * args.latency_s / flight, n / (rpm / 60.0) if rpm else 0.0)
    return Row(
        scenario, tool, label, n, counted.judged, counted.failed, exited.code,
        exited.wall_s, bound, exited.cpu_s, exited.peak_rss_mb, int(stats["requests"]),
        int(stats["rate_limited"]), first, load, counted.note,
    )  # fmt: skip


def tools_for(scenario: str, selected: list[str]) -> list[str]:
    chosen = []
    for tool in selected:
        chosen.append(tool)
        if tool == "jurybox" and scenario.endswith("_rpm"):
            chosen.append("jurybox_rpm")
    return chosen


def warm_up(selected: list[str], args: argparse.Namespace) -> None:
    """One small untimed run per tool; stops the benchmark when a tool cannot run at all."""
    for tool in selected:
        row = run_one("warmup", tool, args, 5)
        if row.judged != 5:
            log = args.work / f"warmup-{tool}-5.log"
            tail = log.read_text(errors="replace")[-2000:]
            sys.exit(f"{tool}: the warm-up judged {row.judged}/5 ({row.note}); log:\n{tail}")


def print_rows(rows: list[Row]) -> None:
    print(
        "| scenario | tool | in flight | judged | failed | wall s | wall/bound | CPU s | "
        "CPU ms/judgment | peak RSS MB | requests | 429s | first request s | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        first = f"{r.first_request_s:.2f}" if r.first_request_s is not None else "none"
        print(
            f"| {r.scenario} | {r.tool} | {r.in_flight} | {r.judged}/{r.samples} | {r.failed} | "
            f"{r.wall_s:.1f} | {r.wall_s / r.bound_s:.2f} | {r.cpu_s:.2f} | "
            f"{r.cpu_ms_per_judgment:.1f} | {r.peak_rss_mb:.0f} | {r.requests} | "
            f"{r.http_429} | {first} | {r.load_before:.2f} |"
        )


def print_ratios(rows: list[Row]) -> None:
    """Each tool's wall, CPU and peak RSS over jurybox's (no rpm configured) in its scenario."""
    print("\n| scenario | tool | wall × jurybox | CPU × jurybox | peak RSS × jurybox |")
    print("|---|---|---|---|---|")
    base = {r.scenario: r for r in rows if r.tool == "jurybox"}
    for r in rows:
        ref = base.get(r.scenario)
        if ref is None or r.tool == "jurybox":
            continue
        print(
            f"| {r.scenario} | {r.tool} | {r.wall_s / ref.wall_s:.2f} | "
            f"{r.cpu_s / ref.cpu_s:.2f} | {r.peak_rss_mb / ref.peak_rss_mb:.2f} |"
        )


def check_installed(selected: list[str]) -> None:
    missing = {
        "inspect": tools.INSPECT_BIN / "inspect",
        "promptfoo": tools.PROMPTFOO,
    }
    for tool, path in missing.items():
        if tool in selected and not path.exists():
            sys.exit(f"{tool} is not installed ({path}): run bash bench/side_by_side/setup.sh")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--latency-s", type=float, default=0.25)
    parser.add_argument("--server-rpm", type=float, default=1200.0)
    parser.add_argument(
        "--remaining-in-window",
        action="store_true",
        help="state x-ratelimit-remaining-requests as requests left in the 1 s window (of 20), "
        "not in per-minute units",
    )
    parser.add_argument("--timeout-s", type=float, default=600.0, help="per tool run")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs jurybox")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--keep", type=Path, help="keep the runs' files and logs here")
    args = parser.parse_args(argv)
    for name, allowed in (("scenarios", SCENARIOS), ("tools", TOOLS)):
        chosen = [x for x in getattr(args, name).split(",") if x]
        unknown = set(chosen) - set(allowed)
        if unknown:
            parser.error(f"unknown {name}: {sorted(unknown)}; choose from {allowed}")
        setattr(args, name, chosen)
    return args


def print_header(args: argparse.Namespace) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{stamp}; {platform.platform()}; {os.cpu_count()} CPUs; load {os.getloadavg()}")
    versions = [tools.jurybox_version(args.python)]
    if "inspect" in args.tools:
        versions.append(tools.inspect_version())
    if "promptfoo" in args.tools:
        versions.append(tools.promptfoo_version(args.work / "promptfoo-home"))
    print("; ".join(versions))
    print(
        f"{args.samples} samples; server latency {args.latency_s} s; limit in *_rpm: "
        f"{args.server_rpm:g}/min as {args.server_rpm / 60:g} in any 1 s, with x-ratelimit-* "
        "headers",
        flush=True,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    check_installed(args.tools)
    with tempfile.TemporaryDirectory(prefix="jurybox-side-by-side-") as tmp:
        args.work = args.keep or Path(tmp)
        args.work.mkdir(parents=True, exist_ok=True)
        print_header(args)
        warm_up(args.tools, args)
        rows = []
        for scenario in args.scenarios:
            for tool in tools_for(scenario, args.tools):
                rows.append(run_one(scenario, tool, args, args.samples))
                print(json.dumps(asdict(rows[-1])), flush=True)
    print(f"load after: {os.getloadavg()}\n")
    print_rows(rows)
    print_ratios(rows)
    failed = [r for r in rows if r.judged != r.samples]
    for r in failed:
        print(f"\n{r.tool} in {r.scenario} judged {r.judged}/{r.samples}: {r.note}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=2))


if __name__ == "__main__":
    main()
