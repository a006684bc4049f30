"""Credentials removed from anything jurybox writes: records, manifest, reports, exports, messages.

Two layers, both applied by every writer:

* **Known secrets.** Every secret jurybox is given or finds is registered once, where it is
  learnt: each judge's key (``api_key_env``), the user info of a ``base_url`` / ``base_urls``
  and of the proxy variables (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, any case), and
  any header value that carries one (``register_secret``, ``register_login``,
  ``register_url``, ``register_proxy_environment``). A registered secret is replaced wherever
  it appears in any of the forms it takes on the wire or on disk: as is, URL-encoded, base64
  (a Basic token: ``base64(user:password)``), JSON-, HTML- and CSV-escaped (``redact_known``).
  Secrets shorter than ``MIN_SECRET_CHARS`` are not registered: replacing them would blank
  ordinary words out of every judgment.
* **Credential shapes**, for secrets the writer does not know: ``Authorization`` /
  ``Proxy-Authorization`` headers (Bearer, Basic or any scheme), ``x-api-key``,
  ``x-goog-api-key`` and ``api_key=`` parameters, key-shaped tokens (``sk-``, ``AIza``) and URL
  user info (``redact_credentials``). These apply to messages (errors, logs, the config as the
  manifest stores it), not to a judge's own text, where they would rewrite ordinary answers.

Redaction is idempotent: redacted text redacted again is unchanged. A leaf module, so every
layer can use it.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 6
_VALUE = r"(?!\[redacted\])[^\s\"',}\]]+"
# Order matters: the header patterns run first and swallow their whole value, scheme included.
_PATTERNS = (
    re.compile(
        r"(?i)((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
        r"(?!(?:[A-Za-z-]+\s+)?\[redacted\])(?:[A-Za-z-]+\s+)?" + _VALUE
    ),
    re.compile(r"(?i)((?:api[_-]?key|x-goog-api-key|x-api-key)[\"']?\s*[:=]\s*[\"']?)" + _VALUE),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(\bBasic\s+)[A-Za-z0-9+/]{8,}={0,2}"),  # the scheme as sent; prose rarely
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),
    # scheme://user:password@host -> scheme://[redacted]@host
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/\s:@\"'<>]+:[^/\s@\"'<>]*@"),
)


class _Known:
    """The registered secrets (every form of each) and one pattern matching any of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._forms: frozenset[str] = frozenset()
        self._pattern: re.Pattern[str] | None = None

    def add(self, forms: Iterable[str]) -> None:
        with self._lock:
            # A form inside "[redacted]" would grow the text on every pass: never registered.
            kept = {form for form in forms if len(form) >= MIN_SECRET_CHARS}
            merged = self._forms | {form for form in kept if form not in REDACTED}
            if merged != self._forms:
                # Longest first: a Basic token is replaced whole, not around a password in it.
                ordered = sorted(merged, key=lambda form: (-len(form), form))
                self._pattern = re.compile("|".join(map(re.escape, ordered)))
                self._forms = frozenset(merged)

    @property
    def pattern(self) -> re.Pattern[str] | None:
        return self._pattern

    @property
    def forms(self) -> frozenset[str]:
        return self._forms


_KNOWN = _Known()


def _forms(secret: str) -> set[str]:
    """The spellings ``secret`` takes in a URL, a header, JSON, HTML, CSV or a Basic token."""
    encoded = secret.encode("utf-8")
    return {
        secret,
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        html.escape(secret),
        html.escape(secret, quote=False),
        secret.replace('"', '""'),
        base64.b64encode(encoded).decode("ascii"),
        base64.urlsafe_b64encode(encoded).decode("ascii"),
        base64.b64encode(encoded).decode("ascii").rstrip("="),
    }


def register_secret(value: str | None) -> None:
    """Redact ``value`` (and its encoded forms) from everything written from now on."""
    if value and len(value) >= MIN_SECRET_CHARS:
        _KNOWN.add(_forms(value))


def register_login(user: str | None, password: str | None) -> None:
    """A user name and password: the password and the ``user:password`` pair (whose base64 is
    the Basic token sent); the user name alone is not secret."""
    register_secret(password)
    if user is not None and password:
        register_secret(f"{user}:{password}")


def register_url(url: str | None) -> None:
    """The user info of ``url`` (``scheme://user:password@host``), decoded and as written; a
    user name with no password is a token (``https://TOKEN@host``) and is registered too."""
    if not url or "@" not in url:
        return
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        user, password = parts.username, parts.password
    except ValueError:
        return
    if user is None:
        return
    if password is None:
        register_secret(user)
        register_secret(unquote(user))
        return
    register_login(user, password)
    register_login(unquote(user), unquote(password))


def register_proxy_environment() -> None:
    """The user info of every proxy variable (``*_proxy``, any case: what urllib, httpx and
    aiohttp read)."""
    for name, value in os.environ.items():
        if name.lower().endswith("_proxy") and name.lower() != "no_proxy":
            register_url(value)


def redact_known(text: str) -> str:
    """``text`` with every registered secret, in any of its forms, replaced by ``[redacted]``."""
    pattern = _KNOWN.pattern
    return pattern.sub(REDACTED, text) if pattern is not None and holds_known(text) else text


def holds_known(text: str) -> bool:
    """Whether ``text`` holds a registered secret in any of its forms."""
    # ``in`` per form (a fast substring search) before any regex: most text holds none, and a
    # regex alternation of literals tries every one at every position.
    return any(form in text for form in _KNOWN.forms)


def any_known() -> bool:
    """Whether any secret is registered (when none is, a writer may skip redaction)."""
    return bool(_KNOWN.forms)


def _keep_prefix(match: re.Match[str]) -> str:
    # Keep a captured prefix ("Bearer ", "api_key=", "http://") so the text stays readable.
    prefix = match.group(1) if match.re.groups and match.group(1) else ""
    suffix = "@" if match.group(0).endswith("@") and "://" in prefix else ""
    return f"{prefix}{REDACTED}{suffix}"


def redact_credentials(text: str) -> str:
    """``text`` with every registered secret and every credential-shaped substring replaced by
    ``[redacted]``."""
    text = redact_known(text)
    for pattern in _PATTERNS:
        text = pattern.sub(_keep_prefix, text)
    return text


def redact_log_records() -> None:
    """From now on every log record of this process, any library's, carries its message
    redacted (``redact_credentials``): for a process jurybox owns (the CLI), where a vendor
    SDK's debug log would print a URL with its user info. Installed once, over the current
    record factory."""
    import logging  # noqa: PLC0415 - only where installed

    previous = logging.getLogRecordFactory()
    if getattr(previous, "redacts", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed call: logging reports it when emitted
            return record
        cleaned = redact_credentials(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return record

    factory.redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def redact_value(value: Any, *, shapes: bool = True) -> Any:
    """``redact_credentials`` (``redact_known`` without ``shapes``) over every string of a
    JSON-like value (keys left as they are)."""
    if isinstance(value, str):
        return redact_credentials(value) if shapes else redact_known(value)
    if isinstance(value, Mapping):
        return {key: redact_value(item, shapes=shapes) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(item, shapes=shapes) for item in value)
    return value
