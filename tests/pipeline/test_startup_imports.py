"""`jurybox run` starts instantly: no heavy library is imported on the run path (issue #19).

The CLI runs in a fresh interpreter (a test process has long since imported everything), and the
wrapper prints which of the heavy modules ended up in ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "scipy", "statsmodels", "matplotlib")
SRC = Path(__file__).resolve().parents[2] / "src"

# Runs the CLI as `python -m jurybox` would, then reports the heavy modules that were loaded.
_WRAPPER = """
import json, runpy, sys
heavy = json.loads(sys.argv[1])
sys.argv = ["jurybox", *sys.argv[2:]]
try:
    runpy.run_module("jurybox", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(name for name in sys.modules if name.split(".")[0] in heavy)
print("LOADED=" + json.dumps({"code": code, "loaded": loaded}))
"""

_CONFIG = """\
judges:
  j: {provider: fake}
task:
  mode: pairwise
  arms: [control, treatment]
paths:
  dataset: items.jsonl
  output_dir: out
"""


def _items(count: int) -> str:
    responses = {"control": "a", "treatment": "b"}
    rows = ({"id": f"i{n}", "question": f"q {n}", "responses": responses} for n in range(count))
    return "".join(json.dumps(row) + "\n" for row in rows)


def _run_cli(tmp_path: Path, *args: str) -> dict[str, object]:
    (tmp_path / "run.yaml").write_text(_CONFIG, encoding="utf-8")
    (tmp_path / "items.jsonl").write_text(_items(3), encoding="utf-8")
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, json.dumps(HEAVY), "run", "run.yaml", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    line = next((row for row in done.stdout.splitlines() if row.startswith("LOADED=")), None)
    assert line is not None, done.stdout + done.stderr
    assert '"code": 0' in line or '"code": null' in line, done.stderr
    result: dict[str, object] = json.loads(line.removeprefix("LOADED="))
    return result


@pytest.mark.parametrize("args", [("--dry-run",), ()], ids=["dry-run", "fake-run"])
def test_run_imports_no_heavy_library(tmp_path: Path, args: tuple[str, ...]) -> None:
    result = _run_cli(tmp_path, *args)
    assert result["code"] in (0, None), result  # stderr is in the assertion of _run_cli
    assert result["loaded"] == [], f"`jurybox run` imported {result['loaded']}"
    if not args:  # the real run did judge: the check is not vacuous
        assert (tmp_path / "out" / "judgments.jsonl").stat().st_size > 0
