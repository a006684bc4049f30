"""One process per run directory.

Two processes running into the same folder (a resume started twice, a cron job overlapping the
last one) would both judge the pending units: every such judgment paid for twice and written
twice. A run therefore holds an exclusive advisory lock (``flock``) on ``DIR/.jurybox.lock``
from before it touches the folder until it has written its last manifest. The kernel releases
the lock when the process dies, however it dies, so a ``kill -9`` never leaves a stale lock to
clean up: a lock is stale exactly when its process is gone, and the kernel then hands it to the
next run at once. The file itself stays (deleting it would race with the next run). The pid it
holds is informational only, for the refusal message: it is never consulted to decide who owns
the folder (pids are reused; the kernel's lock is the truth). Where ``fcntl`` does not exist
(Windows) runs are not locked.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from jurybox.errors import ConfigError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".jurybox.lock"
_PID_WIDTH = 20
_READ_TRIES = 25


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
        # One fixed-width write at offset 0, then cut: a refused process reading at the same
        # moment sees the old pid or the new one, never an empty file (ftruncate first would).
        os.pwrite(fd, f"{os.getpid():<{_PID_WIDTH}}\n".encode(), 0)
        os.ftruncate(fd, _PID_WIDTH + 1)
        yield
    finally:
        os.close(fd)  # releases the lock


def _in_use(directory: Path, fd: int) -> ConfigError:
    holder = _holder_pid(fd)
    who = f" (pid {holder})" if holder is not None else ""
    return ConfigError(
        f"{directory} is in use by another jurybox process{who}; wait for it to finish or "
        "choose another --output-dir",
        field="paths.output_dir",
    )


def _holder_pid(fd: int) -> int | None:
    """The holder's pid, for the message. Where the kernel lists its locks (Linux), that is the
    answer. Else the file: the holder writes it just after taking the lock, so for a moment it
    may still name an earlier holder, whose pid may even have been reused by a live process:
    read again until it names a live process (at most ~0.5 s), else say nothing."""
    for _ in range(_READ_TRIES):
        kernel = _kernel_holder(fd)
        if kernel is not None:
            return kernel
        text = os.pread(fd, _PID_WIDTH + 1, 0).decode("ascii", "replace").strip()
        if text.isdigit() and _alive(int(text)):
            return int(text)
        time.sleep(0.02)
    return None


def _kernel_holder(fd: int) -> int | None:
    """The pid that ``/proc/locks`` names as holding an flock on ``fd``'s file, or None (not
    Linux, or no lock listed: the holder may have just released it)."""
    stat = os.fstat(fd)
    where = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in table.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 17454 fe:00:2148037 0 EOF"; "->" lines are waiters
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == where:
            return int(fields[4]) if fields[4].isdigit() else None
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True
