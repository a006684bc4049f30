"""CPU and wall time of the first three stages of ``jurybox analyze``: reading the judgments
into tables, reading the dataset's items, and building the frame + every metric family (issue 19).

The same functions ``analyze_to_dir`` calls, in its order, without the plots, the records pass
and the pages (``bench/report_stages.py`` times the whole command). Writes the report's JSON
(``Report.model_dump_json``: every float as Python writes it, nothing rounded) to ``--report``,
so that two trees' reports can be compared (``--compare OTHER.json``: the paths whose values
differ, or that none does). Any tree's ``src`` can be timed, back to back on one machine:

    PYTHONPATH=<tree>/src python bench/analysis_stages.py JUDGMENTS DATASET --report OUT.json

Prints the load average before and after: on a shared machine the CPU times are the figures
to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console

from jurybox.analysis import AnalysisOptions
from jurybox.app import analyze
from jurybox.app.sources import declared_scale, run_items, run_judges, run_sources
from jurybox.thresholds import TrustThresholds


def _timed(label: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    cpu, wall = time.process_time(), time.perf_counter()
    found = function(*args, **kwargs)
    spent_cpu, spent_wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{label:32s} CPU {spent_cpu:7.2f} s   wall {spent_wall:7.2f} s", flush=True)
    return found


def _differences(mine: Any, theirs: Any, path: str = "$") -> list[str]:
    """The paths where two JSON values differ (the package version left out)."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        keys = sorted((set(mine) | set(theirs)) - {"version"})
        return [d for k in keys for d in _differences(mine.get(k), theirs.get(k), f"{path}.{k}")]
    if isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        pairs = enumerate(zip(mine, theirs, strict=True))
        return [d for i, (a, b) in pairs for d in _differences(a, b, f"{path}[{i}]")]
    return [] if mine == theirs else [f"{path}: {mine!r} != {theirs!r}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", type=Path)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--report", type=Path, help="write the report's JSON here")
    parser.add_argument("--compare", type=Path, help="a report JSON to compare with")
    args = parser.parse_args()
    load = os.getloadavg()
    console = Console(stderr=True, quiet=True)
    cpu, wall = time.process_time(), time.perf_counter()
    path = analyze._judgments_file(args.judgments)
    read = _timed("read the judgments into tables", analyze._judgments, path, console)
    sources = run_sources(read.path, dataset=args.dataset, human=None)
    items = _timed("read the dataset's items", run_items, read.path, sources)
    options = AnalysisOptions(
        judge_families=read.tables.judge_families(),
        thresholds=TrustThresholds(),
        score_scale=declared_scale(read.path),
        run_judges=run_judges(read.path),
    )
    report, _ = _timed(
        "frame + analysis",
        analyze._streamed_report,
        read,
        human=None,
        items=items,
        options=options,
        label_source=None,
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(
        f"{'three stages':32s} CPU {time.process_time() - cpu:7.2f} s   "
        f"wall {time.perf_counter() - wall:7.2f} s   peak RSS {peak:.2f} GB"
    )
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    report = analyze._with_input_screen(report, read.tables.dropped, None)
    text = report.model_dump_json(indent=1)
    if args.report:
        args.report.write_text(text, encoding="utf-8")
    if args.compare:
        found = _differences(json.loads(text), json.loads(args.compare.read_text("utf-8")))
        print("\n".join(found[:20]) if found else f"report identical to {args.compare}")


if __name__ == "__main__":
    main()
