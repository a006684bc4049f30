"""Fencing of untrusted text: candidate responses sit between tags they cannot close.

Every tag the prompts use (``untrusted_response``, ``question``, ``reference_context``,
``expected_answer``, ``example...``) is neutralised wherever it appears inside variable text: the
opening ``<`` of anything that looks like one of them becomes ``&lt;``. The judge still sees what
the text said, but nothing inside a response can end its fence early or open a fake section.
"""

from __future__ import annotations

import re

FENCE_TAG = "untrusted_response"
# "<", full-width "＜" or an already-escaped "&lt;", optional "/" and spaces, then a tag we use.
_LOOKALIKE = re.compile(
    r"(?:<|\uff1c|&lt;)(?=\s*/?\s*(?:untrusted|question|reference_context|expected_answer|example))",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ,.-]*$")


def neutralise(text: str) -> str:
    """Defang anything in ``text`` that could pass for one of the prompt's own tags."""
    return _LOOKALIKE.sub("&lt;", text)


def fence_untrusted(text: str, label: str) -> str:
    """Wrap ``text`` as untrusted content labelled ``label`` (e.g. "Response A").

    The result holds exactly one opening and one closing fence tag, whatever ``text`` contains.
    """
    if not _LABEL.match(label):
        raise ValueError(f"fence label {label!r} must match {_LABEL.pattern}")
    return f'<{FENCE_TAG} label="{label}">\n{neutralise(text)}\n</{FENCE_TAG}>'


class Fenced(str):
    """A string already fenced by ``fence_untrusted``; templates emit it as is."""

    __slots__ = ()
