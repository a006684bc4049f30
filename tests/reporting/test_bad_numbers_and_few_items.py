"""Issue 33 in the written report: scores that are no number are counted and named (never a
traceback, never "Excluded 0"), and a figure resting on fewer than 30 items says so beside it,
in the terminal, the Markdown tables and the HTML report."""

from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner, Result

from jurybox.cli import main

from .synthetic import rubric_world


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _judgments_with(tmp_path: Path, bad: dict[int, float]) -> tuple[Path, Path, list[str]]:
    """The rubric world's records with the first score of the given records replaced, and its
    dataset; returns the ids of the items whose scores were spoiled."""
    world = rubric_world()
    rows = [record.to_dict() for record in world.records]
    spoiled = []
    for index, value in bad.items():
        scores = rows[index]["scores"]
        arm = next(iter(scores))
        scores[arm][next(iter(scores[arm]))] = value
        spoiled.append(str(rows[index]["query_id"]))
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    dataset = tmp_path / "items.jsonl"
    items = [
        {"id": i.id, "question": i.question, "responses": dict(i.responses)} for i in world.items
    ]
    dataset.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return judgments, dataset, spoiled


def test_nan_scores_are_excluded_counted_and_named(tmp_path: Path) -> None:
    judgments, dataset, spoiled = _judgments_with(tmp_path, {0: math.nan, 5: math.nan})
    out = tmp_path / "report"
    result = _invoke("analyze", str(judgments), "--dataset", str(dataset), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert "records, and 2 score(s) not finite (NaN or infinite)" in " ".join(result.output.split())
    for item in spoiled:
        assert item in result.output
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    found = report["summary"]["non_finite_scores"]
    assert found["total"] == 2 and set(spoiled) <= set(found["items"])
    assert all(example.endswith("= nan") for example in found["examples"])
    for name in ("summary_tables.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "and 2 score(s) not finite (NaN or infinite) on 2 item(s)" in text, name
        assert spoiled[0] in text


def test_an_infinite_score_is_refused_naming_the_line(tmp_path: Path) -> None:
    """The judgments reader refuses ``Infinity`` (no JSON number): exit 2 naming the file and
    line, no traceback, nothing written."""
    judgments, dataset, _ = _judgments_with(tmp_path, {3: math.inf})
    out = tmp_path / "report"
    result = _invoke("analyze", str(judgments), "--dataset", str(dataset), "--out", str(out))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"{judgments}:4: Infinity is not a JSON number" in result.output
    assert not out.exists()


def test_figures_on_fewer_than_thirty_items_say_so(tmp_path: Path) -> None:
    """The rubric world has fewer than 30 items: its figures carry " (<30 items)" beside them
    in all three renderings; a figure on more items does not."""
    judgments, dataset, _ = _judgments_with(tmp_path, {})
    out = tmp_path / "report"
    result = _invoke("analyze", str(judgments), "--dataset", str(dataset), "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    assert report["summary"]["n_items"] < 30
    assert "(<30 items)" in result.output
    markdown = (out / "summary_tables.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert markdown.count("(<30 items)") >= 5
    assert html.count("(&lt;30 items)") >= 5
    rows = [row for row in markdown.splitlines() if row.startswith("| all items |")]
    assert rows and all("(<30 items)" in row for row in rows)  # Cohen's d_z on 24 items
    cronbach = [row for row in markdown.splitlines() if row.startswith("| pooled |")]
    assert cronbach and "(<30 items)" not in cronbach[0]  # alpha over 96 scored responses
