"""``jurybox.ray.judge``: judging as a Ray Data stage gives the records ``jurybox run`` gives."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from chaos.conftest import StartServer
from chaos.helpers import run_config, write_items
from jurybox.config import config_from_mapping
from jurybox.errors import DatasetError
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async

ray = pytest.importorskip(
    "ray", reason="the `ray` extra is not installed (pip install 'jurybox[ray]')"
)

import jurybox.ray  # noqa: E402

pytestmark = pytest.mark.slow
TIMING = {"run_id", "timestamp", "latency_ms"}
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ray_pipeline.py"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _comparable(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["key"]: {k: v for k, v in r.items() if k not in TIMING} for r in records}


def test_judge_over_a_dataset_equals_jurybox_run(
    tmp_path: Path, ray_address: str, wire_server: StartServer
) -> None:
    del ray_address
    server = wire_server(latency_s=0.01, seed=8)
    dataset = write_items(tmp_path / "items.jsonl", 30)
    judge = {"provider": "openai_compatible", "concurrency": 4}
    retests = {"test_retest_query_ids": ["q0003", "q0017"]}  # a stream has no "first N"
    data = run_config(dataset, tmp_path / "run", server.url, judge=judge, pipeline=retests)
    data["judges"]["coin"] = {"provider": "fake", "fake": {"behavior": "random", "seed": 3}}
    config = config_from_mapping(data)
    asyncio.run(run_async(config, output_dir=tmp_path / "run"))
    expected = [r.to_dict() for r in read_records(tmp_path / "run" / "judgments.jsonl")]

    judged = jurybox.ray.judge(ray.data.from_items(_rows(dataset)), config, batch_size=8)
    got = [record.to_dict() for record in jurybox.ray.read_records(judged)]
    assert len(got) == len(expected) == 2 * (30 * 2 + 2)
    assert _comparable(got) == _comparable(expected)
    assert len({r["run_id"] for r in got}) == 1


def test_columns_rename_and_bad_rows_name_the_row(tmp_path: Path, ray_address: str) -> None:
    del ray_address
    config = config_from_mapping(
        {
            "judges": {"first": {"provider": "fake", "fake": {"behavior": "first"}}},
            "task": {"mode": "pairwise", "arms": ["a", "b"]},
            "paths": {"dataset": "unused.jsonl"},
        }
    )
    rows = [
        {"qid": f"x{i}", "prompt": f"Q{i}?", "base": "short", "new": "longer"} for i in range(4)
    ]
    renamed = {"columns": {"id": "qid", "question": "prompt"}}
    arms = {"response_columns": {"a": "base", "b": "new"}}
    judged = jurybox.ray.judge(ray.data.from_items(rows), config, **renamed, **arms, workers=1)
    records = list(jurybox.ray.read_records(judged))
    assert sorted(r.query_id for r in records) == ["x0", "x0", "x1", "x1", "x2", "x2", "x3", "x3"]
    assert {r.preference for r in records} == {"A"}

    rows[2]["prompt"] = "   "
    broken = jurybox.ray.judge(ray.data.from_items(rows), config, **renamed, **arms, workers=1)
    with pytest.raises(Exception, match="Ray Dataset batch") as failure:
        broken.materialize()
    assert DatasetError.__name__ in str(failure.value)
    assert "question" in str(failure.value)


def test_the_example_pipeline_runs_end_to_end(
    tmp_path: Path, ray_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    del ray_address
    spec = importlib.util.spec_from_file_location("ray_pipeline_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, example)
    spec.loader.exec_module(example)
    # examples/ is not on the workers' path (run as a script, its code travels as __main__'s)
    ray.cloudpickle.register_pickle_by_value(example)
    judgments, report = example.pipeline(tmp_path, workers=1)
    records = list(read_records(judgments))
    assert len(records) == 2 * example.QUESTIONS * 2  # 2 judges x 40 pairs x 2 orders
    long_pick = [r for r in records if r.judge_name == "long_pick"]
    assert {r.preferred_arm for r in long_pick} == {"treatment"}
    assert json.loads(report.json.read_text())["summary"]
