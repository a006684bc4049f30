"""Shared fixtures for provider tests: a wire server on 127.0.0.1 and key-leak checks.

Vendor adapters are tested through their real SDKs against ``wire_server`` (pytest-httpserver),
which speaks each vendor's wire format. Current SDKs use httpx2, which respx does not see.

Helpers are handed out as fixtures (``wire``, ``assert_no_leak``) rather than imported, because
two ``conftest`` modules (tests/ and tests/providers/) cannot both be imported by that name.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

# Recognisable fake key: any message, repr or log line that contains it is a leak.
LEAK_KEY = "sk-test-LEAKCHECK-123"
KEY_ENV = "JURYBOX_TEST_API_KEY"


class WireKit:
    """A running wire server plus the helpers every vendor test needs."""

    def __init__(self, server: HTTPServer) -> None:
        self.server = server

    def url(self, path: str = "") -> str:
        """Base URL (``path`` appended), e.g. ``wire.url("/v1")`` for an OpenAI base_url."""
        return self.server.url_for(path).rstrip("/") if path else self.server.url_for("/")[:-1]

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of every request received, in order."""
        return [json.loads(request.get_data()) for request, _response in self.server.log]

    def headers(self) -> list[dict[str, str]]:
        return [dict(request.headers) for request, _response in self.server.log]

    @property
    def request_count(self) -> int:
        return len(self.server.log)

    @staticmethod
    def json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        """A JSON response (for ``respond_with_handler`` or a handler's return value)."""
        return Response(
            json.dumps(body), status=status, headers=headers, mimetype="application/json"
        )

    @staticmethod
    def slow(seconds: float, body: Any, status: int = 200) -> Callable[[Request], Response]:
        """A handler that answers only after ``seconds`` (to trip a client timeout)."""

        def handler(_request: Request) -> Response:
            time.sleep(seconds)
            return WireKit.json(body, status)

        return handler


@pytest.fixture
def wire_server() -> Iterator[HTTPServer]:
    """A fresh HTTP server on 127.0.0.1; threaded, so a slow handler cannot stall the client."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        yield server
    finally:
        server.clear()
        if server.is_running():
            server.stop()


@pytest.fixture(scope="module")
def module_wire_server() -> Iterator[HTTPServer]:
    """One threaded server on 127.0.0.1 per test module (a stalled handler cannot block the
    next test, and there is no per-test shutdown wait); ``server`` hands it out cleared."""
    running = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    running.start()
    yield running
    running.clear()
    running.stop()


@pytest.fixture
def server(module_wire_server: HTTPServer) -> HTTPServer:
    """The module's wire server, cleared of the previous test's expectations and log."""
    module_wire_server.clear()
    return module_wire_server


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event a stalling handler waits on; set at teardown to free the server thread."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def dead_port() -> Iterator[int]:
    """A port on 127.0.0.1 where a connect is refused, for the whole test.

    The socket stays bound without listening: Linux refuses connects to it, and no other server
    (another test, another pytest process) can take the port meanwhile, as it could once a
    probe socket is released.
    """
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


@pytest.fixture
def wire(wire_server: HTTPServer) -> WireKit:
    return WireKit(wire_server)


@pytest.fixture
def leak_key() -> str:
    """The fake API key that must never show up in messages, reprs or logs."""
    return LEAK_KEY


@pytest.fixture
def api_key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """Name of an environment variable that holds ``LEAK_KEY``."""
    monkeypatch.setenv(KEY_ENV, LEAK_KEY)
    return KEY_ENV


def _assert_no_leak(*things: object) -> None:
    for thing in things:
        assert LEAK_KEY not in str(thing), f"key leaked in str(): {thing!s}"
        assert LEAK_KEY not in repr(thing), f"key leaked in repr(): {thing!r}"


@pytest.fixture
def assert_no_leak() -> Callable[..., None]:
    """``assert_no_leak(*objects)``: fails when the key is in any str() or repr()."""
    return _assert_no_leak
