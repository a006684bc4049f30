"""Installed versions: jurybox's own (``jurybox.__version__``, the reports' ``generated_by``) and
those of the packages that shape a run (the manifest). The one place they are looked up: through
``importlib.metadata``, each read once per process."""

from __future__ import annotations

import functools
from importlib import metadata

# What a source tree that was never installed calls itself (a valid PEP 440 version).
UNKNOWN_VERSION = "0.0.0+unknown"


@functools.cache
def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None where it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def jurybox_version() -> str:
    """jurybox's installed version (``UNKNOWN_VERSION`` from a tree never installed)."""
    return installed_version("jurybox") or UNKNOWN_VERSION
