"""``jurybox view DIR``: one page over every run and comparison under a folder, a leaderboard
where runs compared models with one same model on the same items; in headless Chromium, every
link resolves, nothing is fetched and nothing errs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import yaml
from click.testing import CliRunner, Result

from jurybox.analysis.model import Report
from jurybox.app.view import survey
from jurybox.cli import main

from .cdp import Chromium

N_ITEMS = 40


def _invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _items(path: Path, model: str, treatment_longer: int) -> Path:
    """40 items whose human label is always the longer answer; the treatment (``model``) is
    the longer one on the first ``treatment_longer``; the control is ``base-model``."""
    rows = []
    for index in range(N_ITEMS):
        short, long = f"Answer {index}.", f"Answer {index}, with the reasons that support it."
        treatment_wins = index < treatment_longer
        rows.append(
            {
                "id": f"q{index:02d}",
                "question": f"Question {index}?",
                "responses": {
                    "control": short if treatment_wins else long,
                    "treatment": long if treatment_wins else short,
                },
                "authors": {"control": "base-model", "treatment": model},
                "human": {"preferred_arm": "treatment" if treatment_wins else "control"},
            }
        )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _config(path: Path, dataset: str, output: str, **pipeline: Any) -> Path:
    config = {
        "judges": {
            "long_pick": {"provider": "fake", "fake": {"behavior": "longer", **pipeline}},
            "first_pick": {"provider": "fake", "fake": {"behavior": "first"}},
        },
        "task": {"mode": "pairwise", "arms": ["control", "treatment"]},
        "pipeline": {"test_retest_count": 0, "concurrency": 1},
        "paths": {"dataset": dataset, "output_dir": output},
    }
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def _interrupted(root: Path) -> None:
    """A run stopped by Ctrl-C (SIGINT) a few judgments in: its manifest says interrupted."""
    config = _config(root / "slow.yaml", "data/items_a.jsonl", "runs/stopped", latency_ms=150)
    process = subprocess.Popen(
        [sys.executable, "-m", "jurybox", "run", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    judgments = root / "runs/stopped/judgments.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (
        not judgments.exists() or judgments.read_bytes().count(b"\n") < 3
    ):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=30) == 130, process.communicate()[1]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two analysed runs (base-model vs model-a, vs model-b, same item ids), one not analysed,
    one interrupted, and a comparison of the first two; then `jurybox view`."""
    root = tmp_path_factory.mktemp("tree")
    (root / "data").mkdir()
    _items(root / "data/items_a.jsonl", "model-a", treatment_longer=30)
    _items(root / "data/items_b.jsonl", "model-b", treatment_longer=12)
    for name, data in (("model-a", "items_a"), ("model-b", "items_b"), ("fresh", "items_a")):
        _config(root / f"{name}.yaml", f"data/{data}.jsonl", f"runs/{name}")
        assert _invoke("run", root / f"{name}.yaml").exit_code == 0
    for name in ("model-a", "model-b"):
        analysed = _invoke("analyze", root / "runs" / name, "--no-plots")
        assert analysed.exit_code == 0, analysed.output
    _interrupted(root)
    compared = _invoke(
        "compare", root / "runs/model-a", root / "runs/model-b", "--out", root / "cmp/a-vs-b"
    )
    assert compared.exit_code == 0, compared.output
    viewed = _invoke("view", root)
    assert viewed.exit_code == 0, viewed.output
    assert "4 runs (2 analysed), 1 comparisons, 1 leaderboards" in viewed.output
    return root


def test_every_run_and_comparison_is_listed_with_what_to_do_next(tree: Path) -> None:
    page = (tree / "index.html").read_text(encoding="utf-8")
    for name in ("runs/model-a", "runs/model-b", "runs/fresh", "runs/stopped", "cmp/a-vs-b"):
        assert f">{name}<" in page, name
    assert page.count('href="runs/model-a/report/report.html"') == 2  # its row, its board row
    assert 'href="cmp/a-vs-b/compare.html"' in page
    # not analysed: said, with the command that analyses it
    assert "not analysed" in page and f"jurybox analyze {tree / 'runs/fresh'}" in page
    # interrupted: said, with planned vs done and the command that resumes it
    manifest = json.loads((tree / "runs/stopped/manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "interrupted"
    done = f"interrupted — {manifest['records']} of {manifest['units_planned']} judgments"
    assert done in page and f"--resume {tree / 'runs/stopped'}" in page
    # the result as the trusted judges give it
    report = Report.model_validate_json(
        (tree / "runs/model-a/report/analysis_report.json").read_text(encoding="utf-8")
    )
    assert report.verdict.judges["long_pick"].level == "trusted"
    assert report.verdict.judges["first_pick"].level == "not_trusted"
    assert "long_pick: treatment over control win rate 0.750 [" in page


def test_the_leaderboard_shows_trusted_judges_win_rates_over_the_shared_model(
    tree: Path,
) -> None:
    (board,) = survey(tree).leaderboards
    assert board.baseline == "base-model" and board.n_items == N_ITEMS
    assert [row.model for row in board.rows] == ["model-a", "model-b"]  # best first
    assert board.ordered_by == "long_pick"
    first, second = board.rows
    assert first.win_rates["long_pick"].estimate == pytest.approx(30 / 40)
    assert second.win_rates["long_pick"].estimate == pytest.approx(12 / 40)
    assert "first_pick" not in first.win_rates  # not trusted: its level only
    assert first.levels["first_pick"] == "not_trusted"
    page = (tree / "index.html").read_text(encoding="utf-8")
    assert "Against base-model, on the same 40 items" in page
    assert "not trusted: not shown" in page
    assert "rows whose intervals overlap are not ranked" in page


def test_a_page_it_did_not_write_is_never_replaced(tree: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "index.html"
    foreign.write_text("<html>mine</html>", encoding="utf-8")
    refused = CliRunner().invoke(main, ["view", str(tree), "--out", str(foreign)])
    assert refused.exit_code == 2 and "not a page jurybox view wrote" in refused.output
    assert foreign.read_text(encoding="utf-8") == "<html>mine</html>"
    missing = CliRunner().invoke(main, ["view", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no such folder" in missing.output


LINKS = """JSON.stringify(Array.from(document.querySelectorAll("a[href]")).map(a => a.href))"""
SORT = """(() => {
  const table = document.getElementById("board-1");
  const models = () => Array.from(table.tBodies[0].rows).map(r => r.cells[0].textContent.trim());
  const before = models();
  table.tHead.rows[0].cells[0].querySelector("button").click();
  const ascending = models();
  table.tHead.rows[0].cells[0].querySelector("button").click();
  return JSON.stringify({before, ascending, descending: models()});
})()"""


def _check_page(browser: Chromium, page: Path) -> list[Path]:
    """Open ``page``: no error, nothing fetched but the page; the files its links name."""
    url = page.resolve().as_uri()
    session, seen = browser.open_page(url, width=1366, height=768)
    assert seen.errors() == [], seen.errors()
    assert {u.split("#")[0] for u in seen.requests} <= {url}, seen.requests
    hrefs = json.loads(browser.evaluate(session, LINKS))
    assert hrefs and all(urlparse(h).scheme == "file" for h in hrefs), hrefs
    return [Path(unquote(urlparse(h).path)) for h in hrefs]


@pytest.mark.browser
def test_in_chromium_every_link_resolves_and_nothing_is_fetched(
    tree: Path, browser: Chromium, tmp_path: Path
) -> None:
    targets = _check_page(browser, tree / "index.html")
    assert len(set(targets)) == 3  # two reports and the comparison
    for target in set(targets):
        assert target.is_file(), target
        session, seen = browser.open_page(target.as_uri(), width=1366, height=768)
        assert seen.errors() == [], (target, seen.errors())
    session, _ = browser.open_page((tree / "index.html").resolve().as_uri(), width=1366, height=768)
    sorted_rows = json.loads(browser.evaluate(session, SORT))
    assert sorted_rows["before"] == ["model-a", "model-b"]
    assert sorted_rows["ascending"] == ["model-a", "model-b"]
    assert sorted_rows["descending"] == ["model-b", "model-a"]
    assert browser.collect(session).errors() == []
    # written elsewhere, its links are relative to where it is
    elsewhere = tmp_path / "pages" / "overview.html"
    elsewhere.parent.mkdir()
    assert _invoke("view", tree, "--out", elsewhere).exit_code == 0
    assert {p.resolve() for p in _check_page(browser, elsewhere)} == {p.resolve() for p in targets}


def test_a_file_that_cannot_be_read_is_said_not_fatal(tmp_path: Path) -> None:
    broken = tmp_path / "broken-run"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json", encoding="utf-8")
    other = tmp_path / "someone-elses"  # a manifest.json jurybox did not write: not a run
    other.mkdir()
    (other / "manifest.json").write_text('{"name": "a web app"}', encoding="utf-8")
    stray = tmp_path / "old-report"
    stray.mkdir()
    (stray / "analysis_report.json").write_text('{"schema_version": 1}', encoding="utf-8")
    result = _invoke("view", tmp_path)
    assert result.exit_code == 0, result.output
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert page.count("broken-run/manifest.json:1: not valid JSON") == 1
    assert "old-report/analysis_report.json: not readable as an analysis report" in page
    assert "someone-elses" not in page
