"""The ``verdict`` section: can these judges be trusted for this comparison?"""

from __future__ import annotations

from typing import Literal

from jurybox.analysis.model._base import Model, Number

Level = Literal["trusted", "use_with_caution", "not_trusted", "insufficient_evidence"]
CheckStatus = Literal["pass", "warn", "fail", "skipped"]


class Check(Model):
    """One trust check; ``value`` is what was observed, ``threshold`` where it passes."""

    check: str
    judge: str | None
    status: CheckStatus
    value: Number | None
    threshold: Number | None
    message: str


class JudgeVerdict(Model):
    """One judge's own level and the messages of its failed or warned checks."""

    level: Level
    reasons: list[str]


class Verdict(Model):
    """The plain-language answer and the checks behind it."""

    level: Level
    trustworthy: bool | None
    answer: str
    reasons: list[str]
    checks: list[Check]
    judges: dict[str, JudgeVerdict]
