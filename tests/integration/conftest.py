"""Fixtures for whole-pipeline runs against local wire servers, one per judge adapter (see
wire_vendors.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from wire_vendors import KEYS, VendorServer, running_servers, set_vendor_env


@pytest.fixture
def vendor_keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The fake keys in the variables the judges name; the SDKs' own variables cleared."""
    set_vendor_env(monkeypatch)
    return dict(KEYS)


@pytest.fixture
def vendor_servers(vendor_keys: dict[str, str]) -> Iterator[dict[str, VendorServer]]:
    """One threaded wire server per judge adapter on 127.0.0.1, keys in the environment."""
    with running_servers() as servers:
        yield servers
