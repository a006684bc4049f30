"""Pricing (issue #34): jurybox's dated price table, a user's prices file over it, a judge's own
settings over both, "unpriced" with its reason, and one way of writing a cost in the dry run,
the progress bar, the summary, the manifest and the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.config import JudgeConfig, config_from_mapping
from jurybox.pipeline.progress import RunningCost
from jurybox.pricing import (
    PRICE_TABLE,
    builtin_table,
    format_cost,
    load_price_file,
    price_judge,
    price_judges,
)
from jurybox.records import JudgeRecord, Status

from .helpers import record

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "jurybox"


def _judge(provider: str, model: str | None = None, **prices: float) -> JudgeConfig:
    return JudgeConfig(provider=provider, model=model, **prices)


def test_the_table_is_dated_and_names_a_source_per_vendor() -> None:
    raw = yaml.safe_load((PACKAGE / PRICE_TABLE).read_text(encoding="utf-8"))
    assert set(raw) == {"openai", "anthropic", "google"}
    for vendor in raw.values():
        assert str(vendor["source"]).startswith("https://") and vendor["checked"]
        assert vendor["models"]


def test_a_current_model_is_priced_from_the_table_and_a_snapshot_by_its_base_name() -> None:
    judge, note = price_judge(_judge("anthropic", "claude-haiku-4-5-20251001"), builtin_table())
    assert (judge.price_input_per_mtok, judge.price_output_per_mtok) == (1.0, 5.0)
    assert judge.price_cached_input_per_mtok == 0.1
    assert note.priced and "platform.claude.com" in note.text and "checked 2026-" in note.text
    gemini, _ = price_judge(_judge("google", "models/gemini-2.5-flash"), builtin_table())
    assert gemini.price_output_per_mtok == 2.5


def test_a_model_not_in_the_table_stays_unpriced_with_the_reason() -> None:
    table = builtin_table()
    for judge in (_judge("openai", "gpt-4.1-mini-finetune"), _judge("fake", "fake-model")):
        priced, note = price_judge(judge, table)
        assert priced.price_input_per_mtok is None and not note.priced
        assert "no price for" in note.text and "paths.prices" in note.text
    # a suffix that is no snapshot date names another model: never priced as its prefix
    assert table.lookup("openai", "gpt-4o-mini-search") is None


def test_the_judges_own_prices_win_and_a_cached_price_stays_with_its_input_price() -> None:
    judge = _judge("openai", "gpt-4o", price_input_per_mtok=1.0)
    priced, note = price_judge(judge, builtin_table())
    assert priced.price_input_per_mtok == 1.0  # the judge's
    assert priced.price_output_per_mtok == 10.0  # the table's
    assert priced.price_cached_input_per_mtok is None  # billed at the judge's input price
    assert note.text.startswith("the judge's price_* settings, the rest from jurybox price table")
    own = _judge("fake", price_input_per_mtok=2.0, price_output_per_mtok=3.0)
    assert price_judge(own, builtin_table())[1].text == "the judge's price_* settings"
    local = price_judge(_judge("local"), builtin_table())[1]
    assert local.priced and "free" in local.text


def _run_config(tmp_path: Path, **paths: str) -> dict[str, object]:
    return {
        "judges": {
            "mine": {
                "provider": "openai_compatible",
                "model": "llama-3-8b",
                "base_url": "http://x",
            },
            "gpt": {"provider": "openai", "model": "gpt-4o"},
        },
        "paths": {"dataset": "d.jsonl", **paths},
        "source_path": str(tmp_path / "run.yaml"),
    }


def test_a_prices_file_extends_and_overrides_the_table(tmp_path: Path) -> None:
    (tmp_path / "prices.yaml").write_text(
        "openai_compatible:\n  source: our GPU bill\n  models:\n"
        "    llama-3-8b: {input: 0.05, output: 0.1}\n"
        "openai:\n  checked: 2027-01-02\n  models:\n    gpt-4o: {input: 2.0, output: 8.0}\n",
        encoding="utf-8",
    )
    data = _run_config(tmp_path, prices="prices.yaml")
    config = config_from_mapping(data, source=str(tmp_path / "run.yaml"))
    priced, notes = price_judges(config)
    assert priced.judges["mine"].price_output_per_mtok == 0.1
    assert priced.judges["gpt"].price_input_per_mtok == 2.0
    assert priced.judges["gpt"].price_cached_input_per_mtok is None  # the file gives none
    assert f"prices file {tmp_path / 'prices.yaml'} (our GPU bill)" in notes["mine"].text
    assert "checked 2027-01-02" in notes["gpt"].text


def test_a_bad_prices_file_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "prices.yaml"
    bad.write_text("openai:\n  models:\n    gpt-4o: {input: -1, output: 8.0}\n", encoding="utf-8")
    with pytest.raises(Exception) as caught:
        load_price_file(bad)
    message = str(caught.value)
    assert str(bad) in message and ":3" in message and "openai.models.gpt-4o.input" in message
    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"id": "q", "question": "?", "responses": {"a": "x", "b": "y"}}\n')
    config = tmp_path / "run.yaml"
    data = _run_config(tmp_path, prices="prices.yaml")
    data.pop("source_path")
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(config), "--dry-run"])
    assert result.exit_code == 2 and "openai.models.gpt-4o.input" in result.output
    assert "Traceback" not in result.output


def test_one_way_of_writing_a_cost() -> None:
    assert format_cost(0.15) == "$0.1500"
    assert format_cost(None) == "$0.0000"  # nothing priced, nobody unpriced: nothing billed
    assert format_cost(None, ["coin"]) == "unpriced (judge coin)"
    assert format_cost(0.15, ["a", "b"]) == "$0.1500 + unpriced (judges a, b)"


def _record(judge: str, cost: float | None, tokens: int | None = 100) -> JudgeRecord:
    return replace(
        record(f"q|{judge}"),
        judge_name=judge,
        input_tokens=tokens,
        output_tokens=tokens,
        cost_usd=cost,
    )


def test_the_progress_bar_never_shows_zero_for_an_unpriced_judge() -> None:
    costs = RunningCost({"free": 4, "paid": 4})
    costs.add(_record("free", None))
    assert costs.text() == "unpriced (judge free)"
    costs.add(_record("paid", 0.01))
    # every judge has answered: the estimate follows, at the rate so far
    assert (
        costs.text()
        == "$0.0100 + unpriced (judge free) · est. $0.0400 + unpriced (judge free) by the end"
    )
    failed = replace(_record("paid", None, tokens=None), status=Status.PROVIDER_ERROR)
    costs.add(failed)  # a failed call has no tokens: it neither costs nor makes a judge unpriced
    assert "judges" not in costs.text()
    for _ in range(3):
        costs.add(_record("free", None))
    costs.add(_record("paid", 0.01))
    costs.add(_record("paid", 0.01))
    assert costs.text() == "$0.0300 + unpriced (judge free)"  # all done: no estimate left


def test_the_manifest_and_the_summary_write_the_cost_alike(tmp_path: Path) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": f"{i}?", "responses": {"a": "x", "b": "yy"}})
            + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    config = {
        "judges": {
            "paid": {"provider": "fake", "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0},
            "free": {"provider": "fake", "fake": {"seed": 1}},  # not the other's cache hits
        },
        "task": {"mode": "pairwise", "arms": ["a", "b"]},
        "pipeline": {"test_retest_count": 0},
        "paths": {"dataset": str(dataset), "output_dir": str(tmp_path / "out")},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["unpriced_judges"] == ["free"]
    assert manifest["cost"].startswith("$") and manifest["cost"].endswith("+ unpriced (judge free)")
    assert f"cost {manifest['cost']}" in " ".join(result.output.split())
    assert "no price for fake" in manifest["judges"]["free"]["unpriced"]
    assert manifest["judges"]["paid"]["prices"] == "the judge's price_* settings"
    out = tmp_path / "out"
    report = CliRunner().invoke(main, ["analyze", str(out), "--out", str(out / "report")])
    assert report.exit_code == 0, report.output
    markdown = (tmp_path / "out" / "report" / "summary_tables.md").read_text(encoding="utf-8")
    assert f"Cost: {manifest['cost']} over 6 priced records" in markdown
