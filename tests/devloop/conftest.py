"""Fixtures of the devloop tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from jurybox.devloop.split import split_labelled

from .helpers import LABELLED


@pytest.fixture(scope="session")
def example_split(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/labelled.jsonl split with the defaults (seed 42): train 10, dev 25, test 25."""
    return split_labelled(LABELLED, tmp_path_factory.mktemp("split") / "split", seed=42).out_dir
