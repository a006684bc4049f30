"""A tiny Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no sockets, no deps).

Chromium reads NUL-terminated JSON messages on fd 3 and writes its replies and events on fd 4.
The test opens the report from a file:// URL, collects console messages, JavaScript exceptions
and browser log entries (CSP violations, failed loads), evaluates checks in the page and takes a
full-page screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    """The browser named by ``JURYBOX_CHROMIUM`` or the first candidate on PATH."""
    explicit = os.environ.get("JURYBOX_CHROMIUM")
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def start_chromium(*, extra_args: tuple[str, ...] = (), timeout_s: float = 60.0) -> Chromium:
    """A headless Chromium for a test: skipped where none is installed, failed under CI=true."""
    binary = find_chromium()
    if binary is None:
        reason = "headless Chromium not found (apt-get install chromium, or set JURYBOX_CHROMIUM)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI=true requires it")
        pytest.skip(reason)
    return Chromium(binary, timeout_s=timeout_s, extra_args=extra_args)


@dataclass
class PageReport:
    """What the browser saw while loading a page."""

    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    log_entries: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for

    def errors(self) -> list[str]:
        found = [json.dumps(e)[:500] for e in self.exceptions]
        found += [
            f"console.{c.get('type')}: {json.dumps(c.get('args'))[:400]}"
            for c in self.console
            if c.get("type") in ("error", "assert", "warning")
        ]
        found += [
            f"log[{e.get('source')}] {e.get('level')}: {e.get('text')}"
            for e in self.log_entries
            if e.get("level") in ("error", "warning")
        ]
        return found


class Chromium:
    """One headless Chromium process driven through the DevTools pipe."""

    def __init__(
        self, binary: str, *, timeout_s: float = 60.0, extra_args: tuple[str, ...] = ()
    ) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.TemporaryDirectory(prefix="jurybox-chromium-")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()

        def wire_fds() -> None:  # runs in the child before exec
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)

        args = [
            binary,
            "--headless",
            "--remote-debugging-pipe",
            "--no-sandbox",  # containers and root users have no usable sandbox
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={self._profile.name}",
            *extra_args,
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            pass_fds=(3, 4),
            preexec_fn=wire_fds,  # noqa: PLW1509 - single-threaded test helper
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._write_fd, self._read_fd = to_child_w, from_child_r
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    # --- protocol -----------------------------------------------------------------------------
    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write_fd, json.dumps(message).encode() + b"\0")
        reply = self._wait(lambda m: m.get("id") == self._next_id)
        if "error" in reply:
            raise RuntimeError(f"{method} failed: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    def wait_event(self, method: str) -> dict[str, Any]:
        for index, event in enumerate(self._events):
            if event.get("method") == method:
                return self._events.pop(index)
        return self._wait(lambda m: m.get("method") == method)

    def _wait(self, wanted: Any) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message = json.loads(raw)
                if wanted(message):
                    return message  # type: ignore[no-any-return]
                self._events.append(message)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._read_fd], [], [], left)
            if ready:
                chunk = os.read(self._read_fd, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk

    # --- high level ---------------------------------------------------------------------------
    def open_page(self, url: str, *, width: int, height: int) -> tuple[str, PageReport]:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self._events.clear()  # events of earlier pages must not count against this one
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired")
        time.sleep(0.3)  # let late log entries (image decode, CSP reports) arrive
        self.evaluate(session, "1")  # flushes pending events into the buffer
        return session, self._page_report(session)

    def _page_report(self, session: str) -> PageReport:
        report = PageReport()
        for event in self._events:
            if event.get("sessionId") != session:
                continue
            params = event.get("params", {})
            if event.get("method") == "Runtime.consoleAPICalled":
                report.console.append(params)
            elif event.get("method") == "Runtime.exceptionThrown":
                report.exceptions.append(params.get("exceptionDetails", {}))
            elif event.get("method") == "Log.entryAdded":
                report.log_entries.append(params.get("entry", {}))
            elif event.get("method") == "Network.requestWillBeSent":
                report.requests.append(str(params.get("request", {}).get("url", "")))
        return report

    def collect(self, session: str) -> PageReport:
        """Everything the page reported since it was opened (after interacting with it)."""
        self.evaluate(session, "1")  # flushes pending events into the buffer
        return self._page_report(session)

    def wait_for(self, session: str, expression: str, *, timeout_s: float = 20.0) -> float:
        """Poll until ``expression`` is truthy in the page; the seconds it took."""
        start = time.monotonic()
        while not self.evaluate(session, expression):
            if time.monotonic() - start > timeout_s:
                raise TimeoutError(f"the page never made {expression!r} true")
            time.sleep(0.02)
        return time.monotonic() - start

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=session,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluation failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, session: str, path: Path) -> Path:
        data = self.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True},
            session=session,
        )["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._write_fd, self._read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()
