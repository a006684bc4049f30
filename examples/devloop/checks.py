"""User checks for the devloop example: plain functions, imported by `kind: code` criteria.

A check takes any of ``response``, ``question``, ``item``, ``metadata`` by name and returns True /
False, "Pass" / "Fail", or (verdict, reason).
"""

from __future__ import annotations

import re

ACTION_VERBS = [
    "add",
    "ask",
    "book",
    "call",
    "check",
    "choose",
    "clear",
    "close",
    "contact",
    "do",
    "download",
    "email",
    "go",
    "install",
    "keep",
    "list",
    "make",
    "open",
    "pour",
    "practise",
    "put",
    "report",
    "rest",
    "send",
    "set",
    "sign",
    "sit",
    "start",
    "switch",
    "tap",
    "try",
    "turn",
    "unscrew",
    "use",
    "wait",
    "write",
]
_CLAUSE_START = re.compile(r"(?:^|[.;:!?—]\s*|,\s*(?:then|and)\s+|\bthen\s+|\band\s+)(\w+)", re.I)


def imperative_step(response: str) -> tuple[bool, str]:
    """Pass when a clause starts with an action verb ("Open Settings", "...; then restart")."""
    for match in _CLAUSE_START.finditer(response):
        word = match.group(1).lower()
        if word in ACTION_VERBS:
            return True, f"clause starts with the action verb {word!r}"
    return False, "no clause starts with an action verb"
