"""``jurybox run --until`` (issue 36): a seeded item order judged in blocks, each judge stopped
once its anytime-valid interval answers, the stop derived from the records alone.

Pipeline logic with the ``fake`` provider (its ``first`` behaviour always prefers the response
shown first); the loopback runs through the real ``openai_compatible`` adapter, the kill -9 and
the near-threshold judge are in ``tests/chaos/test_until.py``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from jurybox.app.run import run_from_config
from jurybox.cli import main
from jurybox.config import load_config
from jurybox.errors import ConfigError
from jurybox.io.judgments import read_records
from jurybox.pipeline.options import RunOptions, resume_command, resumed_options
from jurybox.pipeline.runner import load_inputs
from jurybox.pipeline.until import (
    BLOCK_ITEMS,
    UntilSchedule,
    item_order,
    parse_until,
)

from .helpers import config_dict, fake_judge

ITEMS = 100


def _dataset(path: Path, n: int = ITEMS, *, labelled: bool = True) -> Path:
    """Two-arm items whose gold preference (when ``labelled``) alternates between the arms."""
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            row: dict[str, Any] = {
                "id": f"q{i:03d}",
                "question": f"Question {i}?",
                "responses": {"control": f"control {i}", "treatment": f"treatment {i}"},
            }
            if labelled:
                row["human"] = {"preferred_arm": "treatment" if i % 2 else "control"}
            handle.write(json.dumps(row) + "\n")
    return path


def _config(tmp_path: Path, *, judge: dict[str, Any] | None = None, **sections: Any) -> Path:
    import yaml

    dataset = _dataset(tmp_path / "items.jsonl", labelled=sections.pop("labelled", True))
    data = config_dict(
        dataset,
        tmp_path / "out",
        judges={"j1": judge or fake_judge(behavior="first")},
        pipeline={"test_retest_count": 0, **sections.pop("pipeline", {})},
        **sections,
    )
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return data


def _quiet() -> Console:
    return Console(file=io.StringIO(), width=200)


# --- the option -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("decided", "decided"),
        ("win_rate±0.03", "win_rate±0.03"),
        ("win_rate+-0.03", "win_rate±0.03"),
        (" win_rate +/- 0.05 ", "win_rate±0.05"),
    ],
)
def test_until_spellings(text: str, spec: str) -> None:
    assert parse_until(text).spec == spec


@pytest.mark.parametrize("text", ["win_rate 0.03", "win_rate±0", "win_rate±0.7", "trusted", ""])
def test_a_bad_until_names_the_option(text: str) -> None:
    with pytest.raises(ConfigError, match="--until"):
        parse_until(text)


def test_the_order_is_seeded_and_an_item_keeps_its_place() -> None:
    ids = [f"q{i:03d}" for i in range(50)]
    order = item_order(7, ids)
    assert order == item_order(7, list(reversed(ids))) != ids
    assert order != item_order(8, ids)
    fewer = [i for i in ids if i != order[3]]
    assert item_order(7, fewer) == [i for i in order if i != order[3]]


def test_a_resume_carries_until_and_refuses_another() -> None:
    recorded = RunOptions("a.yaml", "runs/a", until="decided")
    carried = resumed_options(recorded, RunOptions("a.yaml", "runs/a"), engine_given=False)
    assert carried.until == "decided"
    assert resume_command(carried) == "jurybox run a.yaml --resume runs/a --until decided"
    other = RunOptions("a.yaml", "runs/a", until="win_rate±0.03")
    with pytest.raises(ConfigError, match="contradicts the run's recorded --until decided"):
        resumed_options(recorded, other, engine_given=False)
    plain = RunOptions("a.yaml", "runs/a")
    with pytest.raises(ConfigError, match="contradicts the run's recorded no --until"):
        resumed_options(plain, other, engine_given=False)


# --- a run ----------------------------------------------------------------------------------


def test_an_always_first_judge_stops_after_a_block_not_trusted(tmp_path: Path) -> None:
    config = _config(tmp_path)
    summary = run_from_config(config, until="decided", console=_quiet())
    out = tmp_path / "out"
    entry = _manifest(out)["until"]
    judge = entry["judges"]["j1"]
    # Shown first in one order and second in the other: right once per item, accuracy 0.5.
    assert judge["stopped_early"] and judge["stop"] == "decided" and judge["trusted"] is False
    assert judge["estimate"] == 0.5 and judge["ci_high"] < entry["threshold"] == 0.70
    assert judge["items_judged"] == BLOCK_ITEMS and judge["units_judged"] == 2 * BLOCK_ITEMS
    assert judge["units_planned"] == 2 * ITEMS
    first_block = set(item_order(42, [f"q{i:03d}" for i in range(ITEMS)])[:BLOCK_ITEMS])
    assert {r.query_id for r in read_records(out)} == first_block
    assert summary.units_run == 2 * BLOCK_ITEMS and _manifest(out)["status"] == "complete"
    assert _manifest(out)["options"]["until"] == "decided"


def test_a_resumed_stopped_run_calls_nothing(tmp_path: Path) -> None:
    config = _config(tmp_path)
    run_from_config(config, until="decided", console=_quiet())
    before = _manifest(tmp_path / "out")["until"]
    again = run_from_config(config, resume=tmp_path / "out", console=_quiet())
    assert again.provider_calls == 0 and again.units_run == 0
    assert _manifest(tmp_path / "out")["until"] == before


def test_the_stop_is_a_function_of_the_records(tmp_path: Path) -> None:
    """A schedule given the records of a stopped run (or a part of them) stands where the run
    stood: the whole set gives the same stop, a prefix the same next units."""
    config = _config(tmp_path, judge=fake_judge(behavior="random", seed=3))
    run_from_config(config, until="decided", console=_quiet())
    records = list(read_records(tmp_path / "out"))
    inputs = load_inputs(load_config(config))
    replayed = UntilSchedule.plan(inputs, parse_until("decided"))
    replayed.begin(records)
    assert replayed.next_round() == []
    assert replayed.recorded() == _manifest(tmp_path / "out")["until"]
    part = UntilSchedule.plan(inputs, parse_until("decided"))
    part.begin(records[: BLOCK_ITEMS + 5])  # the first block and some of the second
    missing = {u.key for u in part.next_round()}
    assert missing and missing.isdisjoint(r.key for r in records[: BLOCK_ITEMS + 5])
    assert missing <= {r.key for r in records}  # the run judged exactly those next
    assert part.recorded()["judges"]["j1"]["blocks"] == 0  # no block complete yet


def test_a_win_rate_stops_at_its_precision(tmp_path: Path) -> None:
    config = _config(tmp_path, labelled=False)
    run_from_config(config, until="win_rate+-0.2", console=_quiet())
    entry = _manifest(tmp_path / "out")["until"]
    judge = entry["judges"]["j1"]
    assert entry["until"] == "win_rate±0.2" and entry["treatment"] == "treatment"
    assert judge["stop"] == "precision" and judge["estimate"] == 0.5  # every order flips: ties
    assert (judge["ci_high"] - judge["ci_low"]) / 2 <= 0.2 and judge["items_judged"] < ITEMS


def test_provider_errors_hold_the_judge_for_the_resume(tmp_path: Path) -> None:
    """A failed call leaves its block open: the session goes no further (no second block is
    judged), and the next --resume redoes it as a plain run would."""
    failing = fake_judge(behavior="first", error_rate=1.0)
    config = _config(tmp_path, judge=failing, pipeline={"max_retries": 0})
    run_from_config(config, until="decided", console=_quiet())
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 2 * BLOCK_ITEMS  # the first block only
    assert {r.status.value for r in records} == {"provider_error"}
    assert _manifest(tmp_path / "out")["until"]["judges"]["j1"]["stop"] is None


@pytest.mark.parametrize(
    ("sections", "flags", "message"),
    [
        ({"task": {"mode": "rubric"}}, [], "needs pairwise judging"),
        ({}, ["--batch"], "provider batches"),
        ({"labelled": False}, [], "needs gold labels"),
    ],
)
def test_until_refuses_what_it_cannot_decide(
    tmp_path: Path, sections: dict[str, Any], flags: list[str], message: str
) -> None:
    config = _config(tmp_path, **sections)
    result = CliRunner().invoke(main, ["run", str(config), "--until", "decided", *flags])
    assert result.exit_code == 2, result.output
    assert message in result.output and not (tmp_path / "out" / "judgments.jsonl").exists()


def test_the_dry_run_shows_the_worst_case_and_the_expected_saving(tmp_path: Path) -> None:
    config = _config(tmp_path)
    result = CliRunner().invoke(main, ["run", str(config), "--until", "decided", "--dry-run"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"worst case {2 * ITEMS} units (the whole plan)" in text
    assert "expected" in text and "saved) under the prior accuracy p ~ Uniform(0.5, 1)" in text
    again = CliRunner().invoke(main, ["run", str(config), "--until", "decided", "--dry-run"])
    assert " ".join(again.output.split()) == text  # seeded: the same figures
    assert not (tmp_path / "out" / "judgments.jsonl").exists()


def test_the_report_of_a_stopped_run_reads_the_anytime_interval(tmp_path: Path) -> None:
    config = _config(tmp_path)
    run_from_config(config, until="decided", console=_quiet())
    result = CliRunner().invoke(
        main, ["analyze", str(tmp_path / "out"), "--out", str(tmp_path / "report"), "--no-plots"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report" / "analysis_report.json").read_text("utf-8"))
    stop = report["stopping"]["judges"]["j1"]
    assert report["stopping"]["until"] == "decided" and stop["items_judged"] == BLOCK_ITEMS
    verdict = report["verdict"]["judges"]["j1"]
    anytime = verdict["accuracy_anytime"]
    assert (anytime["ci_low"], anytime["ci_high"]) == (stop["ci_low"], stop["ci_high"])
    # The betting interval after 20 items is wider than the fixed-n Wilson one over 40 calls.
    assert anytime["ci_high"] - anytime["ci_low"] > (
        verdict["accuracy"]["ci_high"] - verdict["accuracy"]["ci_low"]
    )
    accuracy = next(c for c in verdict["checks"] if c["check"] == "accuracy")
    assert "anytime-valid interval" in accuracy["message"]
    markdown = (tmp_path / "report" / "summary_tables.md").read_text("utf-8")
    assert "Stopped by --until decided: j1 stopped after 20 of 100 items" in markdown


def test_the_accuracy_check_reads_the_anytime_interval_when_given() -> None:
    """After an early stop the fixed-n interval claims too much: where it clears the bar and the
    anytime-valid one does not, the check must not pass."""
    from jurybox.analysis.trust import Estimate, JudgeEvidence, accuracy_check
    from jurybox.thresholds import TrustThresholds

    wilson = Estimate(0.80, 0.72, 0.86)
    plain = JudgeEvidence("j", 60, 120, 0.0, has_labels=True, accuracy=wilson)
    assert accuracy_check(plain, TrustThresholds()).status == "pass"
    stopped = JudgeEvidence(
        "j",
        60,
        120,
        0.0,
        has_labels=True,
        accuracy=wilson,
        accuracy_anytime=Estimate(0.80, 0.66, 0.90),
    )
    check = accuracy_check(stopped, TrustThresholds())
    assert check.status == "warn" and "anytime-valid interval 0.66–0.90" in check.message


def test_until_and_a_fresh_cascade_read_the_labels_file_through_the_labels_section(
    tmp_path: Path,
) -> None:
    """examples/csv_pairwise.yaml's labels file says A / B under its own column names: --until's
    gold and a fresh cascade's labels are read through the config's ``labels:`` section, as
    ``analyze`` reads them (unmapped, the file is refused at column 'qid')."""
    from jurybox.pipeline.until import gold_labels
    from shared_paths import PROJECT_ROOT

    example = PROJECT_ROOT / "examples/csv_pairwise.yaml"
    config = load_config(example)
    assert gold_labels(config, load_inputs(config).items.values()) == {
        "s01": "new",
        "s02": "old",
        "s04": "new",
        "s05": "tie",
        "s06": "old",
        "s08": "old",
        "s10": "new",
        "s12": "old",
    }
    out, run = tmp_path / "cascade", tmp_path / "run"
    argv = ["cascade", str(example), "--judges", "first_pick,long_pick", "--out", str(out)]
    result = CliRunner().invoke(main, [*argv, "--output-dir", str(run)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "cascade.json").read_text(encoding="utf-8"))
    assert report["items"]["n_labelled"] == 8
