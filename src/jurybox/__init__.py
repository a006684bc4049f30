"""jurybox: run panels of LLM judges over model outputs and measure how far to trust them.

The Python API (docs/python-api.md)::

    import jurybox
    summary = jurybox.run("examples/pairwise.yaml")          # judge: RunSummary
    report = jurybox.analyze(summary.output_dir)             # analyse: the typed Report
    frame = jurybox.load(summary.output_dir)                 # one row per judgment: DataFrame

They are loaded on first use (module ``__getattr__``), so ``import jurybox`` and ``jurybox run``
stay light: no pandas, scipy, statsmodels or matplotlib until an analysis or a frame is asked for.
``__version__`` too is looked up on first use (``jurybox.versions``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jurybox.app.api import analyze, load, run

    __version__: str

_API = ("run", "analyze", "load")
__all__ = ["__version__", "analyze", "load", "run"]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module("jurybox.app.api"), name)
    if name == "__version__":
        from jurybox.versions import jurybox_version  # noqa: PLC0415 - on first use

        return jurybox_version()
    raise AttributeError(f"module 'jurybox' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API, "__version__"})
