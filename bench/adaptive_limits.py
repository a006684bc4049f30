"""Adaptive rate control: 1,000 judgments against a 1,200/min server, with no ``rpm`` configured.

Issue 19's check. ``wire_server.py`` (in its own process) admits ``--server-rpm`` requests a
minute as ``rpm / 60`` in any 1-second window (how vendors enforce a per-minute limit) and
answers the rest 429, with Retry-After. jurybox judges ``--units`` pairwise units through
``openai_compatible`` at ``--concurrency`` calls in flight, its judge configured with neither
``rpm`` nor ``tpm``, in three scenarios:

* ``headers``: every response carries OpenAI's ``x-ratelimit-*`` request headers;
* ``no_headers``: none; the 429s still say Retry-After;
* ``bare``: none, and the 429s say nothing either (not in the default set).

For each it prints wall / bound (bound = units / (rpm / 60)), the requests the server saw, the
share answered 429, and lost judgments (``provider_error`` records). Issue targets: with headers
<= 1.10 x bound and <= 1 % 429; without <= 1.25 x and <= 5 %; none lost.

Usage: ``python bench/adaptive_limits.py [--units 1000] [--server-rpm 1200] [--latency-s 0.25]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import run_config, write_dataset
from wire_server import WireConfig, spawn_server

SCENARIOS = {
    "headers": {"rate_headers": True, "retry_after": True},
    "no_headers": {"rate_headers": False, "retry_after": True},
    "bare": {"rate_headers": False, "retry_after": False},
}


def run_scenario(name: str, args: argparse.Namespace, dataset: Path, work: Path) -> dict[str, Any]:
    from jurybox.config import config_from_mapping
    from jurybox.pipeline import run_async

    base = WireConfig(
        latency_s=args.latency_s, rpm=args.server_rpm, rate_window_s=args.window_s, seed=1
    )
    server_config = replace(base, **SCENARIOS[name])
    with spawn_server(server_config, max_lifetime_s=1800) as server:
        mapping = run_config(dataset, server.url, concurrency=args.concurrency, rpm=None)
        config = config_from_mapping(mapping)
        # Warm-up (imports, first connections), then a fresh server window and counters.
        asyncio.run(run_async(config, output_dir=work / f"{name}-warmup", limit=3))
        time.sleep(args.window_s + 0.1)
        server.reset()
        load = os.getloadavg()[0]
        wall0 = time.perf_counter()
        summary = asyncio.run(run_async(config, output_dir=work / name, limit=args.units // 2))
        wall = time.perf_counter() - wall0
        stats = server.stats()
        manifest = json.loads((work / name / "manifest.json").read_text())
    bound = summary.units_run / (args.server_rpm / 60.0)
    requests = int(stats["requests"])
    limited = int(stats["rate_limited"])
    return {
        "scenario": name,
        "units": summary.units_run,
        "concurrency": args.concurrency,
        "bound_s": bound,
        "wall_s": wall,
        "wall_over_bound": wall / bound,
        "requests": requests,
        "http_429": limited,
        "share_429": limited / requests if requests else 0.0,
        "lost": summary.status_counts.get("provider_error", 0),
        "lost_errors": _errors(work / name / "judgments.jsonl"),
        "load_before": load,
        "learned": manifest["judges"]["wire"].get("rate_limits"),
    }


def _errors(judgments: Path) -> list[str]:
    """The first few lost judgments' errors (what a lost judgment died of)."""
    errors = []
    for line in judgments.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["status"] == "provider_error" and len(errors) < 3:
            errors.append(f"{record['attempts']} attempts: {record['error']}")
    return errors


def print_table(rows: list[dict[str, Any]]) -> None:
    print(
        "| scenario | units | in flight | bound s | wall s | wall/bound | requests | 429s | "
        "% 429 | lost | learned (manifest) | load before |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['scenario']} | {r['units']} | {r['concurrency']} | {r['bound_s']:.1f} | "
            f"{r['wall_s']:.1f} | {r['wall_over_bound']:.3f} | {r['requests']} | "
            f"{r['http_429']} | {100 * r['share_429']:.1f} % | {r['lost']} | "
            f"{json.dumps(r['learned'])} | {r['load_before']:.2f} |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1000, help="work units (pairwise, 2/item)")
    parser.add_argument("--server-rpm", type=float, default=1200.0)
    parser.add_argument("--window-s", type=float, default=1.0, help="the server's rate window")
    parser.add_argument("--latency-s", type=float, default=0.25)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--scenarios", default="headers,no_headers")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{stamp}; {platform.platform()}; {os.cpu_count()} CPUs; load {os.getloadavg()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="jurybox-adaptive-") as tmp:
        work = Path(tmp)
        dataset = write_dataset(work / "items.jsonl", args.units // 2)
        for name in filter(None, args.scenarios.split(",")):
            rows.append(run_scenario(name, args, dataset, work))
            print(json.dumps(rows[-1]), flush=True)
    print(f"load after: {os.getloadavg()}")
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
