"""One local Ray (2 CPUs) for every test in this folder: its start-up takes seconds on a busy
machine, so it is shared. The loopback wire server is the chaos tests' (``bench/wire_server``).

Ray's worker processes inherit this process's environment (``PYTHONPATH`` included), so they
import the same jurybox as the tests.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from chaos.conftest import StartServer, wire_server

__all__ = ["StartServer", "wire_server"]
NO_RAY = "the `ray` extra is not installed (pip install 'jurybox[ray]')"


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    """The address of the shared local Ray (for a driver in a subprocess)."""
    ray = pytest.importorskip("ray", reason=NO_RAY)
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()
