"""One process per run directory.

Two processes running into the same folder (a resume started twice, a cron job overlapping the
last one) would both judge the pending units: every such judgment paid for twice and written
twice. A run therefore holds an exclusive advisory lock (``flock``) on ``DIR/.jurybox.lock``
from before it touches the folder until it has written its last manifest. The kernel releases
the lock when the process dies, however it dies, so a ``kill -9`` never leaves a stale lock to
clean up; the file itself stays (deleting it would race with the next run). It holds the pid of
the last holder, for the error message. Where ``fcntl`` does not exist (Windows) runs are not
locked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from jurybox.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".jurybox.lock"


@contextlib.contextmanager
def run_directory_lock(directory: Path) -> Iterator[None]:
    """Hold ``directory``'s run lock for the ``with`` block; ``ConfigError`` if another process
    holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _in_use(directory, fd) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)  # releases the lock


def _in_use(directory: Path, fd: int) -> ConfigError:
    holder = os.read(fd, 32).decode("ascii", "replace").strip()
    who = f" (pid {holder})" if holder.isdigit() else ""
    return ConfigError(
        f"{directory} is in use by another jurybox process{who}; wait for it to finish or "
        "choose another --output-dir",
        field="paths.output_dir",
    )
