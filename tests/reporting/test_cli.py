"""``jurybox import`` and ``jurybox analyze`` end to end through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from jurybox.cli import main
from shared_paths import require_shared

from .synthetic import ARMS, rubric_world, write_jsonl

FILES = ("analysis_report.json", "summary_tables.md", "report.html")


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _import_and_analyze(source: Path, tmp_path: Path) -> tuple[dict, str, str, Result]:
    judgments = tmp_path / "judgments.jsonl"
    imported = _invoke("import", "llmbar", str(source), "--out", str(judgments))
    assert imported.exit_code == 0, imported.output
    assert f"to {judgments}" in imported.output
    out = tmp_path / "report"
    analyzed = _invoke("analyze", str(judgments), "--out", str(out))
    assert analyzed.exit_code == 0, analyzed.output
    for name in FILES:
        assert (out / name).is_file(), name
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    markdown = (out / "summary_tables.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    return report, markdown, html, analyzed


@pytest.mark.shared_data
def test_llmbar_mt_bench_gpt4_known_figures(tmp_path: Path) -> None:
    source = require_shared("data/llmbar/MT-Bench")
    report, markdown, html, result = _import_and_analyze(source, tmp_path)
    gpt4 = report["accuracy_vs_gold"]["judges"]["GPT-4"]["orders"]
    first, swapped = gpt4["output_1_first"], gpt4["output_2_first"]
    assert (first["correct"], first["n"], first["value"]) == (159, 200, pytest.approx(0.795))
    assert (swapped["correct"], swapped["n"], swapped["value"]) == (165, 200, pytest.approx(0.825))
    swap = report["bias"]["position"]["judges"]["GPT-4"]["swap_consistency"]
    assert (swap["consistent"], swap["n"], swap["value"]) == (174, 200, pytest.approx(0.87))
    accuracy_row = "| GPT-4 | 0.795 (159/200) | 0.825 (165/200) |"
    assert accuracy_row in markdown
    assert "| GPT-4 | 0.870 (174/200) |" in markdown
    for figure in ("0.795 (159/200)", "0.825 (165/200)", "0.870 (174/200)"):
        assert figure in html, figure
    assert "0.870 (174/200)" in result.output  # the terminal summary's headline table


@pytest.mark.shared_data
def test_llmbar_faireval_chatgpt_swap_consistency(tmp_path: Path) -> None:
    source = require_shared("data/llmbar/FairEval")
    report, markdown, html, _ = _import_and_analyze(source, tmp_path)
    swap = report["bias"]["position"]["judges"]["ChatGPT"]["swap_consistency"]
    assert (swap["consistent"], swap["n"]) == (12, 66)
    assert "| ChatGPT | 0.182 (12/66) |" in markdown
    assert "0.182 (12/66)" in html


def _dataset_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    world = rubric_world(n_items=12)
    judgments = tmp_path / "run" / "judgments.jsonl"
    judgments.parent.mkdir()
    write_jsonl(world.records, judgments)
    dataset = tmp_path / "items.jsonl"
    rows = [
        {
            "id": i.id,
            "question": i.question,
            "responses": dict(i.responses),
            "metadata": dict(i.metadata),
            "authors": dict(i.authors),
        }
        for i in world.items
    ]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    human = tmp_path / "labels.jsonl"
    labels = [
        {"query_id": qid, "scores": {arm: {"total": label["overall"][arm]} for arm in ARMS}}
        for qid, label in world.human.items()
    ]
    human.write_text("".join(json.dumps(r) + "\n" for r in labels), encoding="utf-8")
    return judgments, dataset, human


def test_analyze_with_dataset_and_labels_on_a_run_folder(tmp_path: Path) -> None:
    judgments, dataset, human = _dataset_files(tmp_path)
    out = tmp_path / "out"
    result = _invoke(
        "analyze",
        str(judgments.parent),
        "--dataset",
        str(dataset),
        "--human",
        str(human),
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    assert report["human_calibration"]["scores"]["status"] == "computed"
    assert report["bias"]["verbosity"]["status"] == "computed"  # lengths came from --dataset
    assert "Can these judges be trusted?" in result.output
    # every plot but position bias (rubric mode has no order to prefer), as PNG and SVG
    assert len(list((out / "plots").glob("*.png"))) == 6
    assert len(list((out / "plots").glob("*.svg"))) == 6


def test_analyze_without_plots(tmp_path: Path) -> None:
    judgments, _, _ = _dataset_files(tmp_path)
    out = tmp_path / "out"
    result = _invoke("analyze", str(judgments), "--out", str(out), "--no-plots")
    assert result.exit_code == 0, result.output
    assert not (out / "plots").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "judgments file not found"),
        ("", "no judgment records"),
        ('{"not": "a record"}\n', "judgments.jsonl:1"),
    ],
)
def test_analyze_bad_input_exits_2(tmp_path: Path, content: str | None, message: str) -> None:
    judgments = tmp_path / "judgments.jsonl"
    if content is not None:
        judgments.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(main, ["analyze", str(judgments), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_analyze_bad_labels_exit_2(tmp_path: Path) -> None:
    judgments, _, _ = _dataset_files(tmp_path)
    human = tmp_path / "bad.jsonl"
    human.write_text('{"query_id": "q00", "verdict": "Maybe"}\n', encoding="utf-8")
    result = CliRunner().invoke(
        main, ["analyze", str(judgments), "--human", str(human), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2, result.output
    assert "bad.jsonl" in result.output


def test_import_bad_mapping_and_missing_source_exit_2(tmp_path: Path) -> None:
    out = str(tmp_path / "j.jsonl")
    result = CliRunner().invoke(
        main, ["import", "generic", str(tmp_path), "--out", out, "--map", "query_id"]
    )
    assert result.exit_code == 2
    assert "--map expects KEY=COLUMN" in result.output
    result = CliRunner().invoke(main, ["import", "llmbar", str(tmp_path / "nope"), "--out", out])
    assert result.exit_code == 2
    assert "not found" in result.output


def test_import_generic_with_mapping(tmp_path: Path) -> None:
    source = tmp_path / "verdicts.csv"
    source.write_text("qid,who,pick\nq1,j1,A\nq2,j1,B\nq3,j1,tie\n", encoding="utf-8")
    out = tmp_path / "judgments.jsonl"
    result = _invoke(
        "import",
        "generic",
        str(source),
        "--out",
        str(out),
        "--map",
        "query_id=qid",
        "--map",
        "judge=who",
        "--map",
        "preferred=pick",
    )
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"wrote 3 records to {out}"
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3


def test_analyze_writes_into_the_run_folder_by_default(tmp_path: Path) -> None:
    judgments, _, _ = _dataset_files(tmp_path)
    result = _invoke("analyze", str(judgments.parent), "--no-plots")
    assert result.exit_code == 0, result.output
    assert (judgments.parent / "report" / "analysis_report.json").is_file()
    beside = _invoke("analyze", str(judgments), "--no-plots")  # the file: `report` beside it
    assert beside.exit_code == 0 and (judgments.parent / "report" / "report.html").is_file()


def _thresholds(run: str, out: Path, *flags: str) -> dict[str, float]:
    """The thresholds a report applied, analysed with ``flags``."""
    result = _invoke("analyze", run, "--out", str(out), "--no-plots", *flags)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    thresholds: dict[str, float] = report["options"]["thresholds"]
    return thresholds


def test_threshold_flags_are_named_as_their_config_keys(tmp_path: Path) -> None:
    judgments, _, _ = _dataset_files(tmp_path)
    run = str(judgments.parent)
    new = _thresholds(
        run, tmp_path / "a", "--warn-failure-rate", "0.01", "--warn-swap-consistency", "0.9"
    )
    assert (new["warn_failure_rate"], new["warn_swap_consistency"]) == (0.01, 0.9)
    # the old names still work (scripts written for them), hidden from --help
    old = _thresholds(
        run, tmp_path / "b", "--max-failure-rate", "0.02", "--min-swap-consistency", "0.85"
    )
    assert (old["warn_failure_rate"], old["warn_swap_consistency"]) == (0.02, 0.85)
    both = CliRunner().invoke(
        main, ["analyze", run, "--warn-failure-rate", "0.1", "--max-failure-rate", "0.2"]
    )
    assert both.exit_code == 2 and "old name of --warn-failure-rate" in both.output
    shown = _invoke("analyze", "--help").output
    for key in ("min_accuracy", "fail_accuracy", "min_kappa", "warn_failure_rate"):
        assert f"--{key.replace('_', '-')}" in shown and f"`{key}`" in shown
    assert "--warn-swap-consistency" in shown
    assert "--max-failure-rate X" not in shown and "--min-swap-consistency X" not in shown
