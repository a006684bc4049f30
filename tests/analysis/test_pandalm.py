"""PandaLM's published annotator agreement and majority labels through import + analysis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurybox.analysis import import_verdicts, load_imported

from .helpers import analyze, assert_valid_report

pytestmark = pytest.mark.shared_data


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from shared_paths import require_shared  # the shared_data fixture is function-scoped

    out = tmp_path_factory.mktemp("pandalm") / "judgments.jsonl"
    written = import_verdicts("pandalm", require_shared("data/pandalm"), out)
    records, items = load_imported(out)
    assert written == len(records) == 2 * 999
    assert len(items) == 999
    return analyze(records, items=items)


def test_annotator_pair_kappas_match_the_published_values(report: dict[str, Any]) -> None:
    pairs = report["human_calibration"]["inter_annotator"]["pairs"]
    kappas = {tuple(p["raters"]): round(p["cohen_kappa"]["value"], 2) for p in pairs}
    assert kappas == {
        ("annotator1", "annotator2"): 0.85,
        ("annotator1", "annotator3"): 0.88,
        ("annotator2", "annotator3"): 0.86,
    }


def test_majority_vote_label_counts(report: dict[str, Any]) -> None:
    inter = report["human_calibration"]["inter_annotator"]
    # 0 = tie, 1 = response1, 2 = response2 upstream.
    assert inter["majority_counts"] == {"tie": 105, "response1": 422, "response2": 472}
    assert inter["no_majority"] == 0
    assert report["summary"]["human_labels"]["preferences"] == 999


def test_garbage_verdicts_are_unparsed_and_excluded(report: dict[str, Any]) -> None:
    assert report["summary"]["excluded"]["by_status"] == {"unparsed": 25}
    gpt = report["accuracy_vs_gold"]["judges"]["gpt-3.5-turbo"]["pooled"]
    assert gpt["n"] == 999 - 25 and gpt["n_total"] == 999


def test_single_order_leaves_position_checks_untested(report: dict[str, Any]) -> None:
    judges = report["bias"]["position"]["judges"]
    for entry in judges.values():
        assert entry["swap_consistency"]["status"] == "skipped"
        assert "confounded" in entry["first_position_rate"]["reason"]
    assert_valid_report(report)


def test_judge_vs_human_kappa_is_reported(report: dict[str, Any], shared_data: Path) -> None:
    del shared_data  # marks the dependency for the skip logic
    prefs = report["human_calibration"]["preferences"]["judges"]
    for judge in ("gpt-3.5-turbo", "pandalm-7b"):
        metric = prefs[judge]["pooled"]
        assert 0.3 < metric["value"] < 0.9
        assert set(metric["categories"]) == {"response1", "response2", "tie"}


def test_a_tie_that_matches_a_gold_tie_is_right_not_also_half(report: dict[str, Any]) -> None:
    # PandaLM-7B answers tie 107 times: 32 on items whose majority label is a tie (right, in
    # `correct` already), 75 where the label names a response. Only those 75 count half.
    pandalm = report["accuracy_vs_gold"]["judges"]["pandalm-7b"]
    pooled, ties = pandalm["pooled"], pandalm["ties"]
    assert ties["ties"] == 75 and ties["n_total"] == 999
    assert ties["ties_wrong"] == pytest.approx(pooled["correct"] / 999)
    assert ties["ties_half"] == pytest.approx((pooled["correct"] + 75 / 2) / 999)
    assert ties["ties_half"] <= 1
