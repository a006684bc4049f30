"""``openai_compatible`` with ``base_urls``: one judge over several replicas of one model (a vLLM
fleet), each call sent to the replica with the fewest calls in flight. Against two loopback
wire servers (``bench/wire_server.py``), through the real adapter and pipeline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from chaos.conftest import StartServer, wire_server
from chaos.helpers import run_config, write_items
from jurybox.config import JudgeConfig, answer_identity, config_from_mapping
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async

__all__ = ["wire_server"]  # the chaos tests' fixture, used here too


def _judge(urls: list[str], concurrency: int) -> dict[str, Any]:
    return {
        "provider": "openai_compatible",
        "base_url": None,
        "base_urls": urls,
        "concurrency": concurrency,
    }


def _run(tmp_path: Path, name: str, judge: dict[str, Any], url: str = "unused") -> dict[str, Any]:
    dataset = tmp_path / "items.jsonl"
    if not dataset.exists():
        write_items(dataset, 20)  # 20 items x 2 orders + 5 retests = 45 calls
    data = run_config(dataset, tmp_path / name, url, judge=judge)
    asyncio.run(run_async(config_from_mapping(data), output_dir=tmp_path / name))
    return {r.key: r.raw_response for r in read_records(tmp_path / name / "judgments.jsonl")}


def test_calls_go_to_the_replica_with_fewest_in_flight(
    tmp_path: Path, wire_server: StartServer
) -> None:
    slow = wire_server(latency_s=0.3, seed=1)
    fast = wire_server(latency_s=0.01, seed=1)
    answers = _run(tmp_path, "fleet", _judge([slow.url, fast.url], concurrency=4))
    assert len(answers) == 45
    slow_calls, fast_calls = slow.stats()["requests"], fast.stats()["requests"]
    assert slow_calls + fast_calls == 45
    # Round robin would split 45 calls ~23/22; by calls in flight the slow one gets few.
    assert 1 <= slow_calls <= 15 and fast_calls >= 30, (slow_calls, fast_calls)
    # Replicas of one model answer alike: the records equal a one-server run's.
    single = _run(tmp_path, "single", {"provider": "openai_compatible"}, url=fast.url)
    assert answers == single


def test_equal_replicas_share_the_calls(tmp_path: Path, wire_server: StartServer) -> None:
    first, second = wire_server(latency_s=0.02), wire_server(latency_s=0.02)
    _run(tmp_path, "pair", _judge([first.url, second.url], concurrency=1))
    # One call at a time: every tie is taken in turn.
    assert sorted([first.stats()["requests"], second.stats()["requests"]]) == [22, 23]


def test_base_urls_is_scheduling_not_identity() -> None:
    one = JudgeConfig(provider="openai_compatible", model="m", base_urls=("http://a/v1",))
    two = JudgeConfig(
        provider="openai_compatible", model="m", base_urls=("http://a/v1", "http://b/v1")
    )
    assert answer_identity(one) == answer_identity(two)
    with pytest.raises(ValidationError, match="replaces base_url"):
        JudgeConfig(
            provider="openai_compatible",
            model="m",
            base_url="http://a/v1",
            base_urls=("http://b/v1",),
        )
    with pytest.raises(ValidationError, match="base_urls is for provider 'openai_compatible'"):
        JudgeConfig(provider="openai", model="m", base_urls=("http://b/v1",))
    with pytest.raises(ValidationError, match="needs a `base_url`"):
        JudgeConfig(provider="openai_compatible", model="m")
