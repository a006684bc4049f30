"""The explorer's data and script as they are embedded in report.html.

The data goes into the page once, as a JSON data block (never executed); above ``GZIP_OVER``
bytes it is gzipped and base64-encoded, and the page decompresses it with the browser's own
``DecompressionStream``. The script is inline and allowed by the Content-Security-Policy only
through its SHA-256 hash: no other script can run, nothing can be fetched, nothing is evaluated.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

GZIP_OVER = 200_000  # bytes of JSON
# "<", ">" and "&" as JSON escapes: no judge text can close the data block or open a comment.
_HTML_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"))


@dataclass(frozen=True)
class Payload:
    """The data block's text and how it is encoded ("json" or "gzip+base64")."""

    text: str
    encoding: str
    json_bytes: int


def encode_payload(data: Any, *, gzip_over: int = GZIP_OVER, compresslevel: int = 9) -> Payload:
    """JSON (escaped for an HTML data block), gzipped and base64-encoded when large."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return json_payload(text, gzip_over=gzip_over, compresslevel=compresslevel)


def json_payload(text: str, *, gzip_over: int = GZIP_OVER, compresslevel: int = 9) -> Payload:
    """``encode_payload`` of the data whose JSON text (``ensure_ascii=False``, no spaces) this
    is: for data built as text part by part."""
    for char, escape in _HTML_SAFE:  # str.replace: many times faster than translate on MBs
        text = text.replace(char, escape)
    raw = text.encode("utf-8")
    if len(raw) <= gzip_over:
        return Payload(text, "json", len(raw))
    # mtime 0: the same bytes every time
    packed = gzip.compress(raw, compresslevel=compresslevel, mtime=0)
    return Payload(base64.b64encode(packed).decode("ascii"), "gzip+base64", len(raw))


def decode_payload(payload: Payload) -> Any:
    """The data back (what the page does, for tests)."""
    if payload.encoding == "json":
        return json.loads(payload.text)
    return json.loads(gzip.decompress(base64.b64decode(payload.text)).decode("utf-8"))


@cache
def asset(name: str) -> str:
    """A file shipped beside this module (explorer.js, explorer.css)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def script_hash(script: str) -> str:
    """The CSP source that allows exactly this inline script."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"
