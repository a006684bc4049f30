"""The harness of the fuzz tests (issue 31's check): the CLI in this process, bounded in time,
and what an input's outcome must be.

Every reader of outside files is fed truncated JSON, wrong types, deep nesting, huge numbers,
NUL, lone surrogates, a BOM, CRLF line ends, bytes that are not UTF-8, duplicate ids and ragged
CSV. Each input must be accepted as documented (``Accepted``: the test checks the documented
result) or refused (``Refused``) with exit 2 and one ``error:`` line naming the file, the line
and, where the fault is in one, the field; never a traceback, never more than 10 s (``cli``).
Hypothesis cases are derandomized: the same examples every run.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from hypothesis import HealthCheck, settings

from jurybox.cli import main

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "7" * 5_000
BASE_ITEMS = [
    {"id": name, "question": f"Question {name}?", "responses": {"control": "a", "treatment": "b"}}
    for name in ("a", "b", "c")
]
FUZZ = settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
LIMIT_S = 10


class Hang(Exception):
    """Raised in the CLI when it runs past ``LIMIT_S``."""


@contextmanager
def _at_most(seconds: float) -> Iterator[None]:
    def stop(*_: object) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def cli(*args: str | Path) -> Result:
    """The CLI in this process, bounded to ``LIMIT_S``; a traceback or a hang fails the test."""
    with _at_most(LIMIT_S):
        result = CliRunner().invoke(main, [str(arg) for arg in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{type(result.exception).__name__}: {result.exception}")
    assert "Traceback" not in result.output, result.output
    return result


@dataclass(frozen=True)
class Refused:
    """Exit 2 and one error line naming the file, ``line`` (None: the file alone), ``field``."""

    line: int | None
    field: str | None = None
    needle: str = ""

    def check(self, result: Result, path: Path) -> None:
        assert result.exit_code == 2, result.output
        errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, result.output
        where = f"{path}:{self.line}" if self.line is not None else f"{path}"
        assert f"error: {where}" in errors[0], (where, errors[0])
        if self.line is None:
            assert not re.match(rf"error: {re.escape(str(path))}:\d", errors[0]), errors[0]
        if self.field is not None:
            assert f"field '{self.field}'" in errors[0], errors[0]
        assert self.needle in errors[0], (self.needle, errors[0])


@dataclass(frozen=True)
class Accepted:
    """Exit 0, and ``check(tmp_path)`` holds: the documented result."""

    check: Callable[[Path], None] = field(default=lambda _: None)


Expect = Refused | Accepted


def judge(expect: Expect, result: Result, path: Path, tmp_path: Path) -> None:
    """``result`` is what ``expect`` says of an input read from ``path``."""
    if isinstance(expect, Refused):
        expect.check(result, path)
    else:
        assert result.exit_code == 0, result.output
        expect.check(tmp_path)


def jsonl(rows: list[Any]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


Cases = dict[str, tuple[str, bytes, Expect]]


def shared_jsonl_cases(
    filename: str, rows: list[dict[str, Any]], same: Expect, *, id_field: str, spoil: bytes
) -> Cases:
    """What every JSONL reader is fed alike: a BOM and CRLF line ends (read as without them,
    ``same``), ``spoil`` on line 2 turned into a byte that is not UTF-8, the first row again."""
    content = jsonl(rows)
    bad = content.replace(spoil, spoil[:-1] + b"\xff", 1)
    return {
        "bom_crlf": (filename, b"\xef\xbb\xbf" + content.replace(b"\n", b"\r\n"), same),
        "not_utf8": (filename, bad, Refused(2, None, "invalid UTF-8")),
        f"duplicate_{id_field}": (
            filename,
            jsonl([*rows, rows[0]]),
            Refused(len(rows) + 1, id_field, "duplicate"),
        ),
    }


def assert_equal(got: Any, expected: Any) -> None:
    assert got == expected
