"""Credential shapes removed from anything jurybox writes: records, manifest, reports, messages.

Vendors echo keys back in some error bodies, proxies echo whole request headers, and a
``base_url`` or ``HTTP_PROXY`` may carry ``user:password@``. These patterns catch the forms a
credential takes on the wire even when the exact secret is unknown to the code that writes:
``Authorization`` / ``Proxy-Authorization`` headers (Bearer, Basic or any scheme), ``x-api-key``,
``x-goog-api-key`` and ``api_key=`` parameters, key-shaped tokens (``sk-``, ``AIza``) and URL
user info. A leaf module (only ``re``), so every layer can use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[redacted]"
_VALUE = r"[^\s\"',}\]]+"
# Order matters: the header patterns run first and swallow their whole value, scheme included.
_PATTERNS = (
    re.compile(r"(?i)((?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)(?:[A-Za-z-]+\s+)?" + _VALUE),
    re.compile(r"(?i)((?:api[_-]?key|x-goog-api-key|x-api-key)[\"']?\s*[:=]\s*[\"']?)" + _VALUE),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(\bBasic\s+)[A-Za-z0-9+/]{8,}={0,2}"),  # the scheme as sent; prose rarely
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"),
    # scheme://user:password@host -> scheme://[redacted]@host
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/\s:@\"'<>]+:[^/\s@\"'<>]*@"),
)


def _keep_prefix(match: re.Match[str]) -> str:
    # Keep a captured prefix ("Bearer ", "api_key=", "http://") so the text stays readable.
    prefix = match.group(1) if match.re.groups and match.group(1) else ""
    suffix = "@" if match.group(0).endswith("@") and "://" in prefix else ""
    return f"{prefix}{REDACTED}{suffix}"


def redact_credentials(text: str) -> str:
    """``text`` with every credential-shaped substring replaced by ``[redacted]``."""
    for pattern in _PATTERNS:
        text = pattern.sub(_keep_prefix, text)
    return text


def redact_value(value: Any) -> Any:
    """``redact_credentials`` over every string of a JSON-like value (keys left as they are)."""
    if isinstance(value, str):
        return redact_credentials(value)
    if isinstance(value, Mapping):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(item) for item in value)
    return value
