"""Judging modes: one module per mode behind ``JudgingMode`` (``modes.base``), looked up by the
config's mode name in ``modes.registry``; typed results in ``modes.results``."""

from jurybox.modes.base import JudgingContext, JudgingMode, Presentation
from jurybox.modes.registry import MODES, build_mode, mode_class
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
