"""The one home of jurybox's atomic writes: a file (or a folder) appears whole or not at all.

Every file jurybox writes whole — manifest.json, the report files, exports, imports, the
devloop's state, a rewritten judgments file — is written under a random hidden name beside its
target (``temp_beside``), flushed to disk and renamed over the target, so a reader (or a killed
process) sees the old file or the whole new one. A folder is put in place the same way
(``swap_folder``). Only the judgments file's own append-only writer (``io.judgments``) writes
in place, one flushed line at a time.

Text passes through ``jurybox.redaction.redact_known`` on its way out: a secret jurybox knows
(``redaction.register_*``) never reaches a file written here. Bytes are written as given: their
writer redacts the values it encodes (a Parquet table, a gzipped page).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from jurybox.redaction import redact_known


def temp_beside(path: Path) -> Path:
    """A random hidden name next to ``path``, for a file or folder renamed over it once
    complete."""
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` naming ``path`` (the target, not its temporary name): what the user knows."""
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, rename it over
    ``path``. On an error nothing is left behind, the old file is untouched and the
    ``OSError`` names ``path``."""
    with AtomicFile(path, binary=True) as handle:
        handle.write(data)
        handle.commit()
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """``write_bytes_atomic`` of ``text`` (UTF-8), known secrets redacted."""
    return write_bytes_atomic(path, redact_known(text).encode("utf-8"))


class AtomicFile:
    """A file streamed under a temporary name beside ``path``, then committed (renamed over
    ``path``) or discarded. Text mode redacts each write (``redact_known``); binary mode
    writes bytes as given.

    The temporary name is random and opened exclusively (never clobbers; honours the umask,
    unlike ``mkstemp``'s 0600). As a context manager it discards what was neither committed
    nor finished, and everything when the block raises.
    """

    def __init__(self, path: Path, *, binary: bool = False) -> None:
        self.path = Path(path)
        self.temp = temp_beside(self.path)
        self._binary = binary
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[Any] | None = (
                self.temp.open("xb")
                if binary  # text as given below: no newline translation (csv writes its own)
                else self.temp.open("x", encoding="utf-8", newline="")
            )
        except OSError as exc:
            raise _named(exc, self.path) from None
        self._finished = False

    @property
    def finished(self) -> bool:
        """Written to disk in full under the temporary name, not yet renamed."""
        return self._finished

    def _open(self) -> IO[Any]:
        if self._handle is None:
            raise ValueError(f"{self.path} is already finished or discarded")
        return self._handle

    def write(self, data: str | bytes) -> None:
        """Write ``data`` (text redacted); also the ``write`` a ``csv.writer`` calls."""
        handle = self._open()
        try:
            handle.write(data if self._binary else redact_known(str(data)))
        except OSError as exc:
            raise _named(exc, self.path) from None

    def finish(self) -> Path:
        """Flush to disk and close, under the temporary name (returned): ``commit`` renames it
        later (``commit_all`` renames several once all are written)."""
        handle = self._open()
        try:
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        except OSError as exc:
            raise _named(exc, self.path) from None
        self._handle = None
        self._finished = True
        return self.temp

    def commit(self) -> Path:
        """Finish (if not yet) and rename over the target."""
        if self._handle is not None:
            self.finish()
        if not self._finished:
            raise ValueError(f"{self.path} was discarded")
        try:
            os.replace(self.temp, self.path)
        except OSError as exc:
            raise _named(exc, self.path) from None
        self._finished = False
        return self.path

    def discard(self) -> None:
        """Drop what was written, finished or not (the target, if any, stays as it was)."""
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None
        self._finished = False
        with contextlib.suppress(OSError):
            self.temp.unlink(missing_ok=True)

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        # A file finished and not committed now belongs to the caller (who renames it later)
        # unless the block failed; after a commit there is nothing left to remove.
        if error is not None or not self._finished:
            self.discard()


def commit_all(files: Sequence[AtomicFile]) -> None:
    """Finish every file, then rename each into place: a failure while writing any of them
    leaves every target as it was (the caller's ``with`` discards the temporary files)."""
    for file in files:
        if not file.finished:
            file.finish()
    for file in files:
        file.commit()


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` for a library that writes to a path itself (pyarrow's
    ``write_table``); renamed over ``path`` once the block ends without an error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_beside(path)
    try:
        yield temp
        with temp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)


# renameat2(2)'s flag that swaps two existing paths in one step (Linux 3.15+, glibc 2.28+).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> bool:
    """Swap two existing paths atomically where the kernel can (Linux ``renameat2``); False
    where it cannot (another system, an old kernel, a file system without it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (AttributeError, OSError):
        return False
    result = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(second))


def swap_folder(new: Path, target: Path) -> None:
    """Put the complete folder ``new`` at ``target``, replacing what was there, by renames
    only. Where the kernel swaps two paths in one step (Linux) a reader or a kill sees the old
    folder or the new one at every moment; elsewhere there is an instant between the two
    renames when ``target`` is missing (never a mix of the two). The old folder is then
    removed."""
    if not target.exists():
        os.replace(new, target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now names the old folder
        return
    old = temp_beside(target)
    os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)
