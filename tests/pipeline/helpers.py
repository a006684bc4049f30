"""Builders shared by the pipeline tests: datasets, configs and records on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from jurybox.config import RunConfig, config_from_mapping
from jurybox.records import Item, JudgeRecord, Status


def make_items(n: int, arms: tuple[str, ...] = ("control", "treatment")) -> list[Item]:
    return [
        Item(
            id=f"q{i:03d}",
            question=f"Question number {i}?",
            responses={arm: f"{arm} answer to question {i}" + " more" * (i % 3) for arm in arms},
        )
        for i in range(n)
    ]


def write_dataset(path: Path, n: int, arms: tuple[str, ...] = ("control", "treatment")) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for item in make_items(n, arms):
            row = {"id": item.id, "question": item.question, "responses": dict(item.responses)}
            handle.write(json.dumps(row) + "\n")
    return path


def fake_judge(**fake: Any) -> dict[str, Any]:
    return {"provider": "fake", "model": "fake-model", "fake": fake}


def config_dict(dataset: Path, output_dir: Path, **sections: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "judges": {"j1": fake_judge()},
        "task": {"mode": "pairwise"},
        "pipeline": {"test_retest_count": 2, "retry_base_s": 0.01},
        "paths": {"dataset": str(dataset), "output_dir": str(output_dir)},
    }
    for key, value in sections.items():
        if key != "judges" and isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def make_config(dataset: Path, output_dir: Path, **sections: Any) -> RunConfig:
    return config_from_mapping(config_dict(dataset, output_dir, **sections))


def write_config(path: Path, dataset: Path, output_dir: Path, **sections: Any) -> Path:
    path.write_text(yaml.safe_dump(config_dict(dataset, output_dir, **sections)), encoding="utf-8")
    return path


def record(key: str, status: Status = Status.OK, **fields: Any) -> JudgeRecord:
    return JudgeRecord(
        key=key,
        run_id="run",
        query_id=key.split("|", maxsplit=1)[0],
        judge_name="j1",
        judge_model="m",
        judge_vendor="fake",
        mode="pairwise",
        presentation_order="control_first",
        positions={"A": "control", "B": "treatment"},
        status=status,
        parse_success=status == Status.OK,
        raw_response="{}",
        timestamp="2025-01-01T00:00:00+00:00",
        **fields,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
