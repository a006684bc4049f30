"""Chaos fixtures: the local OpenAI-compatible wire server from ``bench/wire_server.py``.

The bench folder is put on ``sys.path`` here so that the tests and the benchmarks share one
server implementation.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from wire_server import ThreadedWireServer, WireConfig  # noqa: E402

StartServer = Callable[..., ThreadedWireServer]


@pytest.fixture
def wire_server() -> Iterator[StartServer]:
    """Start a wire server on 127.0.0.1 (``WireConfig`` fields as keywords); closed afterwards."""
    servers: list[ThreadedWireServer] = []

    def start(**fields: Any) -> ThreadedWireServer:
        server = ThreadedWireServer(WireConfig(**fields)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
