"""The labelling page's server: aiohttp on 127.0.0.1, a token on every request, a strict CSP.

* It listens on 127.0.0.1 only (a random free port unless one is given) and answers only
  requests whose ``Host`` is that address (a DNS-rebinding page cannot reach it) and that carry
  the session's random token (``?token=`` or the ``X-Jurybox-Token`` header, compared in
  constant time). A POST must be JSON from the page's own origin.
* The page is one document: its script and style are inline, allowed by the
  Content-Security-Policy through their SHA-256 hashes; ``default-src 'none'`` and
  ``connect-src 'self'`` mean it can load nothing and talk to nothing but this server, and no
  text from the run can run as script (the script inserts every text as text).
* Responses are ``no-store`` and ``no-referrer``, so the token stays out of caches and links.

Routes: ``GET /`` the page; ``GET /api/state``; ``GET /api/item/{position}``; ``POST
/api/label`` ``{position, answer, notes}``; ``POST /api/skip`` ``{position}``; ``GET
/api/summary`` (agreement and verdicts: names the judges, fetched only on request).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from aiohttp import web

from jurybox.app.label import LabelSession
from jurybox.errors import InputError, JuryboxError
from jurybox.reporting.explorer.payload import script_hash

HOST = "127.0.0.1"
MAX_BODY = 256 * 1024  # bytes: an answer and a note


@dataclass(frozen=True)
class Page:
    """The page's HTML and the Content-Security-Policy that allows exactly its script/style."""

    html: bytes
    csp: str


@cache
def page() -> Page:
    """The page assembled from the package's label_assets (script and style inline)."""
    from jinja2 import Template  # noqa: PLC0415  (only when a page is served)

    folder = resources.files("jurybox.app").joinpath("label_assets")
    css = folder.joinpath("label.css").read_text(encoding="utf-8")
    js = folder.joinpath("label.js").read_text(encoding="utf-8")
    html = Template(folder.joinpath("label.html").read_text(encoding="utf-8")).render(
        css=css, js=js
    )
    csp = (
        f"default-src 'none'; script-src {script_hash(js)}; style-src {script_hash(css)}; "
        "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    return Page(html.encode("utf-8"), csp)


@dataclass
class Server:
    """A session behind the page; ``requests`` logs every request that reached it."""

    session: LabelSession
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    host: str = ""  # "127.0.0.1:PORT", set once bound
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    summary: Callable[[LabelSession], dict[str, Any]] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}/?token={self.token}"

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_BODY)
        app.router.add_get("/", self._page)
        app.router.add_get("/api/state", self._state)
        app.router.add_get("/api/item/{position}", self._item)
        app.router.add_post("/api/label", self._label)
        app.router.add_post("/api/skip", self._skip)
        app.router.add_get("/api/summary", self._summary)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        self.requests.append((request.method, request.path, request.host))
        if request.host != self.host:
            return _secured(web.json_response({"error": "wrong host"}, status=403))
        given = request.query.get("token") or request.headers.get("X-Jurybox-Token") or ""
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            return _secured(web.json_response({"error": "missing or wrong token"}, status=403))
        if request.method == "POST" and not self._same_origin(request):
            return _secured(web.json_response({"error": "cross-origin request"}, status=403))
        try:
            response = await handler(request)
        except InputError as exc:
            response = web.json_response({"error": str(exc)}, status=400)
        except OSError as exc:  # the label could not be written (disk full): say so
            response = web.json_response({"error": f"{exc.strerror}: {exc.filename}"}, status=507)
        except JuryboxError as exc:
            response = web.json_response({"error": str(exc)}, status=500)
        return _secured(response)

    def _same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        json_body = request.content_type == "application/json"
        return json_body and origin in (None, f"http://{self.host}")

    async def _page(self, _request: web.Request) -> web.Response:
        found = page()
        response = web.Response(body=found.html, content_type="text/html", charset="utf-8")
        response.headers["Content-Security-Policy"] = found.csp
        return response

    async def _state(self, _request: web.Request) -> web.Response:
        return web.json_response(self.session.state())

    async def _item(self, request: web.Request) -> web.Response:
        position = request.match_info["position"]
        if not position.isdigit():
            raise InputError("position must be a whole number", field="position")
        return web.json_response(self.session.item(int(position)))

    async def _label(self, request: web.Request) -> web.Response:
        body = await _body(request)
        state = self.session.give(body.get("position"), body.get("answer"), body.get("notes"))
        return web.json_response(state)

    async def _skip(self, request: web.Request) -> web.Response:
        body = await _body(request)
        return web.json_response(self.session.skip(body.get("position")))

    async def _summary(self, _request: web.Request) -> web.Response:
        if self.summary is None:
            raise InputError("no summary on this server")
        loop = asyncio.get_running_loop()
        return web.json_response(await loop.run_in_executor(None, self.summary, self.session))


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise InputError("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise InputError("the request body must be a JSON object")
    return body


def _secured(response: web.StreamResponse) -> web.StreamResponse:
    headers = response.headers
    headers.setdefault("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "no-referrer"
    headers["Cache-Control"] = "no-store"
    headers["X-Frame-Options"] = "DENY"
    return response


async def serve(server: Server, *, port: int = 0, ready: Callable[[str], None]) -> None:
    """Serve until SIGINT or SIGTERM; ``ready(url)`` once listening."""
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, HOST, port)
        await site.start()
        server.host = f"{HOST}:{runner.addresses[0][1]}"
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):  # Windows: Ctrl-C interrupts instead
                loop.add_signal_handler(signum, stop.set)
        ready(server.url)
        await stop.wait()
    finally:
        await runner.cleanup()
