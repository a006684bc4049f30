"""``python -c`` in a fresh interpreter with this checkout's ``src`` first on the path: what a
module does at import, seen from a process that has imported nothing yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def run_python(code: str, *paths: Path) -> str:
    """What ``code`` prints (stripped), ``paths`` on ``PYTHONPATH`` after ``src``."""
    path = [str(SRC), *map(str, paths), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()
