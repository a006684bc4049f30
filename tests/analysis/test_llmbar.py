"""Reproduce LLMBar's per-order accuracy and swap consistency through import + analysis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jurybox.analysis import import_verdicts, load_imported

from .helpers import analyze, assert_valid_report

pytestmark = pytest.mark.shared_data

FOLDERS = ("MT-Bench", "FairEval", "Natural")
JUDGES = ("GPT-4", "ChatGPT", "LLaMA2", "PaLM2")


def _fraction(text: str) -> tuple[int, int]:
    """'159 / 200 = 79.5%' -> (159, 200)."""
    correct, rest = text.split("/")
    return int(correct), int(rest.split("=")[0])


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    from shared_paths import require_shared  # the shared_data fixture is function-scoped

    root = require_shared("data/llmbar")
    out: dict[str, dict[str, Any]] = {}
    for folder in FOLDERS:
        path = tmp_path_factory.mktemp("llmbar") / f"{folder}.jsonl"
        written = import_verdicts("llmbar", root / folder, path)
        records, items = load_imported(path)
        assert written == len(records) == 2 * len(items) * len(JUDGES)
        out[folder] = analyze(records, items=items)
    return out


def _upstream(shared: Path, folder: str, judge: str) -> dict[str, Any]:
    path = shared / "llmbar" / folder / "verdicts" / judge / "statistics.json"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("judge", JUDGES)
def test_accuracy_per_order_and_swap_consistency_match_upstream(
    reports: dict[str, dict[str, Any]], shared_data: Path, folder: str, judge: str
) -> None:
    upstream = _upstream(shared_data, folder, judge)
    report = reports[folder]
    orders = report["accuracy_vs_gold"]["judges"][judge]["orders"]
    # swap = False shows output_1 first; swap = True shows output_2 first.
    for order, field in (("output_1_first", "correct_False"), ("output_2_first", "correct_True")):
        assert (orders[order]["correct"], orders[order]["n_total"]) == _fraction(upstream[field])
    swap = report["bias"]["position"]["judges"][judge]["swap_consistency"]
    # LLMBar's 'equal' counts pairs unparsed in both orders as equal (None == None).
    equal = (swap["consistent_or_both_failed"], swap["n_pairs_total"])
    assert equal == _fraction(upstream["equal"])


def test_known_figures(reports: dict[str, dict[str, Any]]) -> None:
    mt = reports["MT-Bench"]
    gpt4 = mt["accuracy_vs_gold"]["judges"]["GPT-4"]["orders"]
    assert gpt4["output_1_first"]["correct"] == 159
    assert gpt4["output_2_first"]["correct"] == 165
    assert mt["bias"]["position"]["judges"]["GPT-4"]["swap_consistency"]["consistent"] == 174
    fair = reports["FairEval"]["bias"]["position"]["judges"]["ChatGPT"]["swap_consistency"]
    assert (fair["consistent"], fair["n"]) == (12, 66)


def test_cohen_kappa_against_label_is_correct_not_upstream(
    reports: dict[str, dict[str, Any]],
) -> None:
    kappa = reports["MT-Bench"]["human_calibration"]["preferences"]["judges"]["GPT-4"]
    value = kappa["orders"]["output_1_first"]["value"]
    assert value == pytest.approx(0.590, abs=0.0005)
    assert kappa["orders"]["output_1_first"]["n"] == 200


def test_unparsed_verdicts_are_counted_and_excluded(reports: dict[str, dict[str, Any]]) -> None:
    mt = reports["MT-Bench"]
    assert mt["summary"]["excluded"]["by_status"] == {"unparsed": 15}  # PaLM2's null winners
    palm = mt["bias"]["position"]["judges"]["PaLM2"]["swap_consistency"]
    assert palm["both_failed"] == 7
    assert palm["n"] == 200 - palm["both_failed"] - palm["one_failed"]
    assert mt["summary"]["failures"]["PaLM2"]["parse_failure_rate"] == pytest.approx(15 / 400)


def test_reports_validate_and_verdict_flags_weak_judges(reports: dict[str, dict[str, Any]]) -> None:
    for report in reports.values():
        assert_valid_report(report)
    verdict = reports["MT-Bench"]["verdict"]
    assert verdict["level"] == "not_trusted"
    assert verdict["judges"]["ChatGPT"]["level"] == "not_trusted"
    assert any(r.startswith("ChatGPT: swap consistency") for r in verdict["reasons"])


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("judge", JUDGES)
def test_published_figures_appear_as_numbers(
    reports: dict[str, dict[str, Any]], shared_data: Path, folder: str, judge: str
) -> None:
    """LLMBar's equal, correct_False and correct_True (failures counted) are report numbers."""
    upstream = _upstream(shared_data, folder, judge)
    report = reports[folder]
    orders = report["accuracy_vs_gold"]["judges"][judge]["orders"]
    for order, field in (("output_1_first", "correct_False"), ("output_2_first", "correct_True")):
        correct, n = _fraction(upstream[field])
        assert orders[order]["accuracy_all"] == pytest.approx(correct / n)
    equal, n = _fraction(upstream["equal"])
    swap = report["bias"]["position"]["judges"][judge]["swap_consistency"]
    assert swap["equal"] == pytest.approx(equal / n)


def test_palm2_equal_on_mt_bench(reports: dict[str, dict[str, Any]]) -> None:
    swap = reports["MT-Bench"]["bias"]["position"]["judges"]["PaLM2"]["swap_consistency"]
    assert swap["equal"] == pytest.approx(147 / 200) == 0.735
    # Failures counted as inconsistent, and over pairs parsed in both orders: both numbers.
    assert swap["value_failures_counted"] == pytest.approx(swap["consistent"] / 200)
    assert swap["value"] == pytest.approx(swap["consistent"] / swap["n"])


def test_mt_bench_trusts_gpt4_only_with_figures_both_ways(
    reports: dict[str, dict[str, Any]],
) -> None:
    verdict = reports["MT-Bench"]["verdict"]
    levels = {judge: entry["level"] for judge, entry in verdict["judges"].items()}
    assert levels.pop("GPT-4") == "trusted"
    assert set(levels) == {"ChatGPT", "LLaMA2", "PaLM2"}
    assert "trusted" not in levels.values()
    assert verdict["line"] == "1 of 4 judges can be trusted: GPT-4"
    palm = verdict["judges"]["PaLM2"]
    # PaLM2 fails to answer 15 of 400: the headline counts them wrong, the parsed figure not.
    assert palm["failure_rate"] == pytest.approx(15 / 400)
    assert palm["accuracy"]["value"] < palm["accuracy_parsed"]["value"]
    assert palm["swap_consistency"] < palm["swap_consistency_parsed"]
    gpt4 = verdict["judges"]["GPT-4"]
    assert gpt4["accuracy"]["value"] == pytest.approx((159 + 165) / 400)
    assert gpt4["accuracy"]["ci_low"] >= 0.7
    assert gpt4["swap_consistency"] == gpt4["swap_consistency_parsed"] == pytest.approx(174 / 200)


def test_judges_under_60_percent_are_never_trusted(reports: dict[str, dict[str, Any]]) -> None:
    seen = 0
    for report in reports.values():
        for judge, entry in report["verdict"]["judges"].items():
            if entry["accuracy"]["value"] < 0.6:
                seen += 1
                assert entry["level"] != "trusted", judge
    assert seen >= 2  # FairEval's ChatGPT and LLaMA2 at least


def test_a_whole_tree_gets_a_verdict_per_judge_and_subset(
    reports: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    from shared_paths import require_shared

    path = tmp_path / "all.jsonl"
    import_verdicts("llmbar", require_shared("data/llmbar"), path)
    records, items = load_imported(path)
    verdict = analyze(records, items=items)["verdict"]
    assert sorted(verdict["subsets"]) == sorted(FOLDERS)
    for folder in FOLDERS:  # each subset's levels are those of the subset imported alone
        alone = reports[folder]["verdict"]["judges"]
        for judge, entry in verdict["subsets"][folder].items():
            assert entry["level"] == alone[judge]["level"], (folder, judge)
            assert entry["accuracy"] == alone[judge]["accuracy"], (folder, judge)
            assert entry["n_items"] == alone[judge]["n_items"]
    # GPT-4 is trusted pooled, not on FairEval alone: the pooled answer says so.
    assert verdict["judges"]["GPT-4"]["level"] == "trusted"
    assert verdict["subsets"]["FairEval"]["GPT-4"]["level"] != "trusted"
    assert "GPT-4: use with caution on FairEval alone" in verdict["answer"]


def test_one_subset_gets_no_per_subset_verdict(reports: dict[str, dict[str, Any]]) -> None:
    assert "subsets" not in reports["Natural"]["verdict"]
