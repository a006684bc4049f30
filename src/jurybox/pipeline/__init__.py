"""The one place with concurrency: plan work units, call judges, store and resume judgments.

``run_async`` runs (or resumes) a config's work units; the synchronous entry points that the
CLI calls (``run_from_config``, ``run_demo``) live in ``jurybox.app``.

Exports are resolved lazily so that importing one submodule does not pull in providers and the
runner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.pipeline.runner import Runtime, run_async
    from jurybox.pipeline.summary import JudgeEstimate, RunSummary
    from jurybox.pipeline.units import plan_units

_EXPORTS = {
    "JudgeEstimate": "summary",
    "RunSummary": "summary",
    "Runtime": "runner",
    "plan_units": "units",
    "run_async": "runner",
}
__all__ = [
    "JudgeEstimate",
    "RunSummary",
    "Runtime",
    "plan_units",
    "run_async",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jurybox.pipeline' has no attribute {name!r}")
    return getattr(importlib.import_module(f"jurybox.pipeline.{module}"), name)
