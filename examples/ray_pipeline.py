"""Generation -> judging -> analysis as one Ray Data pipeline (needs the `ray` extra).

A toy generation stage answers each question twice (a terse `control` answer and a wordier
`treatment` one); ``jurybox.ray.judge`` judges the pairs as the next stage, streaming; the
judgments are written as a judgments.jsonl and analysed like any run's. The judges here are
scripted fakes so the example runs offline: put your own generation stage (Ray Data LLM, a vLLM
batch job) and real judges in their place.

    python examples/ray_pipeline.py [OUT_DIR]        # default: results/ray_pipeline
    jurybox analyze OUT_DIR/judgments.jsonl          # the same analysis from the shell
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import ray.data

from jurybox.app.analyze import analyze_to_dir
from jurybox.config import config_from_mapping
from jurybox.ray import judge, write_judgments
from jurybox.reporting import ReportPaths

QUESTIONS = 40

CONFIG: dict[str, Any] = {
    "judges": {
        "long_pick": {"provider": "fake", "fake": {"behavior": "longer"}, "concurrency": 8},
        "coin": {"provider": "fake", "fake": {"behavior": "random", "seed": 7}},
    },
    "task": {"mode": "pairwise", "arms": ["control", "treatment"]},
    "pipeline": {"random_seed": 42, "position_bias_mode": "both"},
    "paths": {"dataset": "generated in the pipeline"},  # judge() reads the Dataset instead
}


def generate(row: dict[str, Any]) -> dict[str, Any]:
    """The toy generation stage: two answers per question."""
    topic = row["topic"]
    return {
        "id": row["id"],
        "question": f"How should a new team approach {topic}?",
        "responses": {
            "control": f"Start small with {topic} and review the results weekly.",
            "treatment": f"Approach {topic} in stages: agree on goals, start with one pilot, "
            "measure it against a baseline, then widen it once the numbers hold.",
        },
    }


def pipeline(out_dir: Path, *, workers: int = 2) -> tuple[Path, ReportPaths]:
    """Generation -> judging -> analysis into ``out_dir``: the judgments and report paths."""
    topics = [{"id": f"q{i:03d}", "topic": f"topic {i}"} for i in range(QUESTIONS)]
    answered = ray.data.from_items(topics).map(generate)
    # The response cache beside the judgments: run the example again and no judge is called.
    cache = out_dir / "cache.sqlite"
    judged = judge(answered, config_from_mapping(CONFIG), workers=workers, cache_path=cache)
    out_dir.mkdir(parents=True, exist_ok=True)
    judgments = write_judgments(judged, out_dir / "judgments.jsonl")
    report = analyze_to_dir(
        judgments, human=None, dataset=None, out_dir=out_dir / "report", plots=False
    )
    return judgments, report


if __name__ == "__main__":
    pipeline(Path(sys.argv[1] if len(sys.argv) > 1 else "results/ray_pipeline"))
