"""The winner's one pass over the frozen test split, its trust verdict, and the report.

Before the pass the split's ledger is read again (another optimize may have judged this test
split meanwhile) and a ``test`` line is appended naming the winner, so that every later optimize
on the split refuses to judge it again; a killed pass resumes its own run folder (no recorded
judgment is asked again). The pass is analysed as ``jurybox analyze`` analyses a run, with the
base config's trust thresholds, into ``OUT/test/report``; its level is the report's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from jurybox.app.analyze import analyze_to_dir
from jurybox.app.optimize_session import Session, judge_run, split_gold
from jurybox.errors import ConfigError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.judgments import read_records
from jurybox.optimize.candidates import Candidate
from jurybox.optimize.prepare import check_test_allowed, write_run_config
from jurybox.optimize.report import markdown, winner_config
from jurybox.optimize.scoring import item_scores
from jurybox.optimize.search import INTERVAL_METHOD, SearchResult, item_interval
from jurybox.optimize.split import append_ledger, passes_on_test
from jurybox.optimize.state import Layout
from jurybox.records import JudgeRecord
from jurybox.versions import jurybox_version

REPORT_JSON = "optimize_report.json"
REPORT_MD = "optimize_report.md"
WINNER_CONFIG = "winner.yaml"


def finish(session: Session, result: SearchResult) -> dict[str, Any]:
    """Judge the winner on test (once), analyse it, write the report and ``winner.yaml``."""
    winner = session.candidates[result.choice.winner]
    if session.state.get("stage") == "searching":
        session.save(stage="testing", winner=winner.id)
    elif session.state.get("winner") != winner.id:
        raise ConfigError(
            f"the search now picks {winner.id}, but {session.state.get('winner')} was picked "
            "before the test pass began: the dev runs changed since (edited by hand?)",
            path=str(session.layout.state),
        )
    test = _test_pass(session, winner)
    report = _report(session, result, test)
    _write(session, report, winner)
    session.save(stage="done")
    session.options.echo(markdown(report).split("\n\nSplit ")[0])
    return report


def _ledger_root(session: Session) -> Path:
    return session.opt.split_root


def _test_pass(session: Session, winner: Candidate) -> dict[str, Any]:
    split, layout = session.split, session.layout
    assert split is not None
    started = check_test_allowed(session.opt, split, layout)
    if not started:
        append_ledger(_ledger_root(session), _use(session, winner, "started"))
    session.options.echo(f"test pass: {winner.id} {winner.name} on the test split, once")
    config = write_run_config(session.opt, layout, winner, split, test=True)
    records = judge_run(session, config, layout.test_run, None)
    ids = [item.id for item in split.items("test")]
    scores = item_scores(
        records, split_gold(split, "test", session.mode), ids, mode=session.mode,
        judge=session.opt.judge,
    )  # fmt: skip
    interval = item_interval(scores, session.opt.config.search.confidence)
    trust = _trust(session)
    outcome = {
        "score": interval.estimate,
        "ci_low": interval.ci_low,
        "ci_high": interval.ci_high,
        "items": len(ids),
        "n_items": len(ids),
        "method": INTERVAL_METHOD,
        "level": trust["level"],
    }
    done = [
        u for u in passes_on_test(_ledger_root(session), split.seed) if u.get("status") == "done"
    ]
    if not any(u.get("output_dir") == str(layout.root) for u in done):
        append_ledger(_ledger_root(session), {**_use(session, winner, "done"), "result": outcome})
    return {"outcome": outcome, "trust": trust, "spent": _spent(records)}


def _use(session: Session, winner: Candidate, status: str) -> dict[str, Any]:
    assert session.split is not None
    return {
        "event": "test",
        "status": status,
        "seed": session.split.seed,
        "output_dir": str(session.layout.root),
        "candidate": winner.id,
        "candidate_name": winner.name,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _trust(session: Session) -> dict[str, Any]:
    """The test run's trust verdict for the judge, as ``jurybox analyze`` gives it."""
    layout = session.layout
    analyze_to_dir(
        layout.test_run,
        human=None,
        dataset=None,
        out_dir=layout.test_report,
        console=Console(stderr=True, quiet=True),
        plots=False,
        thresholds=session.opt.base.trust,
    )
    report = json.loads((layout.test_report / "analysis_report.json").read_text("utf-8"))
    verdict = report.get("verdict", {}).get("judges", {}).get(session.opt.judge, {})
    return {
        "level": verdict.get("level"),
        "reason": verdict.get("reason"),
        "accuracy": verdict.get("accuracy"),
    }


def _spent(records: Iterable[JudgeRecord]) -> dict[str, Any]:
    calls, usd, priced = 0, 0.0, False
    for record in records:
        if record.cache_hit:
            continue
        calls += record.attempts
        if record.cost_usd is not None:
            usd, priced = usd + record.cost_usd, True
    return {"calls": calls, "usd": usd if priced else None}


def _candidate_entry(candidate: Candidate, index: int, result: SearchResult) -> dict[str, Any]:
    mine = [s for s in result.scored if s.candidate == index]
    rungs = [
        {
            "rung": s.rung,
            "items": s.items,
            "score": s.score,
            "ci_low": s.interval.ci_low,
            "ci_high": s.interval.ci_high,
        }
        for s in mine
    ]
    return {
        "id": candidate.id,
        "name": candidate.name,
        "examples": len(candidate.examples),
        "own_chars": candidate.own_chars,
        "rubric": candidate.rubric,
        "rungs": rungs,
        "dev": rungs[-1],
        "items_seen": rungs[-1]["items"],
        "reached_last_rung": mine[-1].rung == result.plan.rungs[-1].index,
        "p_vs_leader": result.choice.p_values.get(index),
        "tied_with_leader": index in result.choice.tied,
    }


def _report(session: Session, result: SearchResult, test: Mapping[str, Any]) -> dict[str, Any]:
    layout, state = session.layout, session.state
    winner = session.candidates[result.choice.winner]
    dev = _candidate_entry(winner, result.choice.winner, result)["dev"]
    spent = _all_spent(session, test["spent"])
    ids = [c.id for c in session.candidates]
    return {
        "format": "jurybox-optimize-report/1",
        "generated_by": f"jurybox {jurybox_version()}",
        "config": state["config"]["path"],
        "judge": session.opt.judge,
        "mode": session.mode,
        "split": {**state["split"], "items": session.split.counts() if session.split else {}},
        "budget": state["budget"],
        "spent": {**spent, "proposer_calls": state.get("proposer_calls", 0)},
        "search": _search_entry(result),
        "candidates": [_candidate_entry(c, i, result) for i, c in enumerate(session.candidates)],
        "choice": {
            "leader": ids[result.choice.leader],
            "tied": [ids[i] for i in result.choice.tied],
            "winner": winner.id,
        },
        "winner": {
            "id": winner.id,
            "name": winner.name,
            "dev": dev,
            "test": test["outcome"],
            "trust": test["trust"],
            "optimism_gap": dev["score"] - test["outcome"]["score"],
        },
        "files": {
            "report_md": str(layout.root / REPORT_MD),
            "winner_config": str(layout.root / WINNER_CONFIG),
            "test_run": str(layout.test_run),
            "test_report": str(layout.test_report),
        },
    }


def _search_entry(result: SearchResult) -> dict[str, Any]:
    return {
        "method": result.plan.method,
        "interval_method": INTERVAL_METHOD,
        "rungs": [
            {"rung": r.index, "candidates": r.candidates, "items": r.items}
            for r in result.plan.rungs
        ],
        "planned_calls": result.plan.calls,
    }


def _all_spent(session: Session, test: Mapping[str, Any]) -> dict[str, Any]:
    calls, usd = test["calls"], test["usd"]
    for candidate in session.candidates:
        folder = session.layout.dev_run(candidate.id)
        if (folder / "judgments.jsonl").exists():
            part = _spent(read_records(folder))
            calls += part["calls"]
            if part["usd"] is not None:
                usd = (usd or 0.0) + part["usd"]
    proposer_usd = session.state.get("proposer_usd")
    if proposer_usd is not None:
        usd = (usd or 0.0) + proposer_usd
    return {"calls": calls + session.state.get("proposer_calls", 0), "usd": usd}


def _write(session: Session, report: Mapping[str, Any], winner: Candidate) -> None:
    layout = session.layout
    instructions = layout.instructions(winner.id).resolve() if winner.instructions else None
    data = winner_config(
        session.opt.base,
        winner,
        instructions_file=instructions,
        output_dir=(layout.root / "winner_run").resolve(),
    )
    header = (
        f"# jurybox optimize: the winning prompt ({winner.id}, {winner.name}) in the base "
        f"config {session.state['config']['path']}\n"
    )
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    write_text_atomic(layout.root / WINNER_CONFIG, header + text)
    write_text_atomic(
        layout.root / REPORT_JSON, json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    )
    write_text_atomic(layout.root / REPORT_MD, markdown(report))


def read_report(layout: Layout) -> dict[str, Any]:
    """A finished optimize's report, as written."""
    data: dict[str, Any] = json.loads((layout.root / REPORT_JSON).read_text(encoding="utf-8"))
    return data
