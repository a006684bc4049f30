"""What the new labels do in ``analyze``: the verdict they imply, the targeted stream's weights,
and agreement between two annotators (the page's κ and α against the references)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from rich.console import Console

from jurybox import stats
from jurybox.app import analyze_to_dir
from jurybox.app.label import LabelOptions, LabelSession, load_run
from jurybox.app.label_summary import label_summary
from jurybox.io.judgments import read_records

Run = tuple[Path, dict[str, str]]


def _copy(run: Run, tmp_path: Path) -> Path:
    """A copy of the run folder: each test writes its own labels.jsonl into it."""
    return Path(shutil.copytree(run[0], tmp_path / "run"))


def _label(session: LabelSession, truth: dict[str, str], count: int, flip_every: int = 0) -> None:
    """Label the first ``count`` items of the annotator's order by the truth (the better
    response), answering the other way on every ``flip_every``-th one."""
    for position in range(1, count + 1):
        query_id = session.order[position - 1]
        arms = session.arms(query_id)
        choice = arms.index(truth[query_id]) + 1
        if flip_every and position % flip_every == 0:
            choice = 3 - choice
        session.give(position, {"prefer": choice})


def _verdict(run_dir: Path, tmp_path: Path) -> dict[str, Any]:
    analyze_to_dir(
        run_dir,
        human=None,
        dataset=None,
        out_dir=tmp_path / "report",
        plots=False,
        console=Console(quiet=True),
    )
    report: dict[str, Any] = json.loads((tmp_path / "report" / "analysis_report.json").read_text())
    return report


def _levels(report: dict[str, Any]) -> dict[str, str]:
    return {judge: v["level"] for judge, v in report["verdict"]["judges"].items()}


@pytest.mark.parametrize(("count", "long_pick"), [(4, "use_with_caution"), (40, "trusted")])
def test_analyze_gives_the_verdict_the_labels_imply(
    run60: Run, tmp_path: Path, count: int, long_pick: str
) -> None:
    """Always right -> trusted with enough labels (not with 4); always first -> not trusted."""
    run_dir = _copy(run60, tmp_path)
    session = LabelSession(load_run(run_dir), LabelOptions(annotator="ann"))
    _label(session, run60[1], count)
    session.close()
    report = _verdict(run_dir, tmp_path)  # reads RUN/labels.jsonl by default
    assert _levels(report) == {"long_pick": long_pick, "first_pick": "not_trusted"}
    design = report["accuracy_vs_gold"]["design"]
    assert design["streams"] == {"uniform": count}
    assert design["judges"]["first_pick"]["counted"]["value"] == pytest.approx(0.5)


def _true_accuracy(run_dir: Path, truth: dict[str, str], judge: str) -> float:
    """The judge's accuracy over every item of the run (failures count as wrong)."""
    hits = [
        r.preferred_arm == truth[r.query_id]
        for r in read_records(run_dir / "judgments.jsonl")
        if r.judge_name == judge and not r.retest
    ]
    return float(np.mean(hits))


def test_targeted_labels_are_weighted_and_kept_out_of_the_random_sample(
    mixed: Run, tmp_path: Path
) -> None:
    run_dir = _copy(mixed, tmp_path)
    run = load_run(run_dir)
    options = LabelOptions(annotator="ann", stream="targeted")
    session = LabelSession(run, options)
    _label(session, mixed[1], 50)
    session.close()
    report = _verdict(run_dir, tmp_path)
    design = report["accuracy_vs_gold"]["design"]
    assert design["streams"] == {"targeted": 38, "uniform": 12}
    assert design["strata"] == run.sizes
    coin = design["judges"]["coin"]["counted"]
    truth = _true_accuracy(run_dir, mixed[1], "coin")
    assert coin["ci_low"] <= truth <= coin["ci_high"]
    assert coin["n_by_stratum"]["contested"] > 50 * run.sizes["contested"] / 120
    # The plain figures read the uniform stream's labels only; the verdict the weighted one.
    assert report["accuracy_vs_gold"]["n_labelled"] == 12
    assert report["summary"]["human_labels"]["targeted"] == 38
    assert report["verdict"]["judges"]["coin"]["accuracy"]["value"] == coin["value"]
    assert _levels(report) == {
        "long_pick": "trusted",
        "long_too": "trusted",
        "coin": "not_trusted",
    }
    tables = (tmp_path / "report" / "summary_tables.md").read_text(encoding="utf-8")
    assert "Accuracy over the items jurybox label chose, weighted by stratum" in tables
    assert "Labelled items by stream: 38 targeted, 12 uniform" in tables


def test_targeted_labels_alone_still_reach_the_verdict(mixed: Run, tmp_path: Path) -> None:
    run_dir = _copy(mixed, tmp_path)
    options = LabelOptions(annotator="ann", stream="targeted", uniform_share=0.0)
    session = LabelSession(load_run(run_dir), options)
    _label(session, mixed[1], 40)
    session.close()
    report = _verdict(run_dir, tmp_path)
    accuracy = report["accuracy_vs_gold"]
    assert accuracy["status"] == "computed" and accuracy["judges"] == {}
    assert accuracy["design"]["streams"] == {"targeted": 40}
    assert _levels(report)["coin"] == "not_trusted"
    coin = report["verdict"]["judges"]["coin"]["accuracy"]
    assert coin["value"] == accuracy["design"]["judges"]["coin"]["counted"]["value"]


def test_two_annotators_kappa_matches_stats_and_krippendorff(run60: Run, tmp_path: Path) -> None:
    run_dir = _copy(run60, tmp_path)
    run, truth = load_run(run_dir), run60[1]
    ann = LabelSession(run, LabelOptions(annotator="ann"))
    bob = LabelSession(run, LabelOptions(annotator="bob"))
    _label(ann, truth, 45)
    _label(bob, truth, 45, flip_every=4)
    summary = label_summary(bob)
    both = sorted(set(ann.order[:45]) & set(bob.order[:45]))
    assert len(both) >= 20
    labels = {
        name: {q: s.progress().latest[q].human["preferred_arm"] for q in both}
        for name, s in (("ann", ann), ("bob", bob))
    }
    a = [labels["ann"][q] for q in both]
    b = [labels["bob"][q] for q in both]
    pair = summary["agreement"]["pairs"][0]
    assert pair["raters"] == ["ann", "bob"]
    assert pair["cohen_kappa"]["value"] == pytest.approx(stats.cohen_kappa(a, b).kappa)
    assert pair["cohen_kappa"]["n"] == len(both)
    codes = {"arm_alpha": 0, "arm_omega": 1, "tie": 2}
    data = np.array([[codes[x] for x in a], [codes[x] for x in b]], dtype=float)
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert summary["agreement"]["krippendorff_alpha"]["value"] == pytest.approx(reference)
    assert summary["annotators"] == ["ann", "bob"]
    ann.close()
    bob.close()
    report = _verdict(run_dir, tmp_path)  # the next analyze shows the same block
    assert report["human_calibration"]["inter_annotator"] == summary["agreement"]
