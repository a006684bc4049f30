"""Throughput: jurybox against a local OpenAI-compatible server, next to a sequential baseline.

The fastest a judging run can finish is bound by the provider:

    bound = max(calls x latency / calls_in_flight, calls / rate_limit)

This script starts ``wire_server.py`` in its own process (so that its CPU is not counted as
jurybox's), has jurybox judge ``--units`` pairwise work units against it through each adapter in
``--providers`` (``openai_compatible``: its aiohttp client; ``openai``: the official SDK;
``base_url`` at the server, ``api_key_env: null``, cache off) and prints, per scenario and
adapter: wall time / bound, the 429s the server sent, and the CPU time of the jurybox process per
judgment (``time.process_time()`` around the run, divided by the units it judged: jurybox's
code, the HTTP client and the kernel's share of the sockets, all threads; the run's fixed costs
too, dataset load, unit planning, manifest and summary; not the imports, not the 10-item
warm-up run before it, not the server; ``cpu_user_ms_per_judgment`` is its user-mode part,
from ``getrusage``). A sequential one-call-at-a-time run over
``--baseline-units`` units (extrapolated linearly to ``--units``) is measured in the same
invocation, against the same server settings.

Two reference figures come with it: the same run with the ``fake`` provider (no HTTP at all:
the CPU of jurybox's own code per judgment), and ``--breakdown``, the CPU of each step of one
call and of bare HTTP clients, one call at a time and paced like a rate-limited run.

Scenarios (``--scenarios``, comma separated):

* ``latency``: no rate limit; bound = units x latency / concurrency.
* ``latency_slow``: the same with ``--slow-latency-s`` (1 s, closer to a real judge), where the
  client's CPU is no longer the bottleneck (no sequential baseline: it would take 2,000 s).
* ``rate1s``: the server admits ``rpm/60`` requests in any 1-second window (how vendors enforce
  a per-minute limit in practice) and jurybox is told the same ``rpm``.
* ``rate60s``: the server admits ``rpm`` requests in any 60-second window, the semantics of
  jurybox's own limiter (takes over a minute; not in the default set).

Usage: ``python bench/throughput.py [--units 2000] [--latency-s 0.2] [--concurrency 64]``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_clients
from wire_server import WireConfig, spawn_server

_WORDS = (
    "the",
    "answer",
    "explains",
    "each",
    "step",
    "and",
    "cites",
    "the",
    "rule",
    "before",
    "giving",
    "a",
    "result",
    "while",
    "noting",
    "assumptions",
    "that",
    "might",
    "not",
    "hold",
)


def response_text(index: int, arm: str, chars: int) -> str:
    """A deterministic response of about ``chars`` characters."""
    words: list[str] = []
    n = index * 7 + len(arm)
    while sum(len(w) + 1 for w in words) < chars:
        words.append(_WORDS[n % len(_WORDS)])
        n += 3
    return f"[{arm} {index}] " + " ".join(words)


def write_dataset(path: Path, n_items: int, *, chars: int = 600) -> Path:
    """Two-arm items (control / treatment) with responses of about ``chars`` characters."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n_items):
            row = {
                "id": f"q{i:06d}",
                "question": f"Question {i}: how should the following situation be handled?",
                "responses": {
                    "control": response_text(i, "control", chars),
                    "treatment": response_text(i, "treatment", chars + 40 * (i % 5)),
                },
            }
            handle.write(json.dumps(row) + "\n")
    return path


def run_config(
    dataset: Path,
    url: str,
    *,
    concurrency: int,
    rpm: float | None,
    provider: str = "openai_compatible",
    timeout_s: float = 60.0,
) -> dict[str, Any]:
    """A pairwise run (both orders, no retests, cache off) with one judge at ``url``."""
    judge: dict[str, Any] = {
        "provider": provider,
        "model": "wire-judge",
        "base_url": url,
        "api_key_env": None,
        "concurrency": concurrency,
        "timeout_s": timeout_s,
    }
    if rpm is not None:
        judge["rpm"] = rpm
    return {
        "judges": {"wire": judge},
        "task": {"mode": "pairwise"},
        "pipeline": {
            "cache": False,
            "test_retest_count": 0,
            "position_bias_mode": "both",
            "concurrency": concurrency,
        },
        "paths": {"dataset": str(dataset)},
    }


@dataclass(frozen=True)
class Measured:
    units: int
    wall_s: float
    cpu_s: float
    status_counts: dict[str, int]
    server: dict[str, float]
    user_s: float = 0.0  # the part of cpu_s in user mode (getrusage), the rest in the kernel

    @property
    def cpu_ms_per_judgment(self) -> float:
        return 1000.0 * self.cpu_s / self.units


def measure_run(
    config_map: dict[str, Any],
    out_dir: Path,
    server: Any,
    *,
    limit: int | None = None,
    profile: Path | None = None,
) -> Measured:
    """One jurybox run in this process: wall and CPU time around ``run_async``."""
    from jurybox.config import config_from_mapping
    from jurybox.pipeline import run_async

    config = config_from_mapping(config_map)
    # Warm-up (not measured): lazy imports, SDK client classes, first connections.
    warm_dir = out_dir.with_name(out_dir.name + "-warmup")
    asyncio.run(run_async(config, output_dir=warm_dir, limit=10))
    server.reset()
    profiler = cProfile.Profile() if profile is not None else None
    user0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if profiler is not None:
        profiler.enable()
    summary = asyncio.run(run_async(config, output_dir=out_dir, limit=limit))
    if profiler is not None:
        profiler.disable()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    user = resource.getrusage(resource.RUSAGE_SELF).ru_utime - user0
    if profiler is not None and profile is not None:
        profiler.dump_stats(profile)
    counts = {k: v for k, v in summary.status_counts.items() if v}
    return Measured(summary.units_run, wall, cpu, counts, server.stats(), user)


def bound_s(units: int, latency_s: float, concurrency: int, rpm: float | None) -> float:
    latency_bound = units * latency_s / concurrency
    rate_bound = units / (rpm / 60.0) if rpm else 0.0
    return max(latency_bound, rate_bound)


@dataclass(frozen=True)
class Scenario:
    name: str
    server: WireConfig
    rpm: float | None  # told to jurybox
    baseline: bool = True  # measure the sequential baseline too


def scenarios(args: argparse.Namespace) -> dict[str, Scenario]:
    lat = args.latency_s
    return {
        "latency": Scenario("latency", WireConfig(latency_s=lat, seed=1), None),
        "latency_slow": Scenario(
            "latency_slow", WireConfig(latency_s=args.slow_latency_s, seed=1), None, False
        ),
        "rate1s": Scenario(
            "rate1s",
            WireConfig(latency_s=lat, rpm=args.rpm, rate_window_s=1.0, seed=1),
            args.rpm,
            False,  # sequential calls (5/s) stay far below the limit: same as `latency`'s
        ),
        "rate60s": Scenario(
            "rate60s",
            WireConfig(latency_s=lat, rpm=args.rpm60, rate_window_s=60.0, seed=1),
            args.rpm60,
            False,
        ),
    }


def run_scenario(
    scenario: Scenario, provider: str, args: argparse.Namespace, dataset: Path, work: Path
) -> dict[str, Any]:
    label = f"{scenario.name}-{provider}"
    with spawn_server(scenario.server, max_lifetime_s=1800) as server:
        conc = run_config(
            dataset, server.url, concurrency=args.concurrency, rpm=scenario.rpm, provider=provider
        )
        profile = work / f"{label}.prof" if args.profile else None
        full = measure_run(conc, work / f"{label}-conc", server, profile=profile)
        base = None
        if args.baseline_units and scenario.baseline:
            seq = run_config(
                dataset, server.url, concurrency=1, rpm=scenario.rpm, provider=provider
            )
            base = measure_run(seq, work / f"{label}-seq", server, limit=args.baseline_units // 2)
    latency = scenario.server.latency_s
    bound = bound_s(full.units, latency, args.concurrency, scenario.rpm)
    row: dict[str, Any] = {
        "scenario": scenario.name,
        "provider": provider,
        "units": full.units,
        "latency_s": latency,
        "concurrency": args.concurrency,
        "server_rpm": scenario.server.rpm,
        "server_window_s": scenario.server.rate_window_s if scenario.server.rpm else None,
        "jurybox_rpm": scenario.rpm,
        "bound_s": bound,
        "wall_s": full.wall_s,
        "wall_over_bound": full.wall_s / bound,
        "http_429": int(full.server["rate_limited"] + full.server["rate_429"]),
        "requests": int(full.server["requests"]),
        "cpu_s": full.cpu_s,
        "cpu_ms_per_judgment": full.cpu_ms_per_judgment,
        "cpu_user_ms_per_judgment": 1000.0 * full.user_s / full.units,
        "server_cpu_s": full.server["cpu_s"],
        "status_counts": full.status_counts,
    }
    if base is not None:
        scale = full.units / base.units
        row["baseline"] = {
            "units_measured": base.units,
            "wall_s_measured": base.wall_s,
            "wall_s_extrapolated": base.wall_s * scale,
            "cpu_ms_per_judgment": base.cpu_ms_per_judgment,
            "http_429": int(base.server["rate_limited"] + base.server["rate_429"]),
            "status_counts": base.status_counts,
            "speedup": base.wall_s * scale / full.wall_s,
        }
    return row


def _cpu_ms(label: str, steps: dict[str, float], func: Any, n: int) -> list[Any]:
    start = time.process_time()
    out = [func(i) for i in range(n)]
    steps[label] = 1000.0 * (time.process_time() - start) / n
    return out


def breakdown(dataset: Path, n: int, paced_rpm: float, latency_s: float) -> dict[str, float]:
    """CPU ms per judgment of each step of one call, one call at a time, then paced."""
    from jurybox.config import config_from_mapping
    from jurybox.pipeline.runner import load_inputs, request_for

    steps: dict[str, float] = {}
    with spawn_server(WireConfig(seed=1)) as server:
        config = config_from_mapping(run_config(dataset, server.url, concurrency=1, rpm=None))
        inputs = load_inputs(config)
        units = list(inputs.units[:n])
        reqs = _cpu_ms(
            "jurybox: build request (prompt)", steps, lambda i: request_for(inputs, [units[i]]), n
        )
        _cpu_ms("jurybox: prompt hash", steps, lambda i: reqs[i].prompt_hash(), n)
        completions = asyncio.run(_sequential_calls(config, server.url, reqs, steps))
        _record_steps(config, inputs, units, completions, steps)
    interval = 60.0 / paced_rpm
    with spawn_server(WireConfig(latency_s=latency_s, seed=1)) as server:
        asyncio.run(_paced_calls(config, server.url, reqs, interval, steps))
    return steps


async def _sequential_calls(
    config: Any, url: str, reqs: list[Any], steps: dict[str, float]
) -> list[Any]:
    import aiohttp
    import httpx2

    n = len(reqs)
    providers = {name: _provider(config, url, name) for name in ("openai_compatible", "openai")}
    bodies = [providers["openai"].request_params(r) for r in reqs]  # type: ignore[attr-defined]
    done: list[Any] = []
    for name, provider in providers.items():
        label = f"{name} adapter call (body, HTTP, reply -> Completion)"
        steps[label], out = await http_clients.cpu_ms_sequential(
            lambda i, p=provider: p.complete(reqs[i]), n
        )
        done = done or out
        await provider.aclose()
    async with aiohttp.ClientSession() as session:
        call = http_clients.aiohttp_call(session, url, bodies)
        steps["  bare aiohttp POST + json.loads"], _ = await http_clients.cpu_ms_sequential(call, n)
    async with httpx2.AsyncClient(base_url=url) as client:
        call = http_clients.httpx2_call(client, bodies)
        steps["  bare httpx2 POST + .json()"], _ = await http_clients.cpu_ms_sequential(call, n)
    raw, close = http_clients.raw_client(url, bodies)
    steps["  raw asyncio HTTP/1.1 (lower bound)"], _ = await http_clients.cpu_ms_sequential(raw, n)
    close()
    return done


async def _paced_calls(
    config: Any, url: str, reqs: list[Any], interval_s: float, steps: dict[str, float]
) -> None:
    import aiohttp

    n, pace = len(reqs), f"paced, one call every {interval_s * 1000:g} ms"
    provider = _provider(config, url, "openai_compatible")
    steps[f"openai_compatible adapter call, {pace}"] = await http_clients.cpu_ms_paced(
        lambda i: provider.complete(reqs[i]), n, interval_s
    )
    bodies = [provider.request_params(r) for r in reqs]  # type: ignore[attr-defined]
    await provider.aclose()
    async with aiohttp.ClientSession() as session:
        call = http_clients.aiohttp_call(session, url, bodies)
        label = f"  bare aiohttp POST + json.loads, {pace}"
        steps[label] = await http_clients.cpu_ms_paced(call, n, interval_s)
    raw, close = http_clients.raw_client(url, bodies)
    label = f"  raw asyncio HTTP/1.1 (lower bound), {pace}"
    steps[label] = await http_clients.cpu_ms_paced(raw, n, interval_s)
    close()


def _provider(config: Any, url: str, name: str) -> Any:
    from jurybox.providers import create_provider

    judge = config.judges["wire"].model_copy(update={"provider": name, "base_url": url})
    return create_provider("wire", judge)


def _record_steps(
    config: Any, inputs: Any, units: list[Any], completions: list[Any], steps: dict[str, float]
) -> None:
    from jurybox.pipeline.recording import RecordContext, completed_records

    n, judge = len(units), config.judges["wire"]
    context = RecordContext("run", "pairwise", "wire", judge, _provider(config, "x", "openai"))
    fields = _cpu_ms(
        "jurybox: parse + interpret",
        steps,
        lambda i: inputs.mode.interpret([units[i]], inputs.items, completions[i]),
        n,
    )
    records = _cpu_ms(
        "jurybox: build JudgeRecord",
        steps,
        lambda i: completed_records(
            context,
            [units[i]],
            fields[i],
            completions[i],
            prompt_hash="x",
            attempts=1,
            cache_hit=False,
        )[0],
        n,
    )
    _cpu_ms("jurybox: record to JSON", steps, lambda i: records[i].to_json(), n)
    with tempfile.TemporaryDirectory() as tmp:
        from jurybox.io.judgments import JsonlWriter

        with JsonlWriter(Path(tmp) / "judgments.jsonl") as writer:
            label = "jurybox: write record (JSON + write(2))"
            _cpu_ms(label, steps, lambda i: writer.write(records[i]), n)


def jurybox_alone(dataset: Path, work: Path, concurrency: int) -> dict[str, Any]:
    """The same pairwise run with the ``fake`` provider: no HTTP, only jurybox's own CPU."""
    from jurybox.config import config_from_mapping
    from jurybox.pipeline import run_async

    mapping = run_config(dataset, "http://127.0.0.1:9/v1", concurrency=concurrency, rpm=None)
    mapping["judges"]["wire"] = {"provider": "fake", "model": "fake-judge"}
    config = config_from_mapping(mapping)
    asyncio.run(run_async(config, output_dir=work / "fake-warmup", limit=10))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = asyncio.run(run_async(config, output_dir=work / "fake-run"))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "units": summary.units_run,
        "wall_s": wall,
        "cpu_ms_per_judgment": 1000.0 * cpu / summary.units_run,
        "status_counts": {k: v for k, v in summary.status_counts.items() if v},
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "| scenario | adapter | units | bound s | wall s | wall/bound | 429s | CPU ms/judgment | "
        "sequential wall s (measured units -> extrapolated) | seq. CPU ms/judgment | speedup |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        b = r.get("baseline") or {}
        seq = (
            f"{b['wall_s_measured']:.1f} ({b['units_measured']}) -> {b['wall_s_extrapolated']:.0f}"
            if b
            else "-"
        )
        print(
            f"| {r['scenario']} | {r['provider']} | {r['units']} | {r['bound_s']:.2f} | "
            f"{r['wall_s']:.2f} | "
            f"{r['wall_over_bound']:.3f} | {r['http_429']} | {r['cpu_ms_per_judgment']:.2f} | "
            f"{seq} | {b.get('cpu_ms_per_judgment', float('nan')):.2f} | "
            f"{b.get('speedup', float('nan')):.1f}x |"
        )


def print_profile(path: Path, top: int) -> None:
    stats = pstats.Stats(str(path))
    for key in ("tottime", "cumulative"):
        print(f"\n-- cProfile of the concurrent run ({path.stem}), top {top} by {key} --")
        stats.sort_stats(key).print_stats(top)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=2000, help="work units (pairwise, 2/item)")
    parser.add_argument("--latency-s", type=float, default=0.2)
    parser.add_argument("--slow-latency-s", type=float, default=1.0, help="latency_slow")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rpm", type=float, default=6000.0, help="rate1s: requests per minute")
    parser.add_argument("--rpm60", type=float, default=1200.0, help="rate60s: requests/minute")
    parser.add_argument("--baseline-units", type=int, default=200, help="0: no baseline")
    parser.add_argument("--scenarios", default="latency,latency_slow,rate1s")
    parser.add_argument("--providers", default="openai_compatible,openai", help="adapters to run")
    parser.add_argument("--profile", action="store_true", help="cProfile the concurrent runs")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument(
        "--breakdown", type=int, default=500, help="calls for the per-step CPU breakdown (0: skip)"
    )
    parser.add_argument(
        "--paced-rpm", type=float, default=6000.0, help="breakdown: pace of the paced calls"
    )
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    cpu0 = time.process_time()
    import openai  # noqa: F401 - one-time start-up cost, reported apart from the runs

    import jurybox.pipeline.runner
    import jurybox.providers.openai  # noqa: F401

    print(
        f"one-time import CPU (jurybox pipeline + openai SDK): {time.process_time() - cpu0:.2f} s"
    )
    with tempfile.TemporaryDirectory(prefix="jurybox-throughput-") as tmp:
        work = Path(tmp)
        dataset = write_dataset(work / "items.jsonl", args.units // 2)
        alone = jurybox_alone(dataset, work, args.concurrency)
        print(f"jurybox alone (fake provider, no HTTP): {json.dumps(alone)}", flush=True)
        rows = []
        for name in filter(None, args.scenarios.split(",")):
            for provider in filter(None, args.providers.split(",")):
                rows.append(run_scenario(scenarios(args)[name], provider, args, dataset, work))
                print(json.dumps(rows[-1]), flush=True)
        steps = {}
        if args.breakdown:
            steps = breakdown(dataset, args.breakdown, args.paced_rpm, args.latency_s)
        print(f"load average after: {os.getloadavg()}")
        print_table(rows)
        print(
            f"\njurybox alone (fake provider, no HTTP, {alone['units']} units): "
            f"{alone['cpu_ms_per_judgment']:.3f} CPU ms / judgment"
        )
        if steps:
            print("\n| step | CPU ms per judgment |")
            print("|---|---|")
            for label, value in steps.items():
                print(f"| {label} | {value:.3f} |")
        if args.json:
            result = {"rows": rows, "jurybox_alone": alone, "breakdown": steps}
            args.json.write_text(json.dumps(result, indent=2))
        if args.profile:
            for path in sorted(work.glob("*.prof")):
                print_profile(path, 60)


if __name__ == "__main__":
    main()
