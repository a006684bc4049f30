"""CPU and wall time of each stage of ``jurybox analyze`` (the whole command: reading, analysis,
plots, the records pass, the explorer's pages, report.html), when each began, the RSS after it
and the peak by then, and the peak RSS.

Each stage is a function of the app or the reporting layer, timed where it is called
(``time.process_time``: every thread of the process; ``perf_counter``: wall); a stage the tree
does not have is left out. The records pass includes the pages (``pages`` is also shown apart).
Where a tree runs the pass in a forked process (before issue 32), the child prints its own
lines (``[pass]``), and the parent shows the children's CPU (``RUSAGE_CHILDREN``) and the peak
RSS of each process. Any tree's ``src`` can be timed, so that a change is measured against the
tree before it on the same machine, back to back:

    PYTHONPATH=<tree>/src python bench/report_stages.py JUDGMENTS DATASET OUT

Records: ``bench/analysis_scale.py`` writes synthetic runs (``--data-dir`` keeps them); a million
records (151,515 items) take some 3 minutes of CPU. Reports the load average before and after.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jurybox.app import analyze
from jurybox.reporting.explorer import paged
from jurybox.reporting.render import files

try:  # the pass in its own module (issue 19 on)
    from jurybox.reporting.render import records_pass
except ImportError:  # an older tree: the pass inside files.py
    records_pass = None  # type: ignore[assignment]

TIMES: dict[str, tuple[float, float]] = {}
STARTS: dict[str, float] = {}  # when each stage first began, seconds after analyze began
BEGAN = [0.0]  # perf_counter when analyze began (in the child: when the pass began)
ENDS: dict[str, tuple[float, float]] = {}  # RSS when each stage last ended, and the peak by then


def _rss_gb() -> tuple[float, float]:
    """This process's resident memory now and its peak so far, GB."""
    with open("/proc/self/statm") as statm:
        resident = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return resident / 1e9, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def _timed(owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` by the same function that adds its CPU and wall to ``label``
    (nothing where the tree has no such function)."""
    function: Callable[..., Any] | None = getattr(owner, name, None)
    if function is None:
        return

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        STARTS.setdefault(label, wall - BEGAN[0])
        try:
            return function(*args, **kwargs)
        finally:
            spent_cpu, spent_wall = TIMES.get(label, (0.0, 0.0))
            TIMES[label] = (
                spent_cpu + time.process_time() - cpu,
                spent_wall + time.perf_counter() - wall,
            )
            ENDS[label] = _rss_gb()

    setattr(owner, name, timed)


def _line(prefix: str, label: str, width: int) -> str:
    spent_cpu, spent_wall = TIMES[label]
    rss, peak = ENDS[label]
    return (
        f"{prefix}{label:{width}s} CPU {spent_cpu:7.1f} s   wall {spent_wall:7.1f} s"
        f"   from {STARTS[label]:5.1f} s   RSS after {rss:.2f} GB (peak {peak:.2f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("judgments", type=Path)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    _timed(analyze, "_judgments", "read the judgments into tables")
    _timed(analyze, "run_items", "read the dataset's items")
    _timed(analyze, "_streamed_report", "frame + analysis")  # before issue 32
    _timed(analyze, "frame_from_tables", "  of which the frame")
    _timed(analyze, "_frame", "the frame")
    _timed(analyze, "analyze_frame", "the analysis")
    _timed(files, "render", "plots")
    _timed(analyze, "write_pass", "records pass (with the pages)")  # before the analysis
    _timed(files, "write_pass", "records pass (with the pages)")
    if records_pass is not None:
        _timed(records_pass, "write_pass", "records pass (with the pages)")
        if hasattr(records_pass, "_child_pass"):
            _timed(records_pass.RecordsPass, "written", "  waited for the pass's answer")
            _in_child(records_pass)
    _timed(paged.PageWriter, "finish", "  of which the pages")
    _timed(files, "render_html", "render_html")
    load = os.getloadavg()
    cpu, wall = time.process_time(), time.perf_counter()
    BEGAN[0] = wall
    analyze.analyze_to_dir(args.judgments, human=None, dataset=args.dataset, out_dir=args.out)
    for label in TIMES:
        print(_line("", label, 32))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(
        f"{'total (after imports)':32s} CPU {time.process_time() - cpu:7.1f} s   "
        f"wall {time.perf_counter() - wall:7.1f} s   peak RSS {peak:.2f} GB"
    )
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if children.ru_utime + children.ru_stime:
        print(
            f"{'children (the forked pass)':32s} CPU {children.ru_utime + children.ru_stime:7.1f} s"
            f"   peak RSS {children.ru_maxrss / 1e6:.2f} GB"
        )
    print(f"load average before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")


def _in_child(module: Any) -> None:
    """In the forked pass, print its own stage times when it ends."""
    child_pass = module._child_pass

    @functools.wraps(child_pass)
    def timed(*args: Any, **kwargs: Any) -> Any:
        TIMES.clear()
        STARTS.clear()
        ENDS.clear()
        cpu, wall = time.process_time(), time.perf_counter()
        began = wall - BEGAN[0]
        try:
            return child_pass(*args, **kwargs)
        finally:
            for label in TIMES:
                print(_line("[pass] ", label, 25))
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
            print(
                f"[pass] {'child, all':25s} CPU {time.process_time() - cpu:7.1f} s   wall "
                f"{time.perf_counter() - wall:7.1f} s   from {began:5.1f} s   "
                f"peak RSS {peak:.2f} GB",
                flush=True,
            )

    module._child_pass = timed


if __name__ == "__main__":
    main()
