"""Installed distributions, looked up as ``importlib.metadata`` looks them up, without it.

Start-up (issue #19): importing ``importlib.metadata`` (e-mail parsing, zip files, ...) and
reading every distribution's entry points cost a run ~20-30 ms before its first request: pydantic
searches the entry points for plugins when it builds the first model, and the manifest records
the versions of the packages that shape a run. Where ``sys.path`` holds only folders and the
path finder is the one finder of distributions (the usual virtual environment), this module
reads the same ``*.dist-info`` / ``*.egg-info`` folders in the same order; anywhere else (a zip
or an egg on the path, another finder) it answers ``None`` and the caller asks
``importlib.metadata`` itself.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import types
from importlib.machinery import PathFinder
from typing import Any

_INFO_SUFFIXES = (".dist-info", ".egg-info")
_PLUGIN_LOADER = "pydantic.plugin._loader"


def _plain_folders() -> list[str] | None:
    """The folders ``importlib.metadata`` searches for distributions, in its order, or None
    where it could find them anywhere else."""
    for finder in sys.meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return None
    folders = []
    for entry in sys.path:
        if not isinstance(entry, str):
            return None
        folder = entry or "."  # as importlib.metadata reads "": the working directory
        if os.path.isdir(folder):
            if os.path.basename(folder).lower().endswith(".egg"):
                return None  # an egg's EGG-INFO: importlib.metadata's own business
            folders.append(folder)
        elif os.path.exists(folder):
            return None  # a zip file
    return folders


def _normalized(name: str) -> str:
    """``importlib.metadata``'s ``Prepared.normalize`` (PEP 503, with underscores)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _info_folders(folders: list[str]) -> list[tuple[str, str]]:
    """(normalized name, path) of every distribution's metadata, in ``importlib.metadata``'s
    order: path entry by path entry, each in ``os.listdir`` order."""
    found = []
    for folder in folders:
        for child in os.listdir(folder):
            low = child.lower()
            if low.endswith(_INFO_SUFFIXES):
                name = low.rpartition(".")[0].partition("-")[0]
                found.append((_normalized(name), os.path.join(folder, child)))
    return found


def read_metadata_file(info: str, filename: str) -> str | None:
    """``PathDistribution.read_text``: the file's text, None where it cannot be read."""
    try:
        with open(os.path.join(info, filename), encoding="utf-8") as file:
            return file.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None


def metadata_folder(name: str) -> str | bool | None:
    """The metadata folder ``importlib.metadata.distribution(name)`` reads; False when it
    would find none; None when only ``importlib.metadata`` can say."""
    folders = _plain_folders()
    if folders is None:
        return None
    try:
        wanted = _normalized(name)
        return next((path for found, path in _info_folders(folders) if found == wanted), False)
    except OSError:
        return None


def declares_no_entry_points(group: str) -> bool:
    """True when no installed distribution has an entry point in ``group`` (False where that is
    not certain without ``importlib.metadata``)."""
    folders = _plain_folders()
    if folders is None:
        return False
    try:
        for _, info in _info_folders(folders):
            text = read_metadata_file(info, "entry_points.txt")
            if text is not None and _has_section(text, group):
                return False
    except (OSError, UnicodeDecodeError):
        return False
    return True


def _has_section(text: str, group: str) -> bool:
    # importlib.metadata's ``Sectioned.read``: a stripped line "[...]" names a section.
    for line in map(str.strip, text.splitlines()):
        if line.startswith("[") and line.endswith("]") and line.strip("[]") == group:
            return True
    return False


def spare_pydantic_plugin_search() -> None:
    """When no installed distribution declares a pydantic plugin (entry point group
    ``pydantic``), let pydantic find none without searching for them.

    pydantic imports ``pydantic.plugin._loader`` when it builds its first model, and its
    ``get_plugins`` imports ``importlib.metadata`` and reads every distribution's entry points.
    With no plugin installed it returns an empty collection, as the module put in its place here
    does; with one installed, or where that is not certain, pydantic's own module loads as
    before.
    """
    if _PLUGIN_LOADER in sys.modules or not declares_no_entry_points("pydantic"):
        return
    loader = types.ModuleType(
        _PLUGIN_LOADER, "No pydantic plugin is installed (jurybox.distributions)."
    )
    plugins: dict[str, object] = {}
    loader.__dict__.update(
        PYDANTIC_ENTRY_POINT_GROUP="pydantic",
        _plugins=plugins,
        _loading_plugins=False,
        get_plugins=plugins.values,
        __getattr__=_from_pydantics_loader,
    )
    sys.modules[_PLUGIN_LOADER] = loader


def _from_pydantics_loader(name: str) -> Any:
    """A name the stand-in lacks (a later pydantic's): taken from pydantic's own module, loaded
    now beside it (``__getattr__`` of a module, PEP 562), so that nothing fails for want of it."""
    real = None if name.startswith("__") else _pydantics_loader()  # not what any module lacks
    if real is None:
        raise AttributeError(f"module {_PLUGIN_LOADER!r} has no attribute {name!r}")
    return getattr(real, name)


@functools.cache
def _pydantics_loader() -> types.ModuleType | None:
    """pydantic's own plugin loader, loaded once beside the stand-in (None where not found)."""
    import importlib.util  # noqa: PLC0415  (only for a pydantic this module does not know)

    spec = PathFinder.find_spec(_PLUGIN_LOADER, sys.modules["pydantic.plugin"].__path__)
    if spec is None or spec.loader is None:
        return None
    real = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(real)
    return real
