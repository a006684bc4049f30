"""The labels file as ``jurybox label`` writes it: append-only, one line per label, synced.

Each label is one JSON line written with one ``write(2)`` (looped only if the kernel takes
less) and ``fsync``'d before the page is told it was saved, so a label the page shows as given
survives a killed process or a power cut. A write that fails (disk full) is cut back to the end
of the last complete line and raised naming the file; the page then says the label was not
saved. A torn last line (bytes after the last newline, from a crash mid-write) is truncated
when the file is opened again, as ``jurybox run --resume`` does with judgments.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.io.judgments import repair_tail
from jurybox.io.text import clean_value

LABELS_FILE = "labels.jsonl"  # in the run folder, unless `jurybox label --labels` names another


class LabelLog:
    """Appends label lines to one file; ``repaired`` says how many torn bytes were cut."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.repaired = repair_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._end = os.fstat(self._fd).st_size

    def append(self, line: Mapping[str, Any]) -> None:
        """Write ``line`` as one JSON line and sync it to disk before returning."""
        if self._fd < 0:
            raise ValueError(f"{self.path}: the label log is closed")
        cleaned, _ = clean_value(dict(line))  # a browser may send lone surrogates
        data = (json.dumps(cleaned, ensure_ascii=False) + "\n").encode("utf-8")
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):  # else readers still skip the torn line
                os.ftruncate(self._fd, self._end)
            raise OSError(exc.errno, exc.strerror or str(exc), str(self.path)) from None
        self._end += len(data)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
