"""A fresh copy of examples/ with the pairwise example run in it (fake judges, offline, seconds)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from jurybox.cli import main
from shared_paths import PROJECT_ROOT, require_shared


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def pairwise_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project root holding ``examples/`` and ``examples/results/pairwise`` (judged from the
    root, as the README does); returns that root."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(PROJECT_ROOT / "examples", root / "examples")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        result = invoke("run", "examples/pairwise.yaml")
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture(scope="module")
def mt_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The LLMBar MT-Bench verdicts imported (1,600 records, 200 items with gold)."""
    source = require_shared("data/llmbar/MT-Bench")
    judgments = tmp_path_factory.mktemp("mt") / "judgments.jsonl"
    assert invoke("import", "llmbar", str(source), "--out", str(judgments)).exit_code == 0
    return judgments
