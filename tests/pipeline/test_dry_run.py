"""``jurybox run --dry-run`` as a budget: it reads no key, prices current vendor models from the
price table, and estimates the output at a typical length per judgment (not ``max_tokens``), so
that the estimate of the bundled examples is close to what they then cost (issue #34)."""

from __future__ import annotations

import os
import shutil
import statistics
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from jurybox.app import run_from_config
from jurybox.cli import main
from jurybox.io.judgments import read_records
from jurybox.pipeline.dryrun import TYPICAL_OUTPUT_TOKENS

from .helpers import write_dataset

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODES = ("pairwise", "rubric", "ranking", "criterion")
# The dry-run estimate of a bundled example, priced, against what its run then cost: the
# stated bound (docs/pricing.md). Prompts are counted as the scripted judges count them, and
# their answers are as long as the typical lengths say, so the two agree closely.
ESTIMATE_FACTOR = 1.25


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment with no credential of any kind in it."""
    for name in list(os.environ):
        if any(word in name.upper() for word in ("KEY", "TOKEN", "SECRET", "CREDENTIAL")):
            monkeypatch.delenv(name)


def test_a_dry_run_needs_no_key_and_prices_a_current_model(tmp_path: Path, no_keys: None) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 5)
    config = {
        "judges": {
            "claude": {"provider": "anthropic", "model": "claude-sonnet-4-6"},
            "gemini": {"provider": "google", "model": "gemini-2.5-flash"},
        },
        "task": {"mode": "pairwise"},
        "paths": {"dataset": str(dataset), "output_dir": str(tmp_path / "out")},
    }
    path = tmp_path / "panel.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    # 5 items x 2 orders + 5 retests (the default test_retest_count of 10, capped at 5 items)
    assert "30 work units in all" in text
    assert "unpriced" not in text
    assert "estimated cost $" in text
    assert "jurybox price table (https://platform.claude.com/" in text
    assert not (tmp_path / "out").exists()


def _priced_example(mode: str, workdir: Path) -> Path:
    """examples/<mode>.yaml copied with its folder, every judge given a price."""
    shutil.copytree(EXAMPLES, workdir / "examples")
    path = workdir / "examples" / f"{mode}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for judge in data["judges"].values():
        judge.update(price_input_per_mtok=1.0, price_output_per_mtok=5.0)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", MODES)
def test_the_estimate_of_an_example_is_close_to_what_it_costs(mode: str, tmp_path: Path) -> None:
    config = _priced_example(mode, tmp_path)
    estimate = run_from_config(config, dry_run=True)
    estimated = sum(e.cost_usd or 0.0 for e in estimate.estimates)
    summary = run_from_config(config)
    records = list(read_records(summary.judgments_path))
    spent = sum(r.cost_usd or 0.0 for r in records)
    assert summary.cost_usd == pytest.approx(spent) and spent > 0
    assert 1 / ESTIMATE_FACTOR <= estimated / spent <= ESTIMATE_FACTOR, (estimated, spent)
    # the typical output lengths are what these records say (TYPICAL_OUTPUT_TOKENS' source)
    median = statistics.median(r.output_tokens for r in records if r.output_tokens is not None)
    assert median == TYPICAL_OUTPUT_TOKENS[mode]
    # at max_tokens, the old estimate, the bound is far off: that is why it is only a bound
    most = sum(e.max_cost_usd or 0.0 for e in estimate.estimates)
    assert most > 3 * spent
