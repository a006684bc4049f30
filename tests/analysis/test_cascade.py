"""``jurybox cascade``: records -> verdict and confidence per judge and item, the replay, and the
command on a fake-provider run and on the LLMBar import (numbers checked from the files)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from jurybox.analysis import AnalysisOptions, build_frame
from jurybox.analysis.cascade import CascadeOptions, judge_items, replay_cascade
from jurybox.app.run import run_from_config
from jurybox.cli import main
from jurybox.io.datasets import load_dataset, load_human_labels
from jurybox.records import Item, JudgeRecord, Status

STAMP = "2026-01-01T00:00:00+00:00"
ORDERS = {"a_first": {"A": "a", "B": "b"}, "b_first": {"A": "b", "B": "a"}}


def _record(qid: str, judge: str, order: str, arm: str | None, **extra: Any) -> JudgeRecord:
    ok = arm is not None
    fields: dict[str, Any] = {
        "key": f"{qid}|{judge}|{order}|r{extra.pop('repeat', 0)}",
        "run_id": "test",
        "query_id": qid,
        "judge_name": judge,
        "judge_model": judge,
        "judge_vendor": "fake",
        "mode": extra.pop("mode", "pairwise"),
        "presentation_order": order,
        "positions": ORDERS[order],
        "status": Status.OK if ok else Status.PROVIDER_ERROR,
        "parse_success": ok,
        "raw_response": None,
        "timestamp": STAMP,
        "preferred_arm": arm,
        **extra,
    }
    return JudgeRecord(**fields)


def _items(gold: Mapping[str, str | None]) -> list[Item]:
    return [
        Item(
            id=qid,
            question=f"question {qid}",
            responses={"a": "first answer", "b": "second answer"},
            human={"preferred_arm": label} if label else {},
        )
        for qid, label in gold.items()
    ]


def test_judge_items_reads_verdict_confidence_and_cost_per_item() -> None:
    records = [
        _record("agree", "j", "a_first", "a", confidence="high", input_tokens=10, output_tokens=2),
        _record("agree", "j", "b_first", "a", confidence="low", input_tokens=10, output_tokens=2),
        _record("split", "j", "a_first", "a", confidence="high"),
        _record("split", "j", "b_first", "b", confidence="high"),
        _record("failed", "j", "a_first", "b", confidence="medium", cost_usd=0.5),
        _record("failed", "j", "b_first", None, cost_usd=0.25),
        _record("tie", "j", "a_first", "tie"),
        _record("tie", "j", "b_first", "tie"),
    ]
    frame = build_frame(records, options=AnalysisOptions())
    ids = ["agree", "split", "failed", "tie", "unjudged"]
    both = judge_items(frame.records, "j", ids)
    assert both.verdict == ("a", None, "b", "tie", None)
    assert both.confidence_kind == "orders×stated"
    # agree: both orders (share 1) × mean stated (1 + 1/3) / 2; failed: 1 of 2 calls × 2/3;
    # tie: a consistent "tie" is a verdict, with no stated confidence (NaN).
    np.testing.assert_allclose(both.confidence[:3], [2 / 3, np.nan, 1 / 3])
    assert math.isnan(both.confidence[3]) and math.isnan(both.confidence[4])
    np.testing.assert_allclose(both.orders_share, [1.0, np.nan, 0.5, 1.0, np.nan])
    np.testing.assert_array_equal(both.calls, [2, 2, 2, 2, 0])
    np.testing.assert_allclose(both.tokens[:1], [24])
    assert np.isnan(both.tokens[1:4]).all()  # a record without token counts
    np.testing.assert_allclose(both.cost_usd[2], 0.75)
    orders = judge_items(frame.records, "j", ids, "orders")
    np.testing.assert_allclose(orders.confidence[:4], [1.0, np.nan, 0.5, 1.0])
    stated = judge_items(frame.records, "j", ids, "stated")
    np.testing.assert_allclose(stated.confidence[:3], [2 / 3, np.nan, 2 / 3])


def test_a_judge_that_states_nothing_falls_back_to_orders_or_is_refused() -> None:
    frame = build_frame([_record("q", "j", o, "a") for o in ORDERS], options=AnalysisOptions())
    assert judge_items(frame.records, "j", ["q"]).confidence_kind == "orders"
    with pytest.raises(ValueError, match="stated no confidence"):
        judge_items(frame.records, "j", ["q"], "stated")


def _two_judge_world(n: int = 400) -> tuple[list[JudgeRecord], list[Item], dict[str, bool]]:
    """cheap: consistent and right on the first 70 % of items, split on the rest; strong:
    consistent everywhere, right on all but every 100th item. Calls priced: cheap 1, strong 10."""
    records, gold, cheap_sure = [], {}, {}
    for i in range(n):
        qid = f"q{i:03d}"
        gold[qid] = "a" if i % 2 else "b"
        wrong = "b" if gold[qid] == "a" else "a"
        cheap_sure[qid] = i < 0.7 * n
        for order in ORDERS:
            cheap = gold[qid] if cheap_sure[qid] else ("a" if order == "a_first" else "b")
            strong = wrong if i % 100 == 0 else gold[qid]
            records.append(_record(qid, "cheap", order, cheap, cost_usd=1.0))
            records.append(_record(qid, "strong", order, strong, cost_usd=10.0))
    return records, _items(gold), cheap_sure


def test_replay_calibrates_on_one_part_and_measures_on_the_other() -> None:
    records, items, cheap_sure = _two_judge_world()
    frame = build_frame(records, items=items, options=AnalysisOptions())
    options = CascadeOptions(judges=("cheap", "strong"), target=0.9, delta=0.1, seed=3)
    replay = replay_cascade(frame, options, source="synthetic")
    report = replay.report
    assert report.items.n_calibration == report.items.n_test == 200
    assert report.settings.cost_basis == "usd"
    cheap, strong = report.stages
    assert cheap.threshold == 1.0 and cheap.n_disagree == 0
    assert cheap.n_reaching == 200 and strong.n_reaching == 200 - cheap.n_selected
    assert strong.threshold == 1.0  # at most 1 error in ~60: passes at target 0.9, δ/2
    out = report.cascade
    assert out.nobody_share == 0 and replay.needs_human == []
    test_ids = sorted(set(frame.labels.preferences["query_id"]) - _calibration_ids(replay, frame))
    sure = sum(cheap_sure[q] for q in test_ids)
    assert out.decided_share["cheap"] == pytest.approx(sure / 200)
    # cheap is right wherever it decides; strong misses every 100th item among the rest.
    misses = sum(not cheap_sure[q] and int(q[1:]) % 100 == 0 for q in test_ids)
    assert out.agreement == pytest.approx(1 - misses / 200)
    # cheap twice on every item (1 each), strong twice on the items cheap left (10 each).
    assert out.cost == pytest.approx(2 * 200 + 20 * (200 - sure))
    assert out.cost_strongest == pytest.approx(4000) and report.strongest_alone.cost_ratio == 1
    assert report.uncalibrated.decided_share == out.decided_share  # same here: 0/1 confidences


def _calibration_ids(replay: Any, frame: Any) -> set[str]:
    """The calibration split, rebuilt as the replay draws it (seeded permutation)."""
    ids = sorted(set(frame.records["query_id"]))
    options = replay.report.settings
    order = np.random.default_rng(options.seed).permutation(np.arange(len(ids)))
    return {ids[i] for i in order[: replay.report.items.n_calibration]}


@pytest.mark.parametrize(
    ("judges", "kwargs", "match"),
    [
        (("cheap", "nobody"), {}, "no records of judge 'nobody'"),
        (("cheap", "strong"), {"calibration_share": 0.999}, "too few to split"),
    ],
)
def test_replay_refuses_what_it_cannot_do(
    judges: tuple[str, ...], kwargs: dict[str, Any], match: str
) -> None:
    records, items, _ = _two_judge_world(40)
    frame = build_frame(records, items=items, options=AnalysisOptions())
    with pytest.raises(ValueError, match=match):
        replay_cascade(frame, CascadeOptions(judges=judges, **kwargs), source="x")


def test_replay_refuses_other_modes() -> None:
    records = [_record("q", "r", "a_first", None, mode="rubric")]
    frame = build_frame(records, options=AnalysisOptions())
    with pytest.raises(ValueError, match="pairwise verdicts"):
        replay_cascade(frame, CascadeOptions(judges=("r",)), source="x")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"judges": ()}, "distinct"),
        ({"judges": ("a", "a")}, "distinct"),
        ({"judges": ("a",), "delta": 0}, "delta"),
        ({"judges": ("a",), "calibration_share": 1}, "calibration share"),
        ({"judges": ("a", "b"), "call_costs": {"a": 1}}, "not for b"),
    ],
)
def test_options_are_checked(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        CascadeOptions(**kwargs)


def _fake_run(tmp: Path, n: int = 160) -> tuple[Path, dict[str, str]]:
    """A fake-provider run: coin (random) then long_pick (the longer answer), both orders; the
    gold is the longer answer on all but every 40th item."""
    rng = np.random.default_rng(5)
    gold = {}
    with (tmp / "items.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            short, long = "x" * int(rng.integers(20, 60)), "y" * int(rng.integers(80, 200))
            arms = (
                {"control": short, "treatment": long}
                if i % 2
                else {"control": long, "treatment": short}
            )
            longer = "treatment" if i % 2 else "control"
            gold[f"i{i:03d}"] = longer if i % 40 else ("control" if i % 2 else "treatment")
            item = {
                "id": f"i{i:03d}",
                "question": f"q{i}",
                "responses": arms,
                "human": {"preferred_arm": gold[f"i{i:03d}"]},
            }
            out.write(json.dumps(item) + "\n")
    config = {
        "judges": {
            "coin": {"provider": "fake", "fake": {"behavior": "random", "seed": 7}},
            "long_pick": {"provider": "fake", "fake": {"behavior": "longer"}},
        },
        "task": {"mode": "pairwise", "arms": ["control", "treatment"]},
        "pipeline": {"random_seed": 1, "position_bias_mode": "both"},
        "paths": {"dataset": "items.jsonl", "output_dir": "run"},
    }
    (tmp / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    run_from_config(tmp / "run.yaml", console=Console(quiet=True))
    return tmp / "run", gold


def test_cascade_command_on_a_fake_run(tmp_path: Path) -> None:
    run, gold = _fake_run(tmp_path)
    out = tmp_path / "cascade"
    args = ["cascade", str(run), "--judges", "coin,long_pick", "--confidence", "orders"]
    result = CliRunner().invoke(main, [*args, "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "cascade.json").read_text(encoding="utf-8"))
    coin, long_pick = report["stages"]
    assert coin["threshold"] is None  # a coin's consistent verdicts are right half the time
    assert long_pick["threshold"] == 1.0 and long_pick["n_reaching"] == 80
    cascade = report["cascade"]
    assert cascade["decided_share"] == {"coin": 0.0, "long_pick": 1.0}
    assert cascade["cost_ratio"] == pytest.approx(cascade["cost"] / cascade["cost_strongest"])
    assert cascade["cost_ratio"] > 1  # the coin was asked about every item for nothing
    assert report["settings"]["cost_basis"] == "tokens"  # the fake provider counts tokens
    # long_pick picks the longer answer: it disagrees exactly on the test items every 40th.
    wrong = sum(1 for q in gold if int(q[1:]) % 40 == 0)
    assert cascade["n_decided"] == 80
    assert 1 - cascade["agreement"] <= wrong / 80
    # Without calibration the coin decides where its two coin flips agree, and misses the target.
    assert report["uncalibrated"]["decided_share"]["coin"] > 0.3
    assert report["uncalibrated"]["meets_target"] is False
    assert "# jurybox cascade: coin → long_pick" in (out / "cascade.md").read_text("utf-8")
    assert (out / "needs_human.jsonl").read_text("utf-8") == ""


def test_needs_human_files_are_ready_to_label(tmp_path: Path) -> None:
    run, gold = _fake_run(tmp_path, n=60)
    out = tmp_path / "cascade"
    args = ["cascade", str(run), "--judges", "coin", "--target", "0.9", "--out", str(out)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (out / "needs_human.jsonl").read_text("utf-8").splitlines()]
    report = json.loads((out / "cascade.json").read_text(encoding="utf-8"))
    assert len(lines) == report["needs_human"] == report["items"]["n_test"]  # coin decides none
    assert all(line == {"query_id": line["query_id"], "preferred_arm": None} for line in lines)
    items = load_dataset(out / "needs_human.items.jsonl")
    assert [item.id for item in items] == [line["query_id"] for line in lines]
    assert items[0].responses and items[0].question
    filled = tmp_path / "filled.jsonl"  # a labeller fills preferred_arm: analyze reads it
    filled.write_text(
        "".join(json.dumps({**x, "preferred_arm": gold[x["query_id"]]}) + "\n" for x in lines)
    )
    assert set(load_human_labels(filled)) == {line["query_id"] for line in lines}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judges", "coin,ghost"], "no records of judge 'ghost'"),
        (["--judges", "coin", "--call-cost", "coin"], "JUDGE=COST"),
        (["--judges", "coin", "--delta", "2"], "delta must lie"),
    ],
)
def test_cascade_command_bad_input_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    run, _ = _fake_run(tmp_path, n=20)
    result = CliRunner().invoke(main, ["cascade", str(run), *args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "o").exists()  # nothing written


@pytest.mark.shared_data
def test_cascade_command_on_llmbar_matches_the_files(tmp_path: Path) -> None:
    from shared_paths import require_shared

    root = require_shared("data/llmbar")
    imported = tmp_path / "llmbar.jsonl"
    result = CliRunner().invoke(main, ["import", "llmbar", str(root), "--out", str(imported)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "cascade"
    args = ["cascade", str(imported), "--judges", "ChatGPT,GPT-4", "--target", "0.8"]
    result = CliRunner().invoke(main, [*args, "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "cascade.json").read_text(encoding="utf-8"))
    consistent = _consistent_from_files(root)
    n = sum(len(v) for v in consistent["GPT-4"].values())
    assert report["items"]["n_items"] == report["items"]["n_labelled"] == n == 366
    # The uncalibrated rule: ChatGPT decides where its two orders agree, GPT-4 where its do.
    test_ids = set(report_test_ids(out, report))
    chatgpt = {q for q, ok in _flat(consistent["ChatGPT"]).items() if ok is not None}
    assert report["uncalibrated"]["decided_share"]["ChatGPT"] == pytest.approx(
        len(test_ids & chatgpt) / len(test_ids)
    )
    for rule in ("cascade", "strongest_alone"):
        outcome = report[rule]
        if outcome["agreement"] is not None:
            assert outcome["ci_low"] <= outcome["agreement"] <= outcome["ci_high"]
    stage = report["stages"][0]
    assert stage["n_reaching"] == report["items"]["n_calibration"] == 183
    if stage["threshold"] is not None:
        assert stage["risk_bound"] <= 0.2


def report_test_ids(out: Path, report: Mapping[str, Any]) -> list[str]:
    """The test items: those the needs-human list and the decided ones come from — rebuilt from
    the seeded split as the replay draws it."""
    ids = sorted(json.loads(line)["id"] for line in (out.parent / "llmbar.items.jsonl").open())
    order = np.random.default_rng(report["settings"]["seed"]).permutation(len(ids))
    return [ids[i] for i in order[report["items"]["n_calibration"] :]]


def _consistent_from_files(root: Path) -> dict[str, dict[str, dict[str, bool | None]]]:
    """Per judge and subset: item id -> whether its consistent verdict is the gold (None: the two
    orders disagree or a verdict is missing), read from the shared files directly."""
    found: dict[str, dict[str, dict[str, bool | None]]] = {"ChatGPT": {}, "GPT-4": {}}
    for subset in ("FairEval", "MT-Bench", "Natural"):
        for judge, table in found.items():
            entries = json.loads((root / subset / "verdicts" / judge / "result.json").read_text())
            table[subset] = {}
            for i, entry in enumerate(entries):
                last = entry["results"][-1]
                first, second = (last[k]["winner"] for k in ("swap = False", "swap = True"))
                same = first is not None and first == second
                table[subset][f"{subset}/{i}"] = (
                    (str(first) == str(entry["label"])) if same else None
                )
    return found


def _flat(table: Mapping[str, Mapping[str, bool | None]]) -> dict[str, bool | None]:
    return {qid: ok for subset in table.values() for qid, ok in subset.items()}
