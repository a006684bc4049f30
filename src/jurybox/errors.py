"""The jurybox exception tree.

Every message names the file, line and field at fault where there is one, so a user can fix the
input without reading a traceback. The CLI maps ``InputError`` subclasses to exit status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jurybox.records import RateLimits


def nearest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``name`` (difflib, case ignored), or None when none is close: the
    "did you mean" of a message about a field, column or value that matched nothing."""
    by_lower = {choice.lower(): choice for choice in choices}
    found = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[found[0]] if found else None


class JuryboxError(Exception):
    """Base class of every error jurybox raises on purpose."""


class InputError(JuryboxError):
    """Bad user input (config, dataset, rubric, labels): the CLI exits with status 2."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        super().__init__(self._compose(message))

    def _compose(self, message: str) -> str:
        where = []
        if self.path is not None:
            where.append(f"{self.path}:{self.line}" if self.line is not None else self.path)
        if self.field is not None:
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {message}" if where else message


class ConfigError(InputError):
    """The YAML config (or a rubric / criterion file it names) is invalid."""


class DatasetError(InputError):
    """A dataset or human-label file is invalid."""


class ParseError(JuryboxError):
    """A judge's text could not be turned into a valid structured result.

    Never fatal: the pipeline records it with ``status=unparsed``.
    """


class ProviderError(JuryboxError):
    """A provider call failed. Subclasses say whether a retry may help; ``kind`` says what
    failed, in the words every output uses (records, run summary, report)."""

    retryable: bool = False
    default_kind = "other"  # the kind when neither a kind nor an HTTP status is known

    def __init__(
        self, message: str, *, status_code: int | None = None, kind: str | None = None
    ) -> None:
        self.status_code = status_code
        self._kind = kind
        super().__init__(message)

    @property
    def kind(self) -> str:
        """``"HTTP 500"``, ``"connection refused"``, ``"timeout"``, ``"bad response"``... :
        the kind given, else the HTTP status, else the class's ``default_kind``."""
        if self._kind is not None:
            return self._kind
        if self.status_code is not None:
            return f"HTTP {self.status_code}"
        return self.default_kind


class AuthError(ProviderError):
    """Missing or rejected credentials: never retried."""

    default_kind = "auth"


class BadRequestError(ProviderError):
    """The request itself is wrong (bad parameter, unknown model, content filter): never retried."""

    default_kind = "bad request"


class RateLimitError(ProviderError):
    """HTTP 429 or an equivalent; ``retry_after`` is the server's hint in seconds, if any."""

    retryable = True
    default_kind = "rate limit"

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status_code: int | None = 429,
        rate_limits: RateLimits | None = None,
    ) -> None:
        self.retry_after = retry_after
        self.rate_limits = rate_limits  # the 429's rate-limit headers, for the adaptive limiter
        super().__init__(message, status_code=status_code)


class TransientError(ProviderError):
    """5xx, timeouts, dropped connections, malformed bodies: retried with backoff."""

    retryable = True


# How each cause of a ConnectError is named (its ``kind``).
CONNECT_KINDS = {
    "refused": "connection refused",
    "dns": "DNS failure",
    "reset": "connection reset",
    "other": "connection failed",
}


class ConnectError(TransientError):
    """No answer because no connection: refused, a host name that does not resolve, a connection
    reset or dropped. ``unreachable`` (refused, DNS) means no server is there: the pipeline
    stops that judge after a few attempts instead of retrying every call with backoff."""

    def __init__(
        self, detail: str, *, cause: str = "other", server: str | None = None, role: str = "server"
    ) -> None:
        """The message is ``"<kind> (<detail>)"``, with the hint when no server is there.
        ``server``: scheme://host:port, no credentials; ``role``: "server", or "proxy" when the
        proxy in between is what could not be reached."""
        self.cause = cause if cause in CONNECT_KINDS else "other"
        self.server = server
        self.role = role
        kind = CONNECT_KINDS[self.cause]
        hint = f": {self.hint}" if self.unreachable else ""
        super().__init__(f"{kind} ({detail}){hint}", kind=kind)

    @property
    def unreachable(self) -> bool:
        return self.cause in ("refused", "dns")

    @property
    def hint(self) -> str:
        where = f"the {self.role} at {self.server}" if self.server else f"the {self.role}"
        if self.cause == "dns":
            return f"is the host name right, and {where} up?"
        return f"is {where} up?"


class JudgeStopped(ProviderError):
    """A call not made (or not retried) because an earlier call of the same judge found no
    server (``ConnectError.unreachable``); its kind is that error's. Never retried: a resume
    redoes these records."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message, kind=kind)


class MissingDependencyError(JuryboxError):
    """An optional extra is not installed; the message carries the pip command that fixes it."""
