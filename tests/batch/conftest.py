"""Batch fixtures: the three vendors' batch wire formats on one loopback server, and a config
with one judge per vendor pointed at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer

from .wire_batch import ANTHROPIC, GOOGLE, OPENAI, BatchWire, Behaviour

KEY_ENV = "JURYBOX_BATCH_TEST_KEY"


@pytest.fixture
def batch_wire() -> Iterator[Callable[..., BatchWire]]:
    servers: list[HTTPServer] = []

    def start(**behaviour: Any) -> BatchWire:
        server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        server.start()
        servers.append(server)
        return BatchWire(server, Behaviour(**behaviour))

    yield start
    for server in servers:
        server.clear()
        if server.is_running():
            server.stop()


def judge(wire: BatchWire, vendor: str, **extra: Any) -> dict[str, Any]:
    """A judge of ``vendor`` at the wire server, priced so that batch savings show."""
    base = {
        "openai": (wire.url(OPENAI) + "/v1", "gpt-wire"),
        "anthropic": (wire.url(ANTHROPIC), "claude-wire"),
        "google": (wire.url(GOOGLE) + "/", "gemini-wire"),
    }[vendor]
    return {
        "provider": vendor,
        "model": base[1],
        "base_url": base[0],
        "api_key_env": KEY_ENV,
        "price_input_per_mtok": 3.0,
        "price_output_per_mtok": 15.0,
        **extra,
    }


def batch_config(
    dataset: Path, out: Path, judges: dict[str, dict[str, Any]], **pipeline: Any
) -> dict[str, Any]:
    return {
        "judges": judges,
        "task": {"mode": "pairwise"},
        "pipeline": {
            "test_retest_count": 0,
            "retry_base_s": 0.001,
            "batch": True,
            "batch_poll_s": 0.005,
            "batch_poll_max_s": 0.02,
            **pipeline,
        },
        "paths": {"dataset": str(dataset), "output_dir": str(out)},
    }


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-batch-test")
