"""Runs of scripted judges to label, made once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from .world import PANEL, make_run

# long_pick and a second always-longer judge agree on every item; the coin disagrees or flips
# on most: the items where it agrees with them in both orders are the settled stratum.
AGREEING = (
    ("long_pick", "model-quillbert", "longer"),
    ("long_too", "model-verbena", "longer"),
    ("coin", "model-tossup", "random"),
)


@pytest.fixture(scope="module")
def run60(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """60 items, first_pick and long_pick: every item contested (first_pick flips)."""
    return make_run(tmp_path_factory.mktemp("run60"), 60, PANEL)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """120 items with both strata (see AGREEING)."""
    return make_run(tmp_path_factory.mktemp("mixed"), 120, AGREEING)
