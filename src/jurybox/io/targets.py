"""Where a writer may write: never onto one of its own inputs, never over a file it did not make.

Every command that writes a file checks its target first (``check_target``): the target must not
be the same file as anything the command reads (compared after resolving symlinks, and by inode
where both exist, so a hard link or ``dir/../file`` counts too), and an existing target must be
recognisably what this writer makes (``ours``: an export, an import, a report folder, a run
manifest); anything else is refused with exit status 2 before anything is read or written,
never replaced. An empty file holds nothing to lose and may be replaced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jurybox.errors import InputError

# How much of a file's first line is read to recognise it (a judgment's line holds the judge's
# whole answer; past this the file is not recognised, so not replaced).
FIRST_LINE_BYTES = 8 << 20


def same_file(first: Path, second: Path) -> bool:
    """Whether ``first`` and ``second`` name one file (symlinks and hard links included)."""
    try:
        if os.path.samefile(first, second):
            return True
    except OSError:  # one does not exist (yet): compare where they would be
        pass
    return Path(os.path.realpath(first)) == Path(os.path.realpath(second))


def check_target(
    out: Path,
    *,
    inputs: Iterable[Path | None],
    ours: Callable[[Path], bool],
    what: str,
    field: str = "--out",
) -> None:
    """Refuse to write ``out`` (an ``InputError`` naming it: exit status 2) when it is one of
    ``inputs``, or an existing, non-empty file that ``ours`` does not recognise as ``what``."""
    for source in inputs:
        if source is not None and same_file(out, source):
            raise InputError(
                f"would overwrite {source}, which this command reads; choose another path",
                path=str(out),
                field=field,
            )
    if out.is_dir():
        raise InputError("is a folder; give a file path", path=str(out), field=field)
    if out.exists() and out.stat().st_size > 0 and not ours(out):
        raise InputError(
            f"exists and is not {what}; jurybox replaces only what it wrote: remove it or "
            "choose another path",
            path=str(out),
            field=field,
        )


def first_json_line(path: Path) -> dict[str, Any] | None:
    """The first line of ``path`` as a JSON object, or None (not JSON, not an object, or longer
    than ``FIRST_LINE_BYTES``)."""
    try:
        with path.open("rb") as handle:
            line = handle.readline(FIRST_LINE_BYTES)
        data = json.loads(line)
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None
