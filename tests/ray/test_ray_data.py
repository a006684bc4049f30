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
from jurybox.errors import ConfigError, DatasetError
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async
from jurybox.records import Completion, JudgeRecord

ray = pytest.importorskip(
    "ray", reason="the `ray` extra is not installed (pip install 'jurybox[ray]')"
)

import jurybox.ray  # noqa: E402

pytestmark = pytest.mark.slow
TIMING = {"run_id", "timestamp", "latency_ms"}
_NO_CACHE = {"cache": False, "test_retest_count": 0}  # a stream has no "first N" retests
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ray_pipeline.py"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _comparable(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["key"]: {k: v for k, v in r.items() if k not in TIMING} for r in records}


def test_judge_equals_jurybox_run_and_shares_its_cache(
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
    asyncio.run(run_async(config, output_dir=tmp_path / "run"))  # fills run/cache.sqlite
    expected = [r.to_dict() for r in read_records(tmp_path / "run" / "judgments.jsonl")]
    paid = server.stats()["requests"]
    assert paid == 30 * 2 + 2

    rows = ray.data.from_items(_rows(dataset))
    judged = jurybox.ray.judge(rows, config, batch_size=8, cache=False)
    got = [record.to_dict() for record in jurybox.ray.read_records(judged)]
    assert server.stats()["requests"] == 2 * paid  # no cache: every call made again
    assert len(got) == len(expected) == 2 * (30 * 2 + 2)
    assert _comparable(got) == _comparable(expected)
    assert len({r["run_id"] for r in got}) == 1

    # The config's cache (paths.output_dir/cache.sqlite), filled by `jurybox run`, answers
    # every call; the records are those `jurybox run` writes for hits.
    judged = jurybox.ray.judge(rows, config, batch_size=8)
    hits = [record.to_dict() for record in jurybox.ray.read_records(judged)]
    assert server.stats()["requests"] == 2 * paid
    shared = data["pipeline"] | {"cache_path": str(tmp_path / "run" / "cache.sqlite")}
    again = config_from_mapping(data | {"pipeline": shared})
    asyncio.run(run_async(again, output_dir=tmp_path / "again"))
    run_hits = [r.to_dict() for r in read_records(tmp_path / "again" / "judgments.jsonl")]
    assert server.stats()["requests"] == 2 * paid
    assert {r["cache_hit"] for r in hits} == {True}
    assert _comparable(hits) == _comparable(run_hits)


def test_a_pipeline_run_again_pays_nothing_twice_and_its_cache_answers_jurybox_run(
    tmp_path: Path, ray_address: str, wire_server: StartServer
) -> None:
    del ray_address
    server = wire_server(latency_s=0.01, seed=5)
    dataset = write_items(tmp_path / "items.jsonl", 12)
    cache = tmp_path / "shared" / "answers.sqlite"
    data = run_config(dataset, tmp_path / "unused", server.url, pipeline=_NO_CACHE)
    config = config_from_mapping(data)
    good = _rows(dataset)
    rows = ray.data.from_items(good)

    # A pipeline that fails at its last batch (a bad row) after paying for the batches before.
    bad = ray.data.from_items([*good[:-1], {**good[-1], "question": "   "}])
    failing = jurybox.ray.judge(bad, config, cache_path=cache, workers=1, batch_size=4)
    with pytest.raises(Exception, match="Ray Dataset batch"):
        failing.materialize()
    paid_before = server.stats()["requests"]
    assert paid_before > 0

    first = list(jurybox.ray.read_records(jurybox.ray.judge(rows, config, cache_path=cache)))
    paid = server.stats()["requests"]
    assert paid == len(first) == 12 * 2  # what the failed pipeline paid for is not paid again
    assert sum(r.cache_hit for r in first) == paid_before
    second = list(jurybox.ray.read_records(jurybox.ray.judge(rows, config, cache_path=cache)))
    assert server.stats()["requests"] == paid  # every answer from the cache
    assert {r.cache_hit for r in second} == {True}
    assert {r.attempts for r in second} == {0}
    hit_fields = TIMING | {"cache_hit", "attempts", "cost_usd"}
    assert _comparable_but(second, hit_fields) == _comparable_but(first, hit_fields)

    on = data["pipeline"] | {"cache": True, "cache_path": str(cache)}
    asyncio.run(run_async(config_from_mapping(data | {"pipeline": on}), output_dir=tmp_path / "r"))
    assert server.stats()["requests"] == paid  # `jurybox run` answered by the pipeline's cache
    assert not (tmp_path / "unused").exists()  # an explicit cache_path is the only file


def test_a_file_that_is_not_a_cache_fails_before_any_call(tmp_path: Path, ray_address: str) -> None:
    del ray_address
    config = config_from_mapping(
        {
            "judges": {"first": {"provider": "fake", "fake": {"behavior": "first"}}},
            "paths": {"dataset": "unused.jsonl"},
        }
    )
    rows = ray.data.from_items([{"id": "a", "question": "Q?", "responses": ["x", "y"]}])
    notes = tmp_path / "notes.sqlite"
    notes.write_bytes(b"my notes, not a database\n" * 200)
    with pytest.raises(ConfigError, match="not a usable SQLite cache") as failure:
        jurybox.ray.judge(rows, config, cache_path=notes)
    assert str(notes) in str(failure.value)
    assert notes.read_bytes() == b"my notes, not a database\n" * 200
    with pytest.raises(ValueError, match="cache=False"):
        jurybox.ray.judge(rows, config, cache=False, cache_path=notes)


def test_a_crashed_cache_actor_comes_back_with_the_file(tmp_path: Path, ray_address: str) -> None:
    del ray_address
    owner = jurybox.ray._open_cache(tmp_path / "answers.sqlite")
    answer = Completion(text="Answer A is better.", model="m", input_tokens=12, output_tokens=5)
    ray.get(owner.put_many.remote([("k1", answer)]))
    ray.kill(owner, no_restart=False)  # as a crash: Ray restarts it
    assert ray.get(owner.get_many.remote(["k1", "k2"])) == [answer, None]
    ray.kill(owner)


def _comparable_but(records: list[JudgeRecord], skip: set[str]) -> dict[str, dict[str, Any]]:
    rows = [record.to_dict() for record in records]
    return {r["key"]: {k: v for k, v in r.items() if k not in skip} for r in rows}


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
