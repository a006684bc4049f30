"""Rubrics as data: the rubric model, scoring math, the safety gate and Pass/Fail criteria."""

from jurybox.rubrics.criteria import Criterion, FewShotExample, Targets, load_criterion
from jurybox.rubrics.model import (
    WEIGHT_ENV_PREFIX,
    CeilingRule,
    Dimension,
    Rubric,
    apply_weight_overrides,
    list_builtin_rubrics,
    load_rubric,
    rubric_from_mapping,
    weight_env_var,
)
from jurybox.rubrics.safety import SafetyResult, SafetySettings, check_safety
from jurybox.rubrics.scoring import OverallScore, apply_safety_cap, overall_score, weighted_mean

__all__ = [
    "WEIGHT_ENV_PREFIX",
    "CeilingRule",
    "Criterion",
    "Dimension",
    "FewShotExample",
    "OverallScore",
    "Rubric",
    "SafetyResult",
    "SafetySettings",
    "Targets",
    "apply_safety_cap",
    "apply_weight_overrides",
    "check_safety",
    "list_builtin_rubrics",
    "load_criterion",
    "load_rubric",
    "overall_score",
    "rubric_from_mapping",
    "weight_env_var",
    "weighted_mean",
]
