"""The first screen tells the whole truth (issue 34, items 1 and 2): what was compared, the
result or "no conclusion", each judge's defining finding first with the limit that applied,
and what the data lacks (an interrupted run, with planned vs done and the resume command).

In headless Chromium on the README walkthrough's run and on a run stopped at a quarter of its
plan; on judges of known quality (always right, always first, coin flip, never answers) from
the shared LLMBar data.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from tests.analysis.known_judges import judge_records, load_items, panel_records

from jurybox.analysis import analyze_records
from jurybox.analysis.model import Report
from jurybox.analysis.model.verdict import Check
from jurybox.analysis.verdict import worse_subsets
from jurybox.cli import main
from jurybox.records import Status
from jurybox.reporting.render.terminal import judges_grid, verdict_lines
from jurybox.reporting.sections import first_screen
from jurybox.reporting.sections.first_screen import judge_findings
from jurybox.reporting.sections.verdict import judge_verdict_table
from shared_paths import PROJECT_ROOT, require_shared

from .cdp import Chromium
from .synthetic import pairwise_world, rubric_world
from .test_view import _config, _items, interrupt_run

# The first screen's text, and whether it all sits above the per-judge table.
FIRST_SCREEN = """JSON.stringify({
  text: document.getElementById("verdict").innerText,
  above: document.getElementById("verdict").getBoundingClientRect().bottom
         <= document.getElementById("judge-verdicts").getBoundingClientRect().top,
})"""
ARMS = ("control", "treatment")
WALKTHROUGH = ("jurybox run examples/pairwise.yaml", "jurybox analyze examples/results/pairwise")


def _invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _first_screen(browser: Chromium, html: Path) -> dict[str, object]:
    session, page = browser.open_page(html.resolve().as_uri(), width=1366, height=768)
    assert page.errors() == [], page.errors()
    found: dict[str, object] = json.loads(browser.evaluate(session, FIRST_SCREEN))
    return found


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of the README walkthrough's run (its `run` and `analyze` commands)."""
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert all(command in readme for command in WALKTHROUGH)  # the README's own run
    root = tmp_path_factory.mktemp("walkthrough")
    shutil.copytree(PROJECT_ROOT / "examples", root / "examples")
    for command in WALKTHROUGH:
        _, verb, path = command.split()
        result = _invoke(verb, root / path)
        assert result.exit_code == 0, result.output
    return root / "examples/results/pairwise/report/report.html"


@pytest.mark.browser
def test_the_walkthrough_report_opens_on_what_was_compared_and_the_defining_findings(
    browser: Chromium, walkthrough: Path
) -> None:
    screen = _first_screen(browser, walkthrough)
    assert screen["above"], "the first screen runs into the per-judge table"
    text = str(screen["text"])
    assert "Compared treatment against control on 39 items (20 labelled)" in text
    assert "No trusted judge: no conclusion." in text
    line = next(line for line in text.splitlines() if line.startswith("first_pick"))
    # the always-first judge: the first-shown position, in words, before its accuracy
    assert "picks the first response shown in 100% of 78 decisive verdicts" in line
    assert line.index("first response shown") < line.index("agrees with the labels")
    # each finding names the limit that decided it: swap consistency failed below 0.60, not 0.80
    assert "0% of 39 pairs, failures counted (limit 0.60: not trusted)" in line
    coin = next(line for line in text.splitlines() if line.startswith("coin"))
    assert "(limit 0.80" not in coin and "(limit 0.60: not trusted)" in coin


def _stopped_at_a_quarter(root: Path) -> Path:
    """A run stopped by Ctrl-C once about a quarter of its 160 judgments are written."""
    (root / "data").mkdir()
    _items(root / "data/items.jsonl", "model-a", treatment_longer=30)
    config = _config(root / "slow.yaml", "data/items.jsonl", "runs/stopped")
    slow = yaml.safe_load(config.read_text(encoding="utf-8"))
    for judge in slow["judges"].values():  # every judge slow: the stop comes near a quarter
        judge["fake"]["latency_ms"] = 100
    config.write_text(yaml.safe_dump(slow), encoding="utf-8")
    interrupt_run(config, root / "runs/stopped", after=40)
    return root / "runs/stopped"


@pytest.mark.browser
def test_an_interrupted_run_is_said_so_in_the_terminal_and_on_the_first_screen(
    browser: Chromium, tmp_path: Path
) -> None:
    run = _stopped_at_a_quarter(tmp_path)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "interrupted"
    done, planned = manifest["records"], manifest["units_planned"]
    assert planned == 160 and 40 <= done <= 60, (done, planned)  # stopped at about 25 %
    said = f"Interrupted run: {done} of {planned} planned judgments done"
    result = _invoke("analyze", run, "--no-plots")
    assert result.exit_code == 0, result.output
    assert said in result.output
    assert f"Resume: jurybox run {tmp_path / 'slow.yaml'} --resume {run}" in result.output
    screen = _first_screen(browser, run / "report/report.html")
    assert screen["above"]
    assert said in str(screen["text"])
    assert f"--resume {run}" in str(screen["text"])
    report = json.loads((run / "report/analysis_report.json").read_text(encoding="utf-8"))
    assert report["summary"]["run"]["status"] == "interrupted"


# Each judge of known quality and how its line on the first screen must begin.
KNOWN_FIRST_LINES = {
    "always_right": ("trusted", "agrees with the labels in 100% of "),
    "always_first_shown": ("not_trusted", "picks the first response shown in 100% of "),
    "coin_flip": ("not_trusted", "gives the same verdict in both presentation orders in "),
    "never_answers": ("not_trusted", "never answers: all "),
}


@pytest.mark.shared_data
def test_judges_of_known_quality_each_get_the_right_first_line() -> None:
    items = load_items(require_shared("data/llmbar/MT-Bench"))
    report = analyze_records(panel_records(items), items=items)
    lines = {line.judge: line for line in first_screen(report).judges}
    for judge, (level, start) in KNOWN_FIRST_LINES.items():
        assert lines[judge].level == level, (judge, lines[judge])
        assert lines[judge].finding.startswith(start), (judge, lines[judge].finding)
    right = lines["always_right"].finding
    assert right.endswith("(limit 0.70: passes)"), right
    never = lines["never_answers"].finding
    assert never.endswith("(limit 50%: not trusted)"), never
    assert first_screen(report).result[0].startswith("always_right: ")


# The explorer as a transcript: the list's header cells, each judge's verdicts of the first
# items in their columns, the legend, and the opened item's judgments.
TRANSCRIPT = """JSON.stringify({
  legend: document.querySelector("[data-legend]").textContent,
  heads: Array.from(document.querySelectorAll("#items thead th")).map(th => th.innerText),
  rows: Array.from(document.querySelectorAll("#items tbody tr")).slice(0, 12)
    .map(tr => Array.from(tr.cells).map(td => td.textContent)),
})"""
DETAIL = """JSON.stringify({
  item: document.querySelector("[data-detail]").dataset.detailItem,
  hash: location.hash,
  prev: document.querySelector("[data-item-nav=prev]").disabled,
  next: document.querySelector("[data-item-nav=next]").dataset.target,
  judgments: Array.from(document.querySelectorAll("[data-detail] tr[data-judgment]")).map(tr => ({
    judge: tr.dataset.judgment, order: tr.dataset.order,
    cells: Array.from(tr.cells).slice(0, 9).map(td => td.textContent),
    prompt: (tr.querySelector("[data-prompt] pre") || {}).textContent || "",
    raw: (tr.querySelector("[data-raw] pre") || {}).textContent || ""})),
})"""


def _column(heads: list[str], judge: str, order: str) -> int:
    return next(k for k, head in enumerate(heads) if head.split("\n") == [judge, order])


@pytest.mark.browser
def test_the_explorer_reads_as_a_transcript(browser: Chromium, walkthrough: Path) -> None:
    url = walkthrough.resolve().as_uri()
    session, _ = browser.open_page(url + "#items?sort=question&dir=-1", width=1366, height=768)
    browser.wait_for(session, "document.getElementById('items').dataset.ready === '1'")
    shown = json.loads(browser.evaluate(session, TRANSCRIPT))
    assert all(mark in shown["legend"] for mark in ("⇄", "✗", "!", "presentation order"))
    heads = shown["heads"]
    # fixed, labelled columns: first_pick picks whichever arm was shown first, in every row
    control, treatment = (_column(heads, "first_pick", f"{arm} first") for arm in ARMS)
    retest = _column(heads, "first_pick", "control first (retest)")
    assert control < treatment < retest
    for row in shown["rows"]:
        assert row[control].startswith("control") and row[treatment].startswith("treatment")
    # the sort came from the address, and is kept in it
    questions = [row[1] for row in shown["rows"]]
    assert questions == sorted(questions, key=str.lower, reverse=True)
    assert browser.evaluate(session, "location.hash") == "#items?sort=question&dir=-1"
    first = browser.evaluate(session, "document.querySelector('#items tbody tr').dataset.item")
    browser.evaluate(session, "document.querySelector('#items tbody tr td:nth-child(2)').click()")
    detail = json.loads(browser.evaluate(session, DETAIL))
    assert detail["item"] == first and detail["prev"] is True
    assert detail["hash"] == f"#items?sort=question&dir=-1&item={first}"
    coin = [j for j in detail["judgments"] if j["judge"] == "coin"]
    assert [j["order"] for j in coin][:2] == ["control_first", "treatment_first"]
    for judgment in detail["judgments"]:
        status, parse, tokens, latency, cost = judgment["cells"][4:]
        assert status == "ok" and parse == "native" and cost == "unpriced", judgment
        assert re.fullmatch(r"\d+ in / \d+ out", tokens) and latency.endswith(" ms"), judgment
        assert judgment["prompt"].startswith("--- system ---\nYou are an impartial judge")
        assert '"verdict"' in judgment["raw"]
    browser.evaluate(session, "document.querySelector('[data-item-nav=next]').click()")
    after = json.loads(browser.evaluate(session, DETAIL))
    assert after["item"] == detail["next"] != first
    assert browser.collect(session).errors() == []


def test_pairs_judged_in_one_order_only_are_counted_and_said() -> None:
    world = pairwise_world()
    records = [r for r in world.records if not r.retest]
    judge, item = records[0].judge_name, records[0].query_id
    dropped = next(r for r in records if (r.judge_name, r.query_id) == (judge, item))
    kept = [r for r in world.records if r is not dropped]
    whole = analyze_records(world.records, human=world.human, items=world.items)
    assert whole.summary.one_order is None  # every pair in both orders: nothing said
    report = analyze_records(kept, human=world.human, items=world.items)
    assert report.summary.one_order == {judge: 1}
    said = f"Pairs judged in one presentation order only ({judge} 1)"
    assert any(line.startswith(said) for line in first_screen(report).gaps)


def test_failed_calls_and_a_small_sample_are_said_before_any_figure() -> None:
    world = rubric_world()  # 24 items; two unparsed answers and one provider error
    report = analyze_records(world.records, human=world.human, items=world.items)
    gaps = first_screen(report).gaps
    n_records = report.summary.n_records
    # not "left out of every figure": the headline accuracy counts them as wrong
    assert gaps[0] == (
        f"3 of {n_records} judgments failed (unparsed 2, provider_error 1): counted as wrong in "
        "accuracy and swap consistency where these say 'failures counted', left out of every "
        "other figure; --resume redoes the failed calls."
    )
    assert "Only 24 items (under 30): every interval is wide." in gaps
    assert first_screen(report).compared.startswith("Compared treatment against control on 24")


@pytest.mark.shared_data
def test_a_moderate_pull_beside_a_shown_accuracy_is_reported_after_it_the_level_kept() -> None:
    items = load_items(require_shared("data/llmbar/MT-Bench"))
    report = analyze_records(panel_records(items), items=items)
    right = next(line for line in first_screen(report).judges if line.judge == "always_right")
    entry = report.verdict.judges["always_right"]
    pull = Check(
        check="length",
        judge="always_right",
        status="warn",
        value=0.2,
        threshold=0.1,
        applied=0.1,
        message="prefers the longer response by 0.20 (beyond the labels; Holm p 0.001)",
    )
    warned = entry.model_copy(update={"checks": [*entry.checks, pull]})
    found = judge_findings(report, "always_right", warned)
    assert found[0] == right.finding
    assert found[1].endswith("over its 200 labelled items (limit 0.10: reported, the level kept)")


def _walkthrough_report(root: Path) -> Report:
    """The README walkthrough's run analysed: 39 items, 20 of them labelled."""
    shutil.copytree(PROJECT_ROOT / "examples", root / "examples")
    for command in WALKTHROUGH:
        _, verb, path = command.split()
        assert (
            _invoke(verb, root / path, *(("--no-plots",) if verb == "analyze" else ())).exit_code
            == 0
        )
    report = root / "examples/results/pairwise/report/analysis_report.json"
    return Report.model_validate_json(report.read_text(encoding="utf-8"))


def test_figures_on_the_labelled_items_count_those_and_say_when_they_are_few(
    tmp_path: Path,
) -> None:
    report = _walkthrough_report(tmp_path)
    assert report.summary.n_items == 39
    lines = {line.judge: line for line in first_screen(report).judges}
    # the length pull beyond the labels rests on the 20 labelled items, not on all 39
    longer = lines["long_pick"].finding
    assert (
        longer.startswith("prefers the longer response") and "over its 20 labelled items" in longer
    )
    assert "over 39 items" not in longer
    # every accuracy on the 20 labelled items says so beside it, on the screen and in the table
    accuracy = next(found for found in lines["coin"].also if found.startswith("agrees"))
    assert "(95% CI 0.24–0.58) (<30 items), failures counted" in accuracy
    for row in judge_verdict_table(report).rows:
        assert str(row[3]).endswith("(<30 items)") and str(row[4]).endswith("(<30 items)"), row


def test_a_run_killed_without_a_word_counts_the_judgments_it_wrote(tmp_path: Path) -> None:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    run = tmp_path / "examples/results/pairwise"
    assert _invoke("run", tmp_path / "examples/pairwise.yaml").exit_code == 0
    # what `kill -9` at a quarter leaves: 66 records written, the manifest as at the start
    judgments = run / "judgments.jsonl"
    lines = judgments.read_text(encoding="utf-8").splitlines(keepends=True)
    judgments.write_text("".join(lines[:66]), encoding="utf-8")
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(status="running", records=0)
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = _invoke("analyze", run, "--no-plots")
    assert result.exit_code == 0, result.output
    assert "66 of 264 planned judgments done (25%)" in result.output
    assert _invoke("view", tmp_path / "examples/results").exit_code == 0
    page = (tmp_path / "examples/results/index.html").read_text(encoding="utf-8")
    assert "running — 66 of 264 judgments" in page


@pytest.mark.shared_data
def test_benchmark_arms_give_the_reason_once_and_untested_checks_no_count() -> None:
    items = load_items(require_shared("data/llmbar/MT-Bench"))
    numbered = [
        replace(item, metadata={**item.metadata, "arms_are_treatments": False}) for item in items
    ]
    report = analyze_records(panel_records(numbered), items=numbered)
    assert report.effects.reason is not None
    # one line with why, not "no treatment effect to state (not two arms)" per trusted judge
    assert first_screen(report).result == (
        report.effects.reason[:1].upper() + report.effects.reason[1:] + ".",
    )
    assert "benchmark's own numbering" in first_screen(report).result[0]
    alone = analyze_records(panel_records(items)[-2 * len(items) :], items=items)
    never = next(iter(first_screen(alone).judges))
    assert never.judge == "never_answers"
    assert never.also == ("accuracy untested: no accuracy measured",), never.also


@pytest.mark.shared_data
def test_a_judge_worse_on_a_subset_alone_says_so_on_the_first_screen() -> None:
    items = load_items(require_shared("data/llmbar/MT-Bench"))
    split = [
        replace(item, metadata={**item.metadata, "subset": "coin" if k % 5 == 0 else "right"})
        for k, item in enumerate(items)
    ]
    # always right on four items of five, a coin flip on the fifth: trusted pooled (accuracy
    # about 0.9), not trusted on the coin's subset alone
    policy = {item.id: item.metadata["subset"] for item in split}
    records = [
        replace(record, judge_name="mixed", key=record.key.replace(judge, "mixed"))
        for judge, subset in (("always_right", "right"), ("coin_flip", "coin"))
        for record in judge_records(judge, split)
        if policy[record.query_id] == subset
    ]
    report = analyze_records(records, items=split)
    assert report.verdict.judges["mixed"].level == "trusted"
    worse = worse_subsets(report.verdict, "mixed")
    assert [name for name, _ in worse] == ["coin"], report.verdict.subsets
    line = next(iter(first_screen(report).judges))
    said = f"not trusted on the subset coin alone ({worse[0][1].n_items} items): "
    assert any(found.startswith(said) for found in line.also), line
    # the same words in the terminal, and in the per-judge table's notes as before
    assert said in " ".join(verdict_lines(report))


def test_the_headline_accuracy_says_it_counts_parsed_verdicts_only() -> None:
    world = pairwise_world()
    first = world.records[0]
    failed = replace(
        first,
        status=Status.PROVIDER_ERROR,
        parse_success=False,
        preference=None,
        preferred_arm=None,
        error="timeout",
    )
    records = [failed, *world.records[1:]]
    report = analyze_records(records, human=world.human, items=world.items)
    grid = judges_grid(report)
    row = next(row for row in grid.rows if row[0] == first.judge_name)
    accuracy = row[grid.headers.index("accuracy")]
    parsed = sum(r.judge_name == first.judge_name and not r.retest for r in records) - 1
    assert f"/{parsed})" in accuracy, accuracy  # over the parsed verdicts, not every call
    # ... while the trust table beside it counts the failure as wrong: the caption says which
    assert "accuracy: vs gold, pooled over orders, over parsed verdicts" in grid.caption


def test_labelled_items_are_items_not_labels(tmp_path: Path) -> None:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    said = {}
    for name in ("ranking", "criterion"):
        assert _invoke("run", tmp_path / f"examples/{name}.yaml").exit_code == 0
        result = _invoke("analyze", tmp_path / f"examples/results/{name}", "--no-plots")
        assert result.exit_code == 0, result.output
        said[name] = result.output
    # the council's humans scored 4 responses of 5 items: 20 score labels, 5 labelled items
    assert "on 12 items (5 labelled)" in said["ranking"]
    assert "Only 5 labelled items (under 30)" in said["ranking"]
    assert "κ vs humans" in said["ranking"] and "over its 5 labelled items" in said["ranking"]
    # Pass/Fail labels on every one of the 60 items (they read "none labelled")
    assert "on 60 items (60 labelled)" in said["criterion"]
