"""Judging modes: one module per mode behind ``JudgingMode`` (``modes.base``), looked up by the
config's mode name in ``modes.registry``; typed results in ``modes.results``.

The result types are loaded on first read (module ``__getattr__``): a run builds them when it reads
its first answer, not on the way to its first request (start-up, issue #19).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jurybox.modes.base import JudgingContext, JudgingMode, Presentation
from jurybox.modes.registry import MODES, build_mode, mode_class

if TYPE_CHECKING:
    from jurybox.modes.results import (
        ArmScores,
        CriterionResult,
        Failed,
        Judgment,
        Pair,
        PairwiseResult,
        RankingResult,
        RubricResult,
    )

_RESULTS = frozenset(
    {
        "ArmScores",
        "CriterionResult",
        "Failed",
        "Judgment",
        "Pair",
        "PairwiseResult",
        "RankingResult",
        "RubricResult",
    }
)

__all__ = [
    "MODES",
    "ArmScores",
    "CriterionResult",
    "Failed",
    "JudgingContext",
    "JudgingMode",
    "Judgment",
    "Pair",
    "PairwiseResult",
    "Presentation",
    "RankingResult",
    "RubricResult",
    "build_mode",
    "mode_class",
]


def __getattr__(name: str) -> Any:
    if name in _RESULTS:
        return getattr(importlib.import_module("jurybox.modes.results"), name)
    raise AttributeError(f"module 'jurybox.modes' has no attribute {name!r}")
