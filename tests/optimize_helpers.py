"""Builders of the optimize tests (tests/devloop/test_optimize.py, tests/chaos/
test_optimize_wire.py): labelled pairwise items, configs, and a scripted rule judge."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from jurybox.app.optimize import OptimizeOptions, optimize
from jurybox.providers.fake import FakeProvider
from jurybox.records import CompletionRequest

RULE = "checkmark-rule"
MARKER = "[checked]"
VARIANTS = [
    {"name": "helpful", "text": "Prefer the response that helps the user most."},
    {"name": "rule", "text": f"Prefer the response marked {MARKER} ({RULE})."},
    {"name": "concise", "text": "Prefer the shorter, more direct response."},
]
# Six variants, one holding the rule word (the chaos test's candidate file).
SIX_VARIANTS = [
    *VARIANTS,
    {"name": "correct", "text": "Prefer the response whose facts are correct."},
    {"name": "polite", "text": "Prefer the more polite and respectful response."},
    {"name": "detailed", "text": "Prefer the response that explains its reasoning in detail."},
]
_SHOWN = re.compile(
    r'<untrusted_response label="Response ([AB])">\n(.*?)\n</untrusted_response>', re.S
)


def write_items(folder: Path, n: int = 40) -> Path:
    """Two-arm items whose right answer carries the marker (treatment on even items)."""
    lines = []
    for number in range(n):
        right = "treatment" if number % 2 == 0 else "control"
        wrong = "control" if right == "treatment" else "treatment"
        responses = {right: f"Answer {number:03d} {MARKER}", wrong: f"Answer {number:03d}, plain"}
        lines.append(
            {
                "id": f"q{number:03d}",
                "question": f"Question q{number:03d}: which answer applies the house rule?",
                "responses": {arm: responses[arm] for arm in ("control", "treatment")},
                "human": {"preferred_arm": right},
            }
        )
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_base(folder: Path, *, judge: Mapping[str, Any] | None = None, **task: Any) -> Path:
    data = {
        "judges": {"rules": dict(judge or {"provider": "fake"})},
        "task": {"mode": "pairwise", "arms": ["control", "treatment"], **task},
        "pipeline": {"random_seed": 7, "test_retest_count": 2},
        "paths": {"dataset": "items.jsonl", "output_dir": "results/run"},
    }
    path = folder / "judge.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def write_optimize(
    folder: Path, variants: list[Any] | None = None, name: str = "optimize.yaml", **extra: Any
) -> Path:
    (folder / "variants.yaml").write_text(yaml.safe_dump(variants or VARIANTS), encoding="utf-8")
    data = {"base": "judge.yaml", "instructions": "variants.yaml", **extra}
    path = folder / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def setup(folder: Path, n: int = 40, **extra: Any) -> Path:
    write_items(folder, n)
    write_base(folder)
    return write_optimize(folder, **extra)


def rule_verdict(request: CompletionRequest) -> str:
    """The marked response when the system prompt holds the rule, else the first shown."""
    if RULE not in request.system:
        return "A"
    shown = dict(_SHOWN.findall(request.user))
    return "A" if MARKER in shown["A"] else "B"


def rule_judge(fail: Callable[[CompletionRequest], bool] | None = None) -> FakeProvider:
    """The scripted rule judge; a request ``fail`` picks fails for good (a provider error)."""

    def reply(request: CompletionRequest) -> Any:
        if fail is not None and fail(request):
            return RuntimeError("scripted failure")
        verdict = rule_verdict(request)
        return json.dumps({"reasoning": "scripted", "verdict": verdict, "confidence": "high"})

    return FakeProvider("rule-judge", reply_fn=reply)


def run_optimize(
    config: Path | None,
    providers: Mapping[str, Any],
    *,
    resume: Path | None = None,
    **options: Any,
) -> dict[str, Any]:
    lines: list[str] = []
    report: dict[str, Any] = optimize(
        config,
        resume=resume,
        options=OptimizeOptions(providers=providers, echo=lines.append, **options),
    )
    return report


def questions(path: Path) -> list[str]:
    return [json.loads(line)["question"] for line in path.read_text("utf-8").splitlines()]
