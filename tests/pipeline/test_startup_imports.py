"""`jurybox run` starts instantly: no heavy library is imported on the run path (issue #19).

The CLI runs in a fresh interpreter (a test process has long since imported everything), and the
wrapper prints which of the watched modules ended up in ``sys.modules``. The lists below are what
``bench/startup.py`` measured as worth keeping off the path (BENCHMARKS.md, "Start-up", and its
history); each would cost tens to hundreds of milliseconds of start-up if it came back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

from wire_server import ThreadedWireServer  # noqa: E402

# The analysis stack: only `analyze`, `compare`, `export` and `load` need it.
HEAVY = ("pandas", "scipy", "statsmodels", "matplotlib", "numpy", "pyarrow")
# SDKs of vendors a config does not name (openai_compatible talks through aiohttp; openai's own
# HTTP stack is httpx2), and jsonschema, which only a criterion run's code checks use.
UNUSED_SDKS = ("openai", "httpx2", "anthropic", "google.genai", "llama_cpp", "ray", "jsonschema")
# Only a dry run or a batch run needs these: estimates, the batch plan and its tables.
DRY_RUN_ONLY = ("jurybox.app.batches", "jurybox.pipeline.dryrun")
# Only a --batch run needs the batch machinery (its plan, log, engine and vendor backends).
BATCH_ONLY = ("jurybox.pipeline.batch", "jurybox.providers.batch")
# Only a run with a rubric or criterion files builds their pydantic models.
RUBRIC_ONLY = ("jurybox.rubrics.model", "jurybox.rubrics.criteria")
# Only a run with the response cache on opens SQLite.
CACHE_ONLY = ("sqlite3",)
# `jurybox --help` and `jurybox run --help` need click alone (the trust flags' help included).
NOT_FOR_HELP = ("pydantic", "rich", "asyncio", "yaml", "jinja2", "aiohttp", "importlib.metadata")

# Runs the CLI as `python -m jurybox` would, then reports the watched names that were loaded
# (a name is loaded when it or one of its submodules is).
_WRAPPER = """
import contextlib, io, json, runpy, sys
watched = json.loads(sys.argv[1])
sys.argv = ["jurybox", *sys.argv[2:]]
def loaded_now():
    return [w for w in watched if any(n == w or n.startswith(w + ".") for n in sys.modules)]
at_first_request = None
def on_connect(event, args):  # the first TCP connect is the judge's first request
    global at_first_request
    if event == "socket.connect" and at_first_request is None:
        at_first_request = loaded_now()
sys.addaudithook(on_connect)
help_text = io.StringIO()
try:
    with contextlib.redirect_stdout(help_text):
        runpy.run_module("jurybox", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
result = {"code": code, "loaded": loaded_now(), "at_first_request": at_first_request}
print("LOADED=" + json.dumps({**result, "out": help_text.getvalue()}))
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


# One keyless judge on a local OpenAI-compatible server (the benchmark's set-up).
_WIRE_CONFIG = """\
judges:
  j: {{provider: openai_compatible, model: wire-judge, base_url: "{url}", api_key_env: null}}
task:
  mode: pairwise
pipeline: {{cache: false, test_retest_count: 0}}
paths:
  dataset: items.jsonl
  output_dir: out
"""


def _run_cli(
    tmp_path: Path,
    *args: str,
    watched: tuple[str, ...] = HEAVY,
    config: str = _CONFIG,
    command: tuple[str, ...] = ("run", "run.yaml"),
) -> dict[str, object]:
    (tmp_path / "run.yaml").write_text(config, encoding="utf-8")
    (tmp_path / "items.jsonl").write_text(_items(3), encoding="utf-8")
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    # Loopback only: a proxy variable of the machine's would send the calls another way.
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PYTHONPATH"] = path
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, json.dumps(watched), *command, *args],
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
    watched = (*HEAVY, *UNUSED_SDKS, *(DRY_RUN_ONLY if not args else ()))
    result = _run_cli(tmp_path, *args, watched=watched)
    assert result["code"] in (0, None), result  # stderr is in the assertion of _run_cli
    assert result["loaded"] == [], f"`jurybox run` imported {result['loaded']}"
    if not args:  # the real run did judge: the check is not vacuous
        assert (tmp_path / "out" / "judgments.jsonl").stat().st_size > 0


def test_openai_compatible_run_imports_no_unused_sdk(tmp_path: Path) -> None:
    """A real run of an openai_compatible judge against a loopback server: its first request
    goes out without the analysis stack, other vendors' SDKs, the dry-run/batch modules, the
    rubric models or sqlite3 (its cache is off); aiohttp, its HTTP client, is loaded."""
    lazy = (*DRY_RUN_ONLY, *BATCH_ONLY, *RUBRIC_ONLY, *CACHE_ONLY)
    watched = (*HEAVY, *UNUSED_SDKS, *lazy, "aiohttp")
    with ThreadedWireServer() as server:
        config = _WIRE_CONFIG.format(url=server.url)
        result = _run_cli(tmp_path, watched=watched, config=config)
        assert server.stats()["ok"] == 6  # 3 items x 2 orders really went over the wire
    # The client that made the calls: seeing it shows the watch list sees loads.
    assert result["loaded"] == ["aiohttp"], f"`jurybox run` imported {result['loaded']}"


# Needed by a run only after its first request (the progress bar off a terminal, the summary,
# the answer parsers, the typed results and the rubric scoring of what a judge said): loaded
# later, so they cost the first request nothing.
AFTER_FIRST_REQUEST = (
    "rich",
    "jurybox.parsing",
    "jurybox.modes.results",
    "jurybox.modes.scoring",
    "jurybox.rubrics.scoring",
    "jurybox.pipeline.summary",
)


def test_first_request_goes_out_before_what_only_the_end_needs(tmp_path: Path) -> None:
    """Off a terminal (the test captures stderr) the first request of an openai_compatible run
    is sent before rich (the summary printed at the end), the answer parsers, the result types,
    the rubric scoring and the run summary are imported; all but the rubric scoring (this
    pairwise run has no rubric) are imported by the end."""
    with ThreadedWireServer() as server:
        config = _WIRE_CONFIG.format(url=server.url)
        result = _run_cli(tmp_path, watched=AFTER_FIRST_REQUEST, config=config)
        assert server.stats()["ok"] == 6
    assert result["at_first_request"] == [], f"loaded before: {result['at_first_request']}"
    scoring = ("jurybox.modes.scoring", "jurybox.rubrics.scoring")
    needed = [name for name in AFTER_FIRST_REQUEST if name not in scoring]
    assert result["loaded"] == needed  # the watch sees what loads


def test_dry_run_of_openai_compatible_imports_no_sdk(tmp_path: Path) -> None:
    result = _run_cli(
        tmp_path,
        "--dry-run",
        watched=(*HEAVY, *UNUSED_SDKS, "aiohttp"),
        config=_WIRE_CONFIG.format(url="http://127.0.0.1:9/v1"),
    )
    assert result["loaded"] == [], f"`jurybox run --dry-run` imported {result['loaded']}"


@pytest.mark.parametrize("command", [("--help",), ("run", "--help"), ("analyze", "--help")])
def test_help_needs_click_alone(tmp_path: Path, command: tuple[str, ...]) -> None:
    result = _run_cli(tmp_path, watched=NOT_FOR_HELP, command=command)
    assert result["code"] in (0, None), result
    assert "Usage: " in str(result["out"])  # the help was printed, not an error
    if command[0] == "analyze":  # read from TrustThresholds when shown, so pydantic is loaded
        assert "Trust threshold `min_accuracy` (default 0.7)" in str(result["out"])
    else:
        assert result["loaded"] == [], f"`jurybox {' '.join(command)}` imported {result['loaded']}"
