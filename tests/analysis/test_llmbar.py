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
