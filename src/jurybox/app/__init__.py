"""The use cases the CLI and the Python API call: run a config, run the demo, analyse a run.

- ``run_from_config(config_path, *, output_dir=None, resume=None, dry_run=False, limit=None,
  console=None) -> RunSummary`` (``jurybox run``), in ``jurybox.app.run``.
- ``run_demo(output_dir, *, console=None) -> RunSummary`` (``jurybox demo``), in
  ``jurybox.app.demo``.
- ``analyze_to_dir(judgments, *, human, dataset, out_dir, ...) -> ReportPaths``
  (``jurybox analyze``), in ``jurybox.app.analyze``.
- ``compare_to_dir(runs, *, out_dir, ...)`` (``jurybox compare``), in ``jurybox.app.compare``;
  ``jurybox export`` and ``jurybox batches`` live in ``app/export.py`` and ``app/batches.py``.

This layer sits above ``pipeline``, ``analysis`` and ``reporting`` and may import all of them;
nothing below imports it. Submodules are imported on use so that ``jurybox run`` never loads the
analysis stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.app.analyze import analyze_to_dir, build_report
    from jurybox.app.compare import compare_to_dir
    from jurybox.app.demo import run_demo
    from jurybox.app.run import run_from_config

_EXPORTS = {
    "analyze_to_dir": "analyze",
    "build_report": "analyze",
    "compare_to_dir": "compare",
    "run_demo": "demo",
    "run_from_config": "run",
}
__all__ = ["analyze_to_dir", "build_report", "compare_to_dir", "run_demo", "run_from_config"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jurybox.app' has no attribute {name!r}")
    return getattr(importlib.import_module(f"jurybox.app.{module}"), name)
