"""Fencing of untrusted text: candidate responses sit between tags they cannot close.

Every tag the prompts use (``untrusted_response``, ``question``, ``reference_context``,
``expected_answer``, ``example...``) is neutralised wherever it appears inside variable text: the
opening ``<`` of anything that looks like one of them becomes ``&lt;``. The judge still sees what
the text said, but nothing inside a response can end its fence early or open a fake section.
"""

from __future__ import annotations

import functools
import re
import unicodedata

FENCE_TAG = "untrusted_response"
# "<", full-width "＜" or an already-escaped "&lt;" ...
_OPENER = re.compile(r"<|\uff1c|&lt;", re.IGNORECASE)
# ... then, once spaces and invisible characters are ignored, an optional "/" and a tag we use.
_TAG = re.compile(r"/?(?:untrusted|question|reference_context|expected_answer|example)", re.I)
_TAG_CHARS = len("/reference_context")
# How far past an opener to look: padding with thousands of invisible characters is not a tag
# any reader would take seriously, and the bound keeps the scan linear.
_SCAN_LIMIT = 4096
# Letters that render as nothing but are not format characters (Unicode category Cf).
_INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ,.-]*$")


def _invisible(char: str) -> bool:
    # Cf: zero-width space/joiners, bidi marks, soft hyphen, BOM; Mn: combining marks and
    # variation selectors, which attach to a letter without changing what a reader sees.
    return (
        char.isspace() or char in _INVISIBLE_LETTERS or unicodedata.category(char) in ("Cf", "Mn")
    )


def _visible_prefix(text: str, start: int) -> str:
    """The first characters after ``start`` that a reader would see (up to one tag's length)."""
    seen: list[str] = []
    for char in text[start : start + _SCAN_LIMIT]:
        if not _invisible(char):
            seen.append(char)
            if len(seen) >= _TAG_CHARS:
                break
    return "".join(seen)


@functools.lru_cache(maxsize=4096)
def neutralise(text: str) -> str:
    """Defang anything in ``text`` that could pass for one of the prompt's own tags, also when
    zero-width or other invisible characters are slipped into it (``</untru\u200bsted...>``).

    Kept per text: each response and question is shown in several prompts (both orders, every
    retest), and a look-up costs a fraction of a scan."""
    if "<" not in text and "&" not in text and "\uff1c" not in text:
        return text  # no opener at all: three C searches instead of the regex at every char
    parts: list[str] = []
    last = 0
    for opener in _OPENER.finditer(text):
        if _TAG.match(_visible_prefix(text, opener.end())):
            parts.append(text[last : opener.start()])
            parts.append("&lt;")
            last = opener.end()
    if not parts:
        return text
    parts.append(text[last:])
    return "".join(parts)


def fence_untrusted(text: str, label: str) -> str:
    """Wrap ``text`` as untrusted content labelled ``label`` (e.g. "Response A").

    The result holds exactly one opening and one closing fence tag, whatever ``text`` contains.
    """
    return f'<{FENCE_TAG} label="{_checked_label(label)}">\n{neutralise(text)}\n</{FENCE_TAG}>'


@functools.lru_cache(maxsize=1024)  # a run fences with a handful of labels: each checked once
def _checked_label(label: str) -> str:
    """``label``, or ValueError when it does not match ``_LABEL`` (not kept: raised each time)."""
    if not _LABEL.match(label):
        raise ValueError(f"fence label {label!r} must match {_LABEL.pattern}")
    return label


class Fenced(str):
    """A string already fenced by ``fence_untrusted``; templates emit it as is."""

    __slots__ = ()
