"""Versions have one home (``jurybox.versions``): jurybox's own (``jurybox.__version__``, the
reports' ``generated_by``) and the manifest's package versions are ``importlib.metadata``'s."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import jurybox
from jurybox.pipeline.manifest import package_versions
from jurybox.versions import installed_version, jurybox_version

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "jurybox"


def test_versions_are_importlib_metadata_s() -> None:
    for name in ("jurybox", "pydantic", "openai", "aiohttp"):
        assert installed_version(name) == metadata.version(name)
    assert installed_version("no-such-distribution-jurybox") is None
    assert jurybox.__version__ == jurybox_version() == metadata.version("jurybox")
    assert package_versions()["jurybox"] == jurybox.__version__


def test_no_other_module_looks_a_version_up() -> None:
    lookups = re.compile(r"importlib\.metadata|from importlib import metadata|\.version\(")
    found = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "versions.py" and lookups.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
