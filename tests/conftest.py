"""Suite-wide fixtures: an offline guard and access to ../shared data."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = PROJECT_ROOT.parent / "shared"


def _is_loopback(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
    else:
        return True  # AF_UNIX paths and the like are local by construction
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # an unresolved host name: refuse rather than guess


@pytest.fixture(autouse=True)
def _offline_guard(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any test that opens a connection to anything but loopback."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise RuntimeError(f"network access outside loopback attempted: {address!r}")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise RuntimeError(f"network access outside loopback attempted: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
    yield


def require_shared(relative: str) -> Path:
    """Path under ../shared; skips on a user's clone, fails in CI when it is missing."""
    path = SHARED_DIR / relative
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing but CI=true: ../shared must sit beside the project")
        pytest.skip(f"{path} not found (../shared is only beside the project in CI)")
    return path


@pytest.fixture
def shared_data() -> Path:
    """The ../shared/data folder."""
    return require_shared("data")
