"""The one place with concurrency: plan work units, call judges, store and resume judgments.

``run_from_config`` (CLI ``jurybox run``) and ``run_demo`` (``jurybox demo``) are the synchronous
entry points; ``run_async`` is the same run for callers already inside an event loop.

Exports are resolved lazily so that ``import jurybox.pipeline.store`` (the analysis reads
judgments with it) does not pull in providers, datasets and the runner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.pipeline.demo import run_demo
    from jurybox.pipeline.entry import run_from_config
    from jurybox.pipeline.runner import Runtime, run_async
    from jurybox.pipeline.store import read_records
    from jurybox.pipeline.summary import JudgeEstimate, RunSummary
    from jurybox.pipeline.units import plan_units

_EXPORTS = {
    "JudgeEstimate": "summary",
    "RunSummary": "summary",
    "Runtime": "runner",
    "plan_units": "units",
    "read_records": "store",
    "run_async": "runner",
    "run_demo": "demo",
    "run_from_config": "entry",
}
__all__ = [
    "JudgeEstimate",
    "RunSummary",
    "Runtime",
    "plan_units",
    "read_records",
    "run_async",
    "run_demo",
    "run_from_config",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jurybox.pipeline' has no attribute {name!r}")
    return getattr(importlib.import_module(f"jurybox.pipeline.{module}"), name)
