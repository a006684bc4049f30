"""Escaping for text that goes into Markdown reports (``summary_tables.md``).

Judge names, item metadata and subgroup labels come from user files and judge configs; rendered
raw, ``<script>`` or ``[x](javascript:...)`` in one of them becomes live HTML or a live link in
any viewer that renders Markdown. These pure functions make such text inert: HTML is escaped,
Markdown syntax is backslash-escaped (so no link, image or emphasis can be formed), and a link
target is kept only for safe schemes.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urlsplit

# Only what can turn text into markup that does something: a tag or an entity ("<" before a
# letter, "/", "!" or "?"; "&" before a name), a link or image ("]" closing a label before "(",
# "[" or ":"), a table cell break ("|") and the escape character itself. Our own figures
# ("<0.001", "[1.63, 3.25]") stay readable in the raw file.
_BACKSLASHED = re.compile(r"([\\`|])")
_LINK_CLOSE = re.compile(r"\](?=\s*[(\[:])")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#|[A-Za-z])")
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
# Control and invisible characters a browser drops when it reads a scheme ("java\tscript:").
_SCHEME_NOISE = re.compile(r"[\x00-\x20\x7f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")


def escape_markdown(text: str) -> str:
    """``text`` as inert Markdown: no tag, entity, link, image or table-cell break can form;
    line breaks flattened (one table cell or list item stays one)."""
    escaped = _BACKSLASHED.sub(r"\\\1", text)
    escaped = _LINK_CLOSE.sub(r"\\]", escaped)
    escaped = _TAG_OPEN.sub("&lt;", _ENTITY.sub("&amp;", escaped))
    return " ".join(escaped.splitlines())


def safe_link_target(url: str) -> str | None:
    """``url`` if it is a relative path or an http(s)/mailto URL, else None.

    ``javascript:``, ``data:``, ``vbscript:`` and the like are refused, also when disguised with
    case, whitespace, control or zero-width characters, or HTML entities.
    """
    cleaned = _SCHEME_NOISE.sub("", html.unescape(url))
    scheme = urlsplit(cleaned).scheme.lower()
    if scheme and scheme not in _SAFE_SCHEMES:
        return None
    if not scheme and ":" in cleaned.split("/", 1)[0]:
        return None  # "javascript&colon;..." after unescaping, or an odd scheme urlsplit missed
    return url.replace("(", "%28").replace(")", "%29").replace(" ", "%20")
