"""`analyze RUN_DIR` uses the dataset and labels the run's manifest names, and says so (#15)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from interop.conftest import invoke

RUN = "examples/results/pairwise"


def _analyze(root: Path, out: str, *flags: str) -> tuple[dict, str]:
    result = invoke("analyze", RUN, "--out", out, "--no-plots", *flags)
    assert result.exit_code == 0, result.output
    report = json.loads((root / out / "analysis_report.json").read_text(encoding="utf-8"))
    return report, result.output


def _figures(report: dict) -> dict:
    """The parts that need the items and labels: label counts, the verdicts, the verbosity bias."""
    return {
        "labels": report["summary"]["human_labels"],
        "verdict": report["verdict"]["line"],
        "verbosity": report["bias"]["verbosity"],
    }


@pytest.mark.slow
def test_the_manifest_dataset_and_labels_are_used_and_said(
    pairwise_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pairwise_run)
    implicit, said = _analyze(pairwise_run, "r1")
    assert "dataset: examples/items.jsonl (from manifest.json)" in said
    assert "human labels: examples/human_labels.jsonl (from manifest.json)" in said
    explicit, said_given = _analyze(
        pairwise_run,
        "r2",
        "--dataset",
        "examples/items.jsonl",
        "--human",
        "examples/human_labels.jsonl",
    )
    assert "dataset: examples/items.jsonl (given)" in said_given
    assert _figures(implicit) == _figures(explicit)
    assert implicit["summary"]["human_labels"]["preferences"] > 0  # the labels were really joined


def test_a_moved_project_is_found_from_the_run_folder(
    pairwise_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "moved"
    shutil.copytree(pairwise_run / "examples", moved / "examples")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the recorded relative paths do not resolve from here
    result = invoke("analyze", str(moved / RUN), "--out", "r", "--no-plots")
    assert result.exit_code == 0, result.output
    assert f"dataset: {moved / 'examples/items.jsonl'} (from manifest.json)" in result.output
    assert f"human labels: {moved / 'examples/human_labels.jsonl'}" in result.output


def test_a_changed_or_missing_dataset_is_said(
    pairwise_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(pairwise_run / "examples", copy / "examples")
    monkeypatch.chdir(copy)
    items = copy / "examples/items.jsonl"
    items.write_text(items.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = invoke("analyze", RUN, "--out", "r1", "--no-plots")
    assert result.exit_code == 0, result.output
    assert "changed since the run (hash differs)" in result.output
    items.unlink()
    result = invoke("analyze", RUN, "--out", "r2", "--no-plots")
    assert result.exit_code == 0, result.output
    assert "names examples/items.jsonl, not found: pass --dataset" in result.output


def test_run_ends_with_the_analyze_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "examples/pairwise.yaml", "--limit", "2")
    assert result.exit_code == 0, result.output
    command = f"jurybox analyze {RUN}"  # the report goes to the run folder's `report`
    assert result.output.rstrip().endswith(f"Next: {command}")
    followed = invoke(*command.split()[1:], "--no-plots")  # the printed command works as is
    assert followed.exit_code == 0, followed.output
    assert (tmp_path / RUN / "report" / "report.html").is_file()


def test_an_unreadable_manifest_is_said_and_the_judgments_still_analysed(
    pairwise_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(pairwise_run / "examples", copy / "examples")
    monkeypatch.chdir(copy)
    (copy / RUN / "manifest.json").write_text("{not json", encoding="utf-8")
    result = invoke("analyze", RUN, "--out", "r", "--no-plots")
    assert result.exit_code == 0, result.output
    assert "manifest.json" in result.output and "pass --dataset / --human" in result.output
    given = invoke(
        "analyze",
        RUN,
        "--out",
        "r2",
        "--no-plots",
        "--dataset",
        "examples/items.jsonl",
        "--human",
        "examples/human_labels.jsonl",
    )
    assert given.exit_code == 0, given.output
    assert "(given)" in given.output


def test_labels_are_read_as_the_runs_config_maps_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    assert invoke("run", "examples/csv_pairwise.yaml").exit_code == 0
    run = "examples/results/csv_pairwise"
    result = invoke("analyze", run, "--no-plots")  # the manifest's `labels:` maps A / B
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / run / "report/analysis_report.json").read_text("utf-8"))
    assert report["summary"]["human_labels"]["preferences"] == 8
    assert report["summary"]["input_screen"]["labels_bad_values"] == 0


def test_labels_naming_no_arm_suggest_the_value_map(
    pairwise_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(pairwise_run)
    ab = tmp_path / "ab.jsonl"
    ab.write_text(
        '{"query_id": "p01", "preferred_arm": "A"}\n{"query_id": "p02", "preferred_arm": "B"}\n',
        encoding="utf-8",
    )
    result = invoke("analyze", RUN, "--out", str(tmp_path / "r1"), "--human", str(ab))
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "excluded 2 with a value that names no arm" in said
    assert "map them in the run config and pass it with --config" in said
    assert "`labels: {values: {A: ARM, B: ARM}}` (ARM: " in said and " or tie)" in said
    config = tmp_path / "labels.yaml"
    config.write_text(
        "judges:\n  j: {provider: fake}\npaths: {dataset: d.jsonl}\n"
        "labels: {values: {A: control, B: treatment}}\n",
        encoding="utf-8",
    )
    mapped = invoke(
        "analyze", RUN, "--out", str(tmp_path / "r2"), "--human", str(ab), "--config", str(config)
    )
    assert mapped.exit_code == 0 and "names no arm" not in mapped.output
    for out, excluded in (("r1", 2), ("r2", 0)):
        report = json.loads((tmp_path / out / "analysis_report.json").read_text("utf-8"))
        assert report["summary"]["input_screen"]["labels_bad_values"] == excluded
