"""A ``kind: code`` check module is imported only from the criterion's folder: never from the
current directory or ``sys.path``, and not through a symlink that leads out of the folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from jurybox.errors import ConfigError
from jurybox.evaluators import CodeEvaluator, check_fingerprint, load_function
from jurybox.records import Item
from jurybox.rubrics.criteria import CodeCheck

CHECK: TypeAdapter[CodeCheck] = TypeAdapter(CodeCheck)
HONEST = "def verdict(response):\n    return True, 'from the criterion folder'\n"
PLANTED = "def verdict(response):\n    return True, 'PLANTED'\n"


def _check(function: str) -> CodeCheck:
    return CHECK.validate_python({"type": "python", "function": function})


def _item() -> Item:
    return Item(id="q", question="?", responses={"a": "answer"})


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``planted_check.py`` in the current directory and on sys.path, and the criterion folder."""
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    (elsewhere / "planted_check.py").write_text(PLANTED, encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    monkeypatch.syspath_prepend(str(elsewhere))
    folder = tmp_path / "criteria"
    folder.mkdir()
    return folder


def test_a_module_only_in_cwd_or_sys_path_is_refused(planted: Path) -> None:
    with pytest.raises(ConfigError, match="only from the criterion's folder"):
        load_function(_check("planted_check:verdict"), planted)
    with pytest.raises(ConfigError, match="cannot import 'json'"):
        load_function(_check("json:dumps"), planted)  # an installed module is not a check
    with pytest.raises(ConfigError):
        load_function(_check("planted_check:verdict"), None)
    assert "planted_check" not in sys.modules


def test_the_criterion_folder_wins_over_a_same_named_module_elsewhere(planted: Path) -> None:
    (planted / "planted_check.py").write_text(HONEST, encoding="utf-8")
    verdict = CodeEvaluator().evaluate(_check("planted_check:verdict"), _item(), "a", planted)
    assert verdict.reasoning == "from the criterion folder"
    assert check_fingerprint(_check("planted_check:verdict"), planted)


def test_a_symlink_out_of_the_folder_is_refused(planted: Path, tmp_path: Path) -> None:
    (planted / "linked.py").symlink_to(tmp_path / "cwd" / "planted_check.py")
    with pytest.raises(ConfigError, match="cannot import 'linked'"):
        load_function(_check("linked:verdict"), planted)


def test_module_names_cannot_climb_out_of_the_folder(planted: Path, tmp_path: Path) -> None:
    # The config schema already refuses "../up"; names it lets through must still stay inside.
    (planted / "x").mkdir()
    (planted / "x" / "__init__.py").write_text(PLANTED, encoding="utf-8")
    for name in ("x..", "x..up", "_.."):
        with pytest.raises(ConfigError, match="cannot import"):
            load_function(_check(f"{name}:verdict"), planted)
