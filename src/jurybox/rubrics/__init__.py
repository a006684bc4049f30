"""Rubrics as data: the rubric model, scoring math, the safety gate and Pass/Fail criteria.

Start-up (issue #19): each name is imported from its module when first read (PEP 562), so a
run that loads no rubric or criterion (a plain pairwise run) does not create their pydantic
models on its way to the first request.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_MODULE_OF = {
    **dict.fromkeys(("Criterion", "FewShotExample", "Targets", "load_criterion"), "criteria"),
    **dict.fromkeys(
        (
            "WEIGHT_ENV_PREFIX",
            "CeilingRule",
            "Dimension",
            "Rubric",
            "apply_weight_overrides",
            "list_builtin_rubrics",
            "load_rubric",
            "rubric_from_mapping",
            "weight_env_var",
        ),
        "model",
    ),
    **dict.fromkeys(("SafetyResult", "SafetySettings", "check_safety"), "safety"),
    **dict.fromkeys(
        ("OverallScore", "apply_safety_cap", "overall_score", "weighted_mean"), "scoring"
    ),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # read once
    return value


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
