"""Analysis at scale: ~66,000 synthetic judgments, then twice that; or ``--records 1000000``.

The synthetic run is rubric mode (built-in ``general`` rubric: 5 dimensions), two arms
(control / treatment), 3 judges, ``--items`` items, every item judged once per arm by every judge,
plus a retest of the first ``--retest-share`` of the items; 1 % of the records are failures
(unparsed / provider_error) and the first ``--human-items`` items carry human scores. Judges have
a planted leniency, verbosity and self-preference so that every metric family has work to do.

Records are written to a judgments.jsonl and read back in a *fresh subprocess* under an
address-space cap (``RLIMIT_AS``, ``--memory-cap-gb``, 4 GB by default), either the way
``jurybox analyze`` reads them (``--reader streamed``: ``read_judgments`` (pyarrow.json, the
frame's columns) -> ``build_frame``, no record objects) or as records held in memory
(``--reader list``: ``read_records`` -> ``build_frame``). A tree before issue 32 is read its
own way (``PYTHONPATH=<tree>/src``). The subprocess prints the
seconds (wall, and CPU of the process) spent reading + building the frame and in each metric
family, and its peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``). Issue 19's target:
1,000,000 records in <= 60 s and <= 4 GB. ``--profile`` runs cProfile in the subprocess and
prints the top hot spots by own time and by cumulative time.

Usage: ``python bench/analysis_scale.py [--items 10000 | --records 1000000] [--factors 1,2]
[--reader streamed|list] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ARMS = ("control", "treatment")
DIMS = ("accuracy", "relevance", "completeness", "conciseness", "clarity")
WEIGHTS = np.array([0.3, 0.2, 0.2, 0.15, 0.15])
JUDGES = {  # name: (family, leniency, noise, verbosity, self bonus)
    "gpt": ("openai", 0.3, 0.7, 0.4, 0.5),
    "claude": ("anthropic", -0.2, 0.6, 0.1, 0.3),
    "gemini": ("google", 0.0, 0.9, 0.2, 0.0),
}
FAMILIES = tuple(spec[0] for spec in JUDGES.values())
STAMP = "2026-11-22T00:00:00.000+00:00"


def _item_rows(n_items: int, rng: np.random.Generator, human_items: int) -> list[dict[str, Any]]:
    lengths = rng.integers(200, 2400, size=(n_items, 2))
    rows = []
    for i in range(n_items):
        authors = {arm: str(FAMILIES[(i + k) % 3]) for k, arm in enumerate(ARMS)}
        row: dict[str, Any] = {
            "id": f"q{i:06d}",
            "question": f"Question {i}?",
            "responses": {arm: "x" * int(lengths[i, k]) for k, arm in enumerate(ARMS)},
            "metadata": {
                "category": ("math", "writing", "code", "facts")[i % 4],
                "difficulty": ("easy", "medium", "hard")[i % 3],
                "normal": i % 5 < 2,
            },
            "authors": authors,
        }
        rows.append(row)
    for row in rows[:human_items]:
        row["human"] = {
            "scores": {arm: {d: int(rng.integers(1, 11)) for d in DIMS} for arm in ARMS}
        }
    return rows


def _record(
    qid: str, judge: str, arm: str, *, retest: bool, scores: np.ndarray, status: str
) -> dict[str, Any]:
    family = JUDGES[judge][0]
    ok = status == "ok"
    by_dim = {d: float(s) for d, s in zip(DIMS, scores, strict=True)}
    raw = json.dumps(
        {
            "scores": {
                d: {
                    "reasoning": "Adequate, with minor issues in places.",
                    "score": int(s),
                    "confidence": 4,
                }
                for d, s in by_dim.items()
            }
        }
    )
    return {
        "key": f"{qid}|{judge}|{arm}|r0" + ("|retest" if retest else ""),
        "run_id": "bench-analysis-scale",
        "query_id": qid,
        "judge_name": judge,
        "judge_model": f"{judge}-model",
        "judge_vendor": family,
        "mode": "rubric",
        "presentation_order": arm,
        "positions": {"A": arm},
        "status": status,
        "parse_success": ok,
        "raw_response": raw if status != "provider_error" else None,
        "timestamp": STAMP,
        "retest": retest,
        "error": None if ok else f"simulated {status}",
        "parse_method": "native" if ok else None,
        "scores": {arm: by_dim} if ok else None,
        "confidences": {arm: dict.fromkeys(DIMS, 4.0)} if ok else None,
        "overall": {arm: float(np.dot(WEIGHTS, scores))} if ok else None,
        "gate_failures": {arm: ["accuracy"] if scores[0] <= 2 else []} if ok else None,
        "input_tokens": 900,
        "output_tokens": 120,
        "latency_ms": 850.0,
    }


def generate(
    directory: Path, n_items: int, *, retest_share: float, human_items: int, seed: int = 0
) -> tuple[Path, Path, int]:
    """Write items.jsonl and judgments.jsonl; returns their paths and the record count."""
    rng = np.random.default_rng(seed)
    rows = _item_rows(n_items, rng, human_items)
    items_path, records_path = directory / "items.jsonl", directory / "judgments.jsonl"
    with items_path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    quality = rng.normal(6.0, 1.3, size=(n_items, 2, 1)) + rng.normal(0, 0.6, (n_items, 2, 5))
    quality[:, 1, 0] += 0.5  # treatment is better on accuracy
    n_retest = int(n_items * retest_share)
    count = 0
    with records_path.open("w", encoding="utf-8") as handle:
        for judge, (family, leniency, noise, verbosity, bonus) in JUDGES.items():
            for retest in (False, True):
                n = n_retest if retest else n_items
                lengths = np.array([[len(r["responses"][a]) for a in ARMS] for r in rows[:n]])
                own = np.array([[r["authors"][a] == family for a in ARMS] for r in rows[:n]])
                z = (lengths - 1300) / 630
                raw = (
                    quality[:n]
                    + leniency
                    + verbosity * z[..., None]
                    + bonus * own[..., None]
                    + rng.normal(0, noise, size=(n, 2, 5))
                )
                scores = np.clip(np.rint(raw), 1, 10)
                fails = rng.random((n, 2))
                for i in range(n):
                    for k, arm in enumerate(ARMS):
                        status = (
                            "unparsed"
                            if fails[i, k] < 0.005
                            else "provider_error"
                            if fails[i, k] < 0.01
                            else "ok"
                        )
                        record = _record(
                            rows[i]["id"],
                            judge,
                            arm,
                            retest=retest,
                            scores=scores[i, k],
                            status=status,
                        )
                        handle.write(json.dumps(record) + "\n")
                        count += 1
    return items_path, records_path, count


# The worker's allocators. Under an address-space cap (RLIMIT_AS) what counts is address space
# reserved, not memory used: pyarrow's default pool (mimalloc) reserves arenas of 1 GiB of
# address space ahead of use, and glibc gives each thread that allocates its own 64 MB heap
# reservation (up to 8 per core). "lean" asks mimalloc for 64 MiB arenas and glibc for at most
# two: at 100k records the peak address space drops from ~2.2 GB to ~1.1 GB, resident memory
# unchanged. (Arrow on the system allocator, ARROW_DEFAULT_MEMORY_POOL=system, reserves as
# little but held ~250 MB more resident memory at a million records.)
ALLOCATORS: dict[str, dict[str, str]] = {
    "default": {},
    "lean": {"MIMALLOC_ARENA_RESERVE": "64MiB", "MALLOC_ARENA_MAX": "2"},
}


def _timed_families(timings: dict[str, float], memory: dict[str, list[float]]) -> None:
    """Wrap each metric family in ``jurybox.analysis.report`` to record its seconds, and the
    resident memory after it: [now, peak so far] MB (which family raises the peak)."""
    from jurybox.analysis import report

    for name in [n for n in dir(report) if n.startswith("analyze_") and n != "analyze_records"]:
        func = getattr(report, name)
        if name == "analyze_frame" or not callable(func):
            continue

        def wrapped(*args: Any, _f: Callable[..., Any] = func, _n: str = name, **kw: Any) -> Any:
            start = time.perf_counter()
            timings[_n] = -1.0  # running: a failure names this family
            result = _f(*args, **kw)
            timings[_n] = time.perf_counter() - start
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
            memory[_n] = [round(_rss_mb()), round(peak)]
            return result

        setattr(report, name, wrapped)


def _rss_mb() -> float:
    """Resident memory now (Linux /proc; the peak is getrusage's)."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        pages = int(handle.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1024**2


def _peak_address_space_mb() -> float:
    """Peak address space (``VmPeak``): what ``RLIMIT_AS`` caps, reserved or resident."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def _memory_cap(gigabytes: float) -> None:
    """Cap the address space so that a runaway allocation fails here, not on the whole machine."""
    limit = int(gigabytes * 1024**3)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _read_frame(records_path: Path, items: Any, options: Any, reader: str) -> Any:
    """The analysis frame, read as ``jurybox analyze`` reads it (streamed) or as a list."""
    from jurybox.analysis import build_frame
    from jurybox.io.judgments import read_records

    if reader == "list":
        records = list(read_records(records_path))
        return build_frame(records, human=None, items=items, options=options)
    try:
        from jurybox.analysis.frame_columns import FRAME_FIELDS
        from jurybox.io.record_table import read_judgments
    except ImportError:  # a tree before issue 32
        from jurybox.analysis.frame import frame_from_tables, record_tables
        from jurybox.io.judgments import read_line_blocks

        tables = record_tables(read_line_blocks(records_path))
        return frame_from_tables(tables, human=None, items=items, options=options)
    judged = read_judgments(records_path, FRAME_FIELDS)
    return build_frame(judged, human=None, items=items, options=options)


def worker(
    items_path: Path, records_path: Path, profile: Path | None, reader: str
) -> dict[str, Any]:
    """Runs in a fresh subprocess: read, build the frame, analyse; times and peak RSS."""
    t0 = time.perf_counter()
    from jurybox.analysis import AnalysisOptions, analyze_frame
    from jurybox.io.datasets import load_dataset

    import_s = time.perf_counter() - t0
    timings: dict[str, float] = {}
    memory: dict[str, list[float]] = {}
    _timed_families(timings, memory)
    profiler = cProfile.Profile() if profile is not None else None
    if profiler is not None:
        profiler.enable()
    t1 = time.perf_counter()
    items = load_dataset(items_path)
    t2 = time.perf_counter()
    c3 = time.process_time()
    t3 = time.perf_counter()
    options = AnalysisOptions(control_arm="control", treatment_arm="treatment", seed=0)
    frame = _read_frame(records_path, items, options, reader)
    t4 = time.perf_counter()
    c4 = time.process_time()
    n_records = len(frame.records)
    rss_after_frame = _rss_mb()
    peak_after_frame = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    try:
        report = analyze_frame(frame, options)
    except MemoryError as exc:
        failed = next((k for k in timings if timings[k] < 0), "?")
        frames = traceback.extract_tb(exc.__traceback__)[-2:]
        where = " <- ".join(f"{Path(f.filename).name}:{f.name}" for f in reversed(frames))
        return {
            "records": n_records,
            "reader": reader,
            "read_frame_s": t4 - t3,
            "read_frame_cpu_s": c4 - c3,
            "rss_after_frame_mb": rss_after_frame,
            "peak_rss_after_frame_mb": peak_after_frame,
            "error": f"MemoryError in {failed} at {where} (address space capped)",
            "families_s": {k: v for k, v in timings.items() if v >= 0},
            "families_rss_mb": memory,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "peak_vm_mb": _peak_address_space_mb(),
            "seconds_before_failure": time.perf_counter() - t3,
        }
    t5 = time.perf_counter()
    c5 = time.process_time()
    if profiler is not None and profile is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    dumped = report.model_dump(mode="json")  # the report must serialise; not timed
    return {
        "records": n_records,
        "reader": reader,
        "import_s": import_s,
        "load_items_s": t2 - t1,
        "read_frame_s": t4 - t3,  # reading judgments.jsonl + building the frame
        "read_frame_cpu_s": c4 - c3,
        "analyze_frame_s": t5 - t4,
        "analyze_frame_cpu_s": c5 - c4,
        "analyze_records_s": t5 - t3,  # judgments.jsonl -> report (items loaded before)
        "analyze_records_cpu_s": c5 - c3,
        "total_s": t5 - t1,
        "families_s": timings,
        "families_rss_mb": memory,  # after each family: [resident now, peak so far]
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "peak_vm_mb": _peak_address_space_mb(),
        "rss_after_frame_mb": rss_after_frame,
        "peak_rss_after_frame_mb": peak_after_frame,
        "load_average": os.getloadavg(),
        "verdict": dumped["verdict"]["level"],
        "skipped_families": sorted(
            k for k, v in dumped.items() if isinstance(v, dict) and v.get("status") == "skipped"
        ),
    }


def run_worker(
    items_path: Path, records_path: Path, profile: Path | None, options: argparse.Namespace
) -> dict[str, Any]:
    args = [
        sys.executable,
        __file__,
        "--worker",
        str(items_path),
        str(records_path),
        "--memory-cap-gb",
        str(options.memory_cap_gb),
        "--reader",
        options.reader,
    ]
    if profile is not None:
        args += ["--profile-out", str(profile)]
    env = {**os.environ, **ALLOCATORS[options.allocator]}
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=3600, env=env)
    if done.returncode != 0:
        # A negative code is a signal: an allocation that failed in C under the cap aborts.
        raise RuntimeError(f"worker failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def print_profile(path: Path, top: int = 25) -> None:
    stats = pstats.Stats(str(path))
    for key in ("tottime", "cumulative"):
        print(f"\n-- cProfile ({path.name}), top {top} by {key} --")
        stats.sort_stats(key).print_stats(top)


def print_results(results: list[dict[str, Any]]) -> None:
    print(
        "| records | reader | read + frame s (CPU) | families s (CPU) | total s (CPU) | "
        "peak RSS / address space MB | load | slowest families s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        slow = sorted(r["families_s"].items(), key=lambda kv: -kv[1])[:3]
        slowest = ", ".join(f"{k.removeprefix('analyze_')} {v:.1f}" for k, v in slow)
        if "error" in r:
            print(
                f"| {r['records']} | {r['reader']} | {r['read_frame_s']:.1f} "
                f"({r['read_frame_cpu_s']:.1f}) | failed: {r['error']} after "
                f"{r['seconds_before_failure']:.1f} s | | {r['peak_rss_mb']:.0f} / "
                f"{r.get('peak_vm_mb', float('nan')):.0f} | | "
                f"{slowest} |"
            )
            continue
        print(
            f"| {r['records']} | {r['reader']} | {r['read_frame_s']:.1f} "
            f"({r['read_frame_cpu_s']:.1f}) | {r['analyze_frame_s']:.1f} "
            f"({r['analyze_frame_cpu_s']:.1f}) | {r['analyze_records_s']:.1f} "
            f"({r['analyze_records_cpu_s']:.1f}) | {r['peak_rss_mb']:.0f} / "
            f"{r.get('peak_vm_mb', float('nan')):.0f} | "
            f"{r['load_average'][0]:.1f} | {slowest} |"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument(
        "--records", type=int, help="about this many records (sets --items; 6.6 per item)"
    )
    parser.add_argument("--factors", default="1,2", help="sizes, as multiples of --items")
    parser.add_argument("--reader", choices=("streamed", "list"), default="streamed")
    parser.add_argument(
        "--data-dir", type=Path, help="keep the generated files here and reuse them next time"
    )
    parser.add_argument("--retest-share", type=float, default=0.1)
    parser.add_argument("--human-items", type=int, default=500)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--memory-cap-gb",
        type=float,
        default=4.0,
        help="address-space cap of the analysing subprocess",
    )
    parser.add_argument(
        "--allocator",
        choices=sorted(ALLOCATORS),
        default="default",
        help="the worker's allocators: default, or lean (MIMALLOC_ARENA_RESERVE=64MiB for "
        "pyarrow's pool, MALLOC_ARENA_MAX=2: less address space reserved, for "
        "--memory-cap-gb)",
    )
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _memory_cap(args.memory_cap_gb)
        print(json.dumps(worker(args.worker[0], args.worker[1], args.profile_out, args.reader)))
        return
    if args.records:
        per_item = len(JUDGES) * len(ARMS) * (1 + args.retest_share)
        args.items = round(args.records / per_item)
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    results = []
    with tempfile.TemporaryDirectory(prefix="jurybox-analysis-scale-") as tmp:
        for factor in [int(f) for f in args.factors.split(",")]:
            base = args.data_dir or Path(tmp)
            folder = base / f"items{args.items * factor}"
            items, records = folder / "items.jsonl", folder / "judgments.jsonl"
            if records.exists():  # generated by an earlier run with --data-dir
                with records.open("rb") as handle:
                    count = sum(1 for _ in handle)
            else:
                folder.mkdir(parents=True, exist_ok=True)
                items, records, count = generate(
                    folder,
                    args.items * factor,
                    retest_share=args.retest_share,
                    human_items=args.human_items,
                )
            profile = folder / "analysis.prof" if args.profile and factor == 1 else None
            result = {
                "factor": factor,
                "items": args.items * factor,
                "records_written": count,
                "allocator": args.allocator,
                **run_worker(items, records, profile, args),
            }
            results.append(result)
            print(json.dumps(result), flush=True)
            if profile is not None:
                print_profile(profile)
    print(f"load average after: {os.getloadavg()}")
    print_results(results)
    ratio = None
    if len(results) == 2 and all("error" not in r for r in results):
        ratio = results[1]["analyze_records_s"] / results[0]["analyze_records_s"]
        print(f"2x / 1x time ratio (analyze_records): {ratio:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "ratio": ratio}, indent=2))


if __name__ == "__main__":
    main()
