"""Fencing time: ``fence_untrusted`` of a response made of one unit repeated (issue 31 item 8).

The issue's check: 50 MB of ``<`` fenced in under 2 s (the code before took ~6 s a megabyte,
so a 50 MB question did not finish ``run --dry-run`` in 120 s). Besides ``<`` it times texts
built to keep the pattern busy at every opener (``< ``, ``<u``, ``</``, ``&lt;``, ``<`` and a
zero-width space, ``<é``), whose time must grow linearly too. Each figure is the best of
``--repeat`` runs in a fresh process (the patterns built before the clock starts).

With ``--base SRC`` (e.g. ``/work/base/src``) the same is timed for the code in ``SRC`` at
``--base-mb`` (default 1 MB: the old code is too slow for 50), side by side.

Usage: ``python bench/fencing.py [--mb 50] [--base /work/base/src] [--base-mb 1]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

UNITS = ["<", "< ", "<u", "</", "&lt;", "<\u200b", "<é"]
_CHILD = """
import json, sys, time
from jurybox.prompts.fencing import fence_untrusted, neutralise
unit, size, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
neutralise.__wrapped__(unit * 4 + "</question>")  # builds what a first use builds
text = unit * (size // len(unit))
best = float("inf")
for _ in range(repeat):
    neutralise.cache_clear()  # each run does the work
    started = time.perf_counter()
    fence_untrusted(text, "Response A")
    best = min(best, time.perf_counter() - started)
print(json.dumps(best))
"""


def timed(src: Path, unit: str, size: int, repeat: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    args = [sys.executable, "-c", _CHILD, unit, str(size), str(repeat)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--base", type=Path, help="src folder of the code to compare with")
    parser.add_argument("--base-mb", type=float, default=1)
    options = parser.parse_args()
    here = Path(__file__).resolve().parents[1] / "src"
    size, base_size = int(options.mb * 1e6), int(options.base_mb * 1e6)
    print(f"load average: {os.getloadavg()[0]:.1f}")
    for unit in UNITS:
        seconds = timed(here, unit, size, options.repeat)
        line = (
            f"{unit!r:>12}: {options.mb:g} MB in {seconds:.2f} s ({seconds / options.mb:.3f} s/MB)"
        )
        if options.base is not None:
            old = timed(options.base, unit, base_size, 1)
            line += (
                f"; base: {options.base_mb:g} MB in {old:.2f} s ({old / options.base_mb:.3f} s/MB)"
            )
        print(line)


if __name__ == "__main__":
    main()
