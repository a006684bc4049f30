"""``jurybox.distributions`` finds what ``importlib.metadata`` finds (start-up, issue #19), so a
run's way to its first request needs neither ``importlib.metadata`` nor pydantic's plugin search,
and an installed pydantic plugin still sees jurybox's models."""

from __future__ import annotations

import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from jurybox.distributions import declares_no_entry_points, metadata_folder
from jurybox.pipeline.manifest import _PACKAGES, package_versions
from python_child import run_python

PLUGIN_ENTRY_POINT = "[pydantic]\nrecorder = jb_recorder:plugin\n"


def test_every_installed_distribution_is_found_where_importlib_metadata_finds_it() -> None:
    names = {dist.metadata["Name"] for dist in metadata.distributions()} - {None}
    assert len(names) > 20
    for name in sorted(names):
        assert metadata_folder(name) == str(vars(metadata.distribution(name))["_path"]), name
    assert metadata_folder("no-such-distribution-jurybox") is False


@pytest.mark.parametrize("group", ["pydantic", "console_scripts", "pytest11", "no-such-group"])
def test_entry_point_groups_as_importlib_metadata_sees_them(group: str) -> None:
    assert declares_no_entry_points(group) == (not metadata.entry_points(group=group))


def _plugin_distribution(folder: Path, entry_points: str) -> Path:
    info = folder / "jb_recorder-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jb-recorder\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    (folder / "jb_recorder.py").write_text(
        "class Recorder:\n"
        "    seen = []\n"
        "    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):\n"
        "        Recorder.seen.append(path.name)\n"
        "        return None, None, None\n"
        "plugin = Recorder()\n"
    )
    return folder


def test_a_declared_plugin_or_a_zip_on_the_path_leaves_the_search_to_pydantic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = _plugin_distribution(
        tmp_path / "plugin", "[pydantic]\nrecorder = jb_recorder:plugin\n"
    )
    other = _plugin_distribution(tmp_path / "other", "[console_scripts]\njb = jb_recorder:plugin\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(other)])
    assert declares_no_entry_points("pydantic") and not declares_no_entry_points("console_scripts")
    monkeypatch.setattr(sys, "path", [*sys.path, str(plugin)])
    assert not declares_no_entry_points("pydantic")
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("x.py", "")
    monkeypatch.setattr(sys, "path", [str(archive), str(other)])
    assert not declares_no_entry_points("no-such-group")
    assert metadata_folder("jb-recorder") is None


def test_an_installed_pydantic_plugin_still_sees_jurybox_s_models(tmp_path: Path) -> None:
    plugin = _plugin_distribution(tmp_path, PLUGIN_ENTRY_POINT)
    code = (
        "import sys, jurybox.config, jb_recorder\n"
        "seen = set(jb_recorder.Recorder.seen)\n"
        "print(sorted({'TrustThresholds', 'RunConfig', 'JudgeConfig'} & seen),"
        " hasattr(sys.modules['pydantic.plugin._loader'], '__file__'))\n"
    )
    assert run_python(code, plugin) == "['JudgeConfig', 'RunConfig', 'TrustThresholds'] True"


def test_a_run_s_models_and_versions_need_no_importlib_metadata() -> None:
    """Nor ``email``: the HTTP date of a ``Retry-After`` is parsed with it only when one comes."""
    code = (
        "import sys, jurybox.app.run, jurybox.providers.openai_compatible\n"
        "from jurybox.pipeline.manifest import package_versions\n"
        "versions = package_versions()\n"
        "print(sorted({'importlib.metadata', 'email'} & set(sys.modules)), versions)\n"
    )
    expected = {"python": package_versions()["python"]}
    for name in _PACKAGES:
        try:
            expected[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    assert run_python(code) == f"[] {expected}"


def test_a_name_the_stand_in_lacks_comes_from_pydantic_s_own_loader() -> None:
    """A later pydantic reading another name of its plugin loader gets pydantic's own."""
    code = (
        "import sys, jurybox.thresholds\n"
        "loader = sys.modules['pydantic.plugin._loader']\n"
        "from pydantic.plugin._loader import warnings as from_real\n"
        "import warnings\n"
        "print(hasattr(loader, '__file__'), from_real is warnings, list(loader.get_plugins()))\n"
    )
    assert run_python(code) == "False True []"
