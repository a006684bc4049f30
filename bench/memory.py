"""Memory: peak RSS of runs of 10k, 50k and 100k work units against the local server.

Records are streamed to judgments.jsonl as they are made, so the memory a run holds should not
grow with the judgments it has written; what does grow with the run is what is planned up front
(the dataset's items, the work units, the batches). Each size runs in a *fresh subprocess*
(pairwise, both orders, cache off, one ``openai`` judge at ``wire_server.py`` with a low latency
and high concurrency) that reports:

* ``rss_imports_mb``: RSS once jurybox and the openai SDK are imported;
* ``rss_planned_mb``: RSS after the dataset is loaded and the units are planned;
* ``peak_rss_mb``: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end of the run;
* ``rss_samples_mb``: RSS sampled at 10 %, 50 % and 90 % of the records written.

Usage: ``python bench/memory.py [--sizes 10000,50000,100000] [--concurrency 128]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import run_config, write_dataset
from wire_server import WireConfig, spawn_server

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    """Current resident set size (Linux /proc)."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * _PAGE / 1024**2


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _sampler(path: Path, total: int, samples: dict[str, float], stop: threading.Event) -> None:
    """Record RSS when the judgments file passes 10 %, 50 % and 90 % of ``total`` lines."""
    marks = [(0.1, "10%"), (0.5, "50%"), (0.9, "90%")]
    lines, offset = 0, 0
    while marks and not stop.wait(0.25):
        try:
            with path.open("rb") as handle:  # only the bytes added since the last look
                handle.seek(offset)
                chunk = handle.read()
        except FileNotFoundError:
            continue
        offset += len(chunk)
        lines += chunk.count(b"\n")
        while marks and lines >= marks[0][0] * total:
            samples[marks.pop(0)[1]] = rss_mb()


def worker(config_path: Path, out_dir: Path) -> dict[str, Any]:
    """Fresh process: import, plan, run; RSS at each step."""
    import openai  # noqa: F401

    from jurybox.config import load_config
    from jurybox.pipeline.runner import Runtime, execute, load_inputs
    from jurybox.providers import openai as _openai_adapter  # noqa: F401 - imported before RSS

    rss_imports = rss_mb()
    config = load_config(config_path)
    inputs = load_inputs(config)
    rss_planned = rss_mb()
    samples: dict[str, float] = {}
    stop = threading.Event()
    watcher = threading.Thread(
        target=_sampler, args=(out_dir / "judgments.jsonl", len(inputs.units), samples, stop)
    )
    watcher.start()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        summary = asyncio.run(
            execute(inputs, out_dir, resume=False, console=None, runtime=Runtime())
        )
    finally:
        stop.set()
        watcher.join()
    return {
        "units": len(inputs.units),
        "records": sum(summary.status_counts.values()),
        "status_counts": {k: v for k, v in summary.status_counts.items() if v},
        "wall_s": time.perf_counter() - wall0,
        "cpu_ms_per_judgment": 1000 * (time.process_time() - cpu0) / len(inputs.units),
        "rss_imports_mb": rss_imports,
        "rss_planned_mb": rss_planned,
        "rss_samples_mb": samples,
        "rss_end_mb": rss_mb(),
        "peak_rss_mb": peak_mb(),
        "judgments_mb": (out_dir / "judgments.jsonl").stat().st_size / 1024**2,
    }


def measure(size: int, args: argparse.Namespace, work: Path, url: str) -> dict[str, Any]:
    folder = work / f"n{size}"
    folder.mkdir()
    dataset = write_dataset(folder / "items.jsonl", size // 2, chars=args.chars)
    # The SDK adapter, as in the figures recorded in BENCHMARKS.md (what is measured here is the
    # pipeline's memory; the adapter only changes the CPU per judgment).
    config = run_config(dataset, url, concurrency=args.concurrency, rpm=None, provider="openai")
    config_path = folder / "run.json"  # JSON is valid YAML
    config_path.write_text(json.dumps(config))
    command = [sys.executable, __file__, "--worker", str(config_path), str(folder / "out")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"worker failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,100000")
    parser.add_argument("--latency-s", type=float, default=0.005)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--chars", type=int, default=600, help="characters per response")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1])))
        return
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    results = []
    with (
        tempfile.TemporaryDirectory(prefix="jurybox-memory-") as tmp,
        spawn_server(WireConfig(latency_s=args.latency_s, seed=3), max_lifetime_s=3600) as srv,
    ):
        for size in (int(s) for s in args.sizes.split(",")):
            result = measure(size, args, Path(tmp), srv.url)
            results.append(result)
            print(json.dumps(result), flush=True)
    print(f"load average after: {os.getloadavg()}")
    print(
        "| units | RSS after imports MB | RSS after planning MB | RSS at 10/50/90 % MB | "
        "peak RSS MB | wall s | CPU ms/judgment |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        marks = "/".join(
            f"{r['rss_samples_mb'].get(k, float('nan')):.0f}" for k in ("10%", "50%", "90%")
        )
        print(
            f"| {r['units']} | {r['rss_imports_mb']:.0f} | {r['rss_planned_mb']:.0f} | {marks} | "
            f"{r['peak_rss_mb']:.0f} | {r['wall_s']:.0f} | {r['cpu_ms_per_judgment']:.2f} |"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
