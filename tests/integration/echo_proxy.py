"""A loopback forward proxy for leak tests: it takes plain-HTTP proxy requests (absolute URI,
``Proxy-Authorization`` included) and passes each on to the upstream it names — credentials and
all, as a careless proxy does — then relays the answer. Upstreams in echo mode
(``wire_vendors.VendorServer.echo``) then repeat the proxy's credentials with their own."""

from __future__ import annotations

import http.client
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

# Hop-by-hop headers a proxy does not pass on (RFC 9110 7.6.1); Proxy-Authorization is passed.
_HOP = {"connection", "proxy-connection", "keep-alive", "transfer-encoding", "te", "upgrade"}
UPSTREAM_TIMEOUT_S = 30


@dataclass
class EchoProxy:
    """What the proxy forwarded: each request's ``Proxy-Authorization`` (None: none came)."""

    server: HTTPServer
    seen: list[str | None] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.server.expect_request(re.compile(r"^/.*")).respond_with_handler(self.forward)

    @property
    def port(self) -> int:
        return int(self.server.port)

    def forward(self, request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        with self._lock:
            self.seen.append(request.headers.get("Proxy-Authorization"))
        host, _, port = request.host.partition(":")
        if host not in ("127.0.0.1", "localhost"):  # loopback only, whatever a client asks
            return Response(f"not a loopback upstream: {request.host}", status=502)
        upstream = http.client.HTTPConnection(host, int(port or 80), timeout=UPSTREAM_TIMEOUT_S)
        try:
            upstream.request(
                request.method, request.full_path.rstrip("?"), request.get_data(), headers
            )
            answer = upstream.getresponse()
            body = answer.read()
            kept = [(k, v) for k, v in answer.getheaders() if k.lower() not in _HOP]
        finally:
            upstream.close()
        return Response(body, status=answer.status, headers=kept)


@contextmanager
def echo_proxy() -> Iterator[EchoProxy]:
    """A threaded forward proxy on 127.0.0.1, stopped on exit."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        yield EchoProxy(server)
    finally:
        server.clear()
        if server.is_running():
            server.stop()
