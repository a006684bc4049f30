"""jurybox: run panels of LLM judges over model outputs and measure how far to trust them.

The Python API (docs/python-api.md)::

    import jurybox
    summary = jurybox.run("examples/pairwise.yaml")          # judge: RunSummary
    report = jurybox.analyze(summary.output_dir)             # analyse: the typed Report
    frame = jurybox.load(summary.output_dir)                 # one row per judgment: DataFrame

They are loaded on first use (module ``__getattr__``), so ``import jurybox`` and ``jurybox run``
stay light: no pandas, scipy, statsmodels or matplotlib until an analysis or a frame is asked for.
``__version__`` too is looked up on first use: ``importlib.metadata`` costs tens of milliseconds
that a command line which never asks for it should not pay at start-up (issue #19).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.app.api import analyze, load, run

    __version__: str

_API = ("run", "analyze", "load")
__all__ = ["__version__", "analyze", "load", "run"]


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - on first use

    try:
        return version("jurybox")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("jurybox.app.api"), name)
    if name == "__version__":
        globals()["__version__"] = found = _installed_version()  # looked up once
        return found
    raise AttributeError(f"module 'jurybox' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, "__version__"})
