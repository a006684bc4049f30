"""Text that UTF-8 cannot encode is replaced, never fatal.

Python strings may hold lone surrogates (U+D800-U+DFFF): ``json.loads`` turns an escaped
``"\\ud800"`` into one, and so does reading a file with ``surrogateescape``. Such a string cannot
be written as UTF-8, so one judge answer or one dataset cell holding it used to crash the cache
or the JSONL write, and every resume crashed the same way. Every boundary where outside text
enters (dataset load, judge answer, importer, cache, judgments file) passes it through
``clean_value``: each code point UTF-8 cannot encode becomes U+FFFD and is counted, so the
caller can flag what it changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"
# Lone surrogates are the only code points a Python str can hold that UTF-8 cannot encode.
_UNENCODABLE = re.compile("[\ud800-\udfff]")
# JSON can spell a lone surrogate only as an escape \uD800-\uDFFF (a valid pair matches too,
# which only costs the slow path).
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def clean_text(text: str) -> tuple[str, int]:
    """``text`` with every unencodable code point replaced by U+FFFD, and how many there were."""
    if text.isascii():  # the common case, decided without a regex scan
        return text, 0
    return _UNENCODABLE.subn(REPLACEMENT, text)


def json_text_is_clean(text: str) -> bool:
    """Whether every value ``json.loads(text)`` gives is certain to need no ``clean_value``.

    True for text decoded strictly from UTF-8 (so it holds no surrogate itself) with no escaped
    surrogate: one regex scan of the line replaces a walk over every string the line holds.
    """
    return is_encodable(text) and _ESCAPED_SURROGATE.search(text) is None


def clean_value(value: Any) -> tuple[Any, int]:
    """``clean_text`` over a JSON-like value (strings, mapping keys and values, lists)."""
    if type(value) is str:  # the common leaf, without the Mapping check's cost
        return (value, 0) if value.isascii() else _UNENCODABLE.subn(REPLACEMENT, value)
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        total = 0
        cleaned: dict[Any, Any] = {}
        for key, item in value.items():
            new_key, in_key = clean_value(key)
            new_item, in_item = clean_value(item)
            cleaned[new_key] = new_item
            total += in_key + in_item
        return (cleaned, total) if total else (value, 0)
    if isinstance(value, list | tuple):
        parts = [clean_value(item) for item in value]
        total = sum(count for _, count in parts)
        if not total:
            return value, 0
        return type(value)(item for item, _ in parts), total
    return value, 0


def is_encodable(text: str) -> bool:
    return text.isascii() or _UNENCODABLE.search(text) is None
