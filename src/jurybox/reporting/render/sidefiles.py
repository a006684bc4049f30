"""Files written beside report.html line by line, and put in place only when complete.

``AtomicLines`` streams into a temporary file next to its target and ``commit`` flushes it to
disk and renames it over the target (as ``write_bytes_atomic`` does for a whole text, with the
same temporary name, ``temp_beside``), so a crash never leaves half a file under the real
name.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import IO

from jurybox.reporting.render.json_report import temp_beside


class AtomicLines:
    """A text file written line by line under a temporary name, then committed or discarded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._temp = temp_beside(path)
        self._handle: IO[str] | None = self._temp.open("x", encoding="utf-8")

    def write(self, line: str) -> None:
        if self._handle is None:
            raise ValueError(f"{self.path} is already committed or discarded")
        self._handle.write(line)

    def commit(self) -> Path:
        """Flush to disk and rename over the target."""
        if self._handle is not None:
            os.replace(self.finish(), self.path)
        return self.path

    def finish(self) -> Path:
        """Flush to disk and close, under the temporary name (returned): the caller renames it
        over the target when the rest of its report is written, or removes it."""
        if self._handle is None:
            raise ValueError(f"{self.path} is already committed or discarded")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()
        self._handle = None
        return self._temp

    def discard(self) -> None:
        """Drop what was written (the target, if any, is left as it was)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
            self._temp.unlink(missing_ok=True)

    def __enter__(self) -> AtomicLines:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.discard()  # after commit this does nothing; on an error nothing is left
