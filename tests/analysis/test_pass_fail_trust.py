"""A Pass/Fail (criterion) judge's trust verdict reads its agreement with the human labels.

Before, the verdict never read it: every criterion judge, whatever its quality, was
"insufficient evidence — accuracy untested". The figure is the worse of TPR and TNR (failures
counted as wrong), each interval over items, against the accuracy limits: plain accuracy would
trust a judge that always says Pass where most labels are Pass.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jurybox.analysis import analyze_records
from jurybox.analysis.trust import Estimate, PassFailAgreement, pass_fail_check
from jurybox.cli import main
from jurybox.reporting.sections.first_screen import judge_findings
from jurybox.stats import clustered_proportion
from jurybox.thresholds import TrustThresholds
from shared_paths import PROJECT_ROOT

from .known_pass_fail import POLICIES, items, judge_records, panel_records

# 80% of the labels Pass: plain accuracy gives an always-Pass judge 0.80.
N_PASS, N_FAIL = 160, 40
LEVELS = {
    "always_right": "trusted",
    "always_pass": "not_trusted",
    "always_fail": "not_trusted",
    "coin_flip": "not_trusted",
    "never_answers": "not_trusted",
}


def _verdict(report: Any, judge: str) -> dict[str, Any]:
    return dict(report.model_dump(mode="json")["verdict"]["judges"][judge])


def _accuracy_check(entry: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in entry["checks"] if c["check"] == "accuracy")


def test_each_known_pass_fail_judge_gets_the_level_its_quality_deserves() -> None:
    labelled = items(N_PASS, N_FAIL)
    report = analyze_records(panel_records(labelled), items=labelled)
    levels = {judge: _verdict(report, judge)["level"] for judge in POLICIES}
    assert levels == LEVELS
    right = _verdict(report, "always_right")
    assert right["pass_fail"]["tpr"]["value"] == right["pass_fail"]["tnr"]["value"] == 1.0
    assert right["pass_fail"]["n_items"] == N_PASS + N_FAIL
    check = _accuracy_check(right)
    assert check["status"] == "pass" and check["applied"] == 0.70
    assert "worse of TPR 1.00" in check["message"] and "clears 0.70" in check["message"]
    # The always-Pass judge: TPR 1, TNR 0; failed on the worse one, against the fail limit.
    always = _verdict(report, "always_pass")
    assert always["pass_fail"]["tnr"]["value"] == 0.0
    check = _accuracy_check(always)
    assert check["status"] == "fail" and check["value"] == 0.0 and check["applied"] == 0.60
    # A failed call is wrong in both rates.
    never = _verdict(report, "never_answers")["pass_fail"]
    assert never["tpr"]["value"] == never["tnr"]["value"] == 0.0


def test_plain_accuracy_would_have_rewarded_the_always_pass_judge() -> None:
    """Why not plain accuracy: on these labels it gives the always-Pass judge 0.80, above the
    accuracy limits, while it never catches a failure."""
    labelled = items(N_PASS, N_FAIL)
    records = judge_records("always_pass", labelled)
    gold = {item.id: item.human["verdict"]["assistant"] for item in labelled}
    plain = clustered_proportion([r.verdict == gold[r.query_id] for r in records])
    assert plain.estimate == pytest.approx(0.80)
    assert plain.ci_low > TrustThresholds().fail_accuracy


def test_few_labels_are_not_enough_to_trust_even_an_always_right_judge() -> None:
    labelled = items(4, 4)
    report = analyze_records(judge_records("always_right", labelled), items=labelled)
    entry = _verdict(report, "always_right")
    assert entry["level"] == "use_with_caution"
    assert "not shown to clear 0.70" in _accuracy_check(entry)["message"]


def test_labels_of_one_class_leave_the_accuracy_untested() -> None:
    """Every label Pass: an always-Pass judge is perfect on them and says nothing of failures."""
    labelled = items(50, 0)
    report = analyze_records(judge_records("always_pass", labelled), items=labelled)
    entry = _verdict(report, "always_pass")
    assert entry["level"] == "insufficient_evidence"
    assert _accuracy_check(entry)["status"] == "skipped"
    assert "pass_fail" not in entry


def test_an_item_judged_on_several_criteria_counts_once() -> None:
    """Three criteria per item share it: 10 items of each class are 10, not 30, in the
    intervals, and the judge is not trusted on 30 correlated judgments of 10 items."""
    labelled = items(10, 10)
    records = judge_records("always_right", labelled, criteria=("c1", "c2", "c3"))
    report = analyze_records(records, items=labelled)
    entry = _verdict(report, "always_right")
    assert entry["pass_fail"]["n_items"] == 20
    over_items = clustered_proportion([1] * 30, [i // 3 for i in range(30)])
    over_judgments = clustered_proportion([1] * 30)
    assert entry["pass_fail"]["tnr"]["ci_low"] == pytest.approx(over_items.ci_low)
    assert over_items.ci_low < TrustThresholds().min_accuracy <= over_judgments.ci_low
    assert entry["level"] == "use_with_caution"


def test_the_worse_rate_decides_with_its_own_interval() -> None:
    """TPR high but shown on few items, TNR high on many: the lower bound that decides is the
    lower of the two, so a rate resting on few items cannot be trusted by the other's count."""
    found = PassFailAgreement(
        tpr=Estimate(0.95, 0.62, 0.99), tnr=Estimate(0.90, 0.85, 0.94), n_items=80, method="m"
    )
    check = pass_fail_check(found, TrustThresholds())
    assert check.status == "warn" and check.value == 0.90
    assert found.worse == Estimate(0.90, 0.62, 0.94)


def test_the_criterion_example_now_gets_a_level_from_its_labels(tmp_path: Path) -> None:
    """examples/criterion.yaml's scripted judge answers at random: TPR 17/31, TNR 14/29 on the
    60 labelled items. It was 'insufficient evidence: accuracy untested'; now the worse rate,
    TNR 0.48, is below 0.60: not trusted, said in words on the first screen."""
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    runner = CliRunner()
    ran = runner.invoke(main, ["run", str(tmp_path / "examples/criterion.yaml")])
    assert ran.exit_code == 0, ran.output
    analysed = runner.invoke(
        main, ["analyze", str(tmp_path / "examples/results/criterion"), "--no-plots"]
    )
    assert analysed.exit_code == 0, analysed.output
    assert "checker: not trusted — catches 48% of failures (TNR, 95% CI 0.31–0.66)" in (
        analysed.output
    )
    assert "passes 55% of passes (TPR, 95% CI 0.38–0.71) over 60 labelled items" in (
        analysed.output
    )
    assert "(limit 0.60: not trusted)" in analysed.output


def test_the_first_screen_reads_both_rates_in_words() -> None:
    labelled = items(N_PASS, N_FAIL)
    report = analyze_records(judge_records("always_right", labelled), items=labelled)
    entry = report.verdict.judges["always_right"]
    found = entry.pass_fail
    assert found is not None
    assert judge_findings(report, "always_right", entry)[0] == (
        f"catches 100% of failures (TNR, 95% CI {found.tnr.ci_low:.2f}–1.00) and passes 100% "
        f"of passes (TPR, 95% CI {found.tpr.ci_low:.2f}–1.00) over 200 labelled items, "
        "failures counted (limit 0.70: passes)"
    )
