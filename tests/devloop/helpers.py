"""Builders shared by the devloop tests: a split of the example, configs, scripted judges."""

from __future__ import annotations

import html
import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from jurybox.io.datasets import load_dataset
from jurybox.providers.fake import FakeProvider
from jurybox.records import CompletionRequest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LABELLED = EXAMPLES / "labelled.jsonl"
TRACES = EXAMPLES / "traces.jsonl"
DEVLOOP = EXAMPLES / "devloop"


def copy_criteria(folder: Path, *names: str) -> list[Path]:
    """Copy example criteria (and checks.py) so a test may edit them."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEVLOOP / "checks.py", folder / "checks.py")
    return [Path(shutil.copy(DEVLOOP / name, folder / name)) for name in names]


def write_loop(
    path: Path,
    split: Path,
    criteria: Iterable[str | Path],
    *,
    judge: Mapping[str, Any] | None = None,
    **extra: Any,
) -> Path:
    data: dict[str, Any] = {
        "split": str(split),
        "run_dir": str(path.parent / "runs"),
        "criteria": [str(c) for c in criteria],
        "traces": str(TRACES),
        **extra,
    }
    if judge is not None:
        data["judge"] = dict(judge)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def human_labels() -> dict[str, str]:
    """question -> human verdict of every labelled item."""
    return {item.question: item.human["verdict"]["assistant"] for item in load_dataset(LABELLED)}


def trace_questions() -> list[str]:
    return [item.question for item in load_dataset(TRACES)]


def scripted_judge(
    flips: Iterable[str] = (),
    *,
    trace_pass: Iterable[str] | None = None,
) -> FakeProvider:
    """A judge that answers the human label of a labelled item, flipped for the questions in
    ``flips``; on traces it passes the questions in ``trace_pass`` (default: all)."""
    labels, flipped = human_labels(), set(flips)
    passing = None if trace_pass is None else set(trace_pass)
    traces = trace_questions()

    def reply(request: CompletionRequest) -> str:
        user = html.unescape(request.user)
        for question, label in labels.items():
            if f"<question>\n{question}\n</question>" in user:
                answer = label
                if question in flipped:
                    answer = "Fail" if label == "Pass" else "Pass"
                return json.dumps({"reasoning": f"scripted for {question!r}", "answer": answer})
        for question in traces:
            if f"<question>\n{question}\n</question>" in user:
                ok = passing is None or question in passing
                return json.dumps({"reasoning": "trace", "answer": "Pass" if ok else "Fail"})
        raise AssertionError("scripted judge got an unknown item")

    return FakeProvider("scripted", reply_fn=reply)


def question_of(item_id: str) -> str:
    return next(item.question for item in load_dataset(LABELLED) if item.id == item_id)
