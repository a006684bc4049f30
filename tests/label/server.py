"""A ``jurybox label`` subprocess, as a user starts it, and requests to it over loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any


class LabelServer:
    """A ``jurybox label`` subprocess and the URL it printed."""

    def __init__(self, run_dir: Path, log: IO[bytes], *args: str) -> None:
        command = [sys.executable, "-m", "jurybox", "label", str(run_dir), "--annotator", "ann"]
        command += args
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().decode()  # "open URL", once it listens
        assert line.startswith("open http://127.0.0.1:"), line
        self.url = line.split()[1]
        self.origin, self.token = self.url.split("/?token=")

    def get(self, path: str) -> Any:
        request = urllib.request.Request(self.origin + path)
        request.add_header("X-Jurybox-Token", self.token)
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.loads(reply.read())

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def request(
        self, method: str, path: str, body: bytes | None = None, **headers: str
    ) -> tuple[int, dict[str, str], bytes]:
        """Any request: (status, headers, body); no token unless ``headers`` carry one."""
        request = urllib.request.Request(self.origin + path, data=body, method=method)
        for name, value in headers.items():
            request.add_header(name.replace("_", "-"), value)
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it (Ctrl-C is SIGINT, handled alike)."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(30)
