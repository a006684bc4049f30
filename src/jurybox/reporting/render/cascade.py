"""cascade.json, cascade.md and the "needs a human" files of ``jurybox cascade`` (atomic writes).

``needs_human.jsonl`` is a labels file waiting for its labels: one ``{"query_id", "preferred_arm":
null}`` line per item no judge decided, in the shape ``--human`` reads once ``preferred_arm`` is
filled in (an arm name or ``tie``); ``needs_human.items.jsonl`` beside it holds those items'
question and responses, in the dataset's item shape (as ``jurybox import`` writes its items).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jurybox.analysis.model.cascade import CascadeReport, RuleOutcome
from jurybox.io.atomic import write_text_atomic
from jurybox.reporting.render.markdown import render_table
from jurybox.reporting.view.format import (
    MISSING,
    ROUNDING_NOTE,
    fmt_num,
    fmt_rate,
    fmt_value_ci,
)
from jurybox.reporting.view.markdown_escape import escape_markdown
from jurybox.reporting.view.tables import Table

CASCADE_JSON, CASCADE_MD = "cascade.json", "cascade.md"
NEEDS_HUMAN, NEEDS_HUMAN_ITEMS = "needs_human.jsonl", "needs_human.items.jsonl"
ROUNDING = ROUNDING_NOTE.replace("analysis_report.json", CASCADE_JSON)


@dataclass(frozen=True)
class CascadePaths:
    json: Path
    markdown: Path
    needs_human: Path
    needs_human_items: Path


def write_cascade(
    report: CascadeReport, out_dir: Path, *, needs_human: Sequence[str], items: Sequence[str]
) -> CascadePaths:
    """Write the four files into ``out_dir``; ``needs_human``: item ids, ``items``: their JSON
    lines (dataset item shape), in the same order."""
    labels = "".join(
        json.dumps({"query_id": qid, "preferred_arm": None}, ensure_ascii=False) + "\n"
        for qid in needs_human
    )
    return CascadePaths(
        json=write_text_atomic(
            out_dir / CASCADE_JSON,
            json.dumps(report.model_dump(), indent=2, allow_nan=False) + "\n",
        ),
        markdown=write_text_atomic(out_dir / CASCADE_MD, render_cascade_markdown(report)),
        needs_human=write_text_atomic(out_dir / NEEDS_HUMAN, labels),
        needs_human_items=write_text_atomic(
            out_dir / NEEDS_HUMAN_ITEMS, "".join(line + "\n" for line in items)
        ),
    )


def render_cascade_markdown(report: CascadeReport) -> str:
    s = report.settings
    lines = [
        f"# jurybox cascade: {escape_markdown(' → '.join(s.judges))}",
        "",
        f"Source: {escape_markdown(report.source)}",
        "",
        f"_Agreement with humans ≥ {fmt_rate(s.target)} on the items the cascade decides, "
        f"with probability ≥ {fmt_rate(1 - s.delta)} (δ = {fmt_num(s.delta, 3)}): thresholds "
        f"calibrated on {report.items.n_calibration} labelled items, measured on "
        f"{report.items.n_test} others (calibration share {fmt_rate(s.calibration_share)}, "
        f"seed {s.seed})._",
        "",
    ]
    tables = (_stages_table(report), _rules_table(report), _unlabelled_table(report))
    for table in (*tables, _fresh_run_table(report)):
        if table is not None:
            lines += render_table(table, level=2)
    lines += [f"- {escape_markdown(note)}" for note in report.notes]
    lines += [
        f"- needs a human: {report.needs_human} item(s) no judge decided "
        f"({NEEDS_HUMAN}, texts in {NEEDS_HUMAN_ITEMS})",
        f"- method: {escape_markdown(report.method)}",
        "",
        ROUNDING,
        "",
    ]
    return "\n".join(lines)


def _stages_table(report: CascadeReport) -> Table:
    table = Table(
        id="stages",
        title="Thresholds, calibrated judge by judge (cheap first)",
        columns=(
            "judge",
            "confidence",
            "threshold",
            "calibration items reaching it",
            "decided",
            "disagreed",
            "bound on disagreement",
        ),
    )
    for stage in report.stages:
        table.add(
            stage.judge,
            stage.confidence,
            fmt_rate(stage.threshold) if stage.threshold is not None else "decides nothing",
            str(stage.n_reaching),
            str(stage.n_selected),
            str(stage.n_disagree),
            fmt_rate(stage.risk_bound),
        )
    delta = report.stages[0].delta if report.stages else report.settings.delta
    table.note(
        f"bound: one-sided {fmt_rate(1 - delta)} Clopper–Pearson upper bound of disagreement "
        f"with humans on the items the judge decides; ≤ {fmt_rate(1 - report.settings.target)} "
        "for every judge that decides anything"
    )
    return table


def _rules_table(report: CascadeReport) -> Table:
    table = Table(
        id="rules",
        title=f"On the {report.items.n_test} test items",
        columns=(
            "rule",
            "agreement [95% CI]",
            "meets target",
            "decided",
            "decided by",
            "needs a human",
            f"cost ({report.settings.cost_basis})",
            "× strongest alone",
        ),
    )
    for rule in (report.cascade, report.strongest_alone, report.uncalibrated):
        if rule is not None:  # a fresh run measures the cascade alone
            table.add(*_rule_cells(rule))
    if report.uncalibrated is not None:
        table.note(f"uncalibrated: {report.uncalibrated.method}")
    return table


def _rule_cells(rule: RuleOutcome) -> list[str]:
    shares = ", ".join(f"{judge} {fmt_rate(v)}" for judge, v in rule.decided_share.items())
    meets = MISSING if rule.meets_target is None else ("yes" if rule.meets_target else "no")
    return [
        rule.rule,
        fmt_value_ci(rule.agreement, rule.ci_low, rule.ci_high),
        meets,
        f"{rule.n_decided}/{rule.n_items}",
        shares,
        fmt_rate(rule.nobody_share),
        fmt_num(rule.cost, 0),
        fmt_num(rule.cost_ratio, 2),
    ]


def _fresh_run_table(report: CascadeReport) -> Table | None:
    run = report.fresh_run
    if run is None:
        return None
    table = Table(
        id="fresh-run",
        title=f"The fresh run: {run.items} items, each judge called only where it was reached",
        columns=("judge", "items judged", "calls", f"cost ({run.cost_basis})", "items decided"),
    )
    for judge, called in run.called.items():
        table.add(
            judge,
            str(called),
            str(run.units[judge]),
            fmt_num(run.cost[judge], 0),
            str(run.decided.get(judge, 0)),
        )
    table.add("needs a human", MISSING, MISSING, MISSING, str(run.needs_human))
    table.note(
        f"total {fmt_num(run.cost_total, 0)} against {fmt_num(run.cost_strongest_alone, 0)} "
        f"for the strongest judge alone (× {fmt_num(run.cost_ratio, 2)}); {run.method}"
    )
    return table


def _unlabelled_table(report: CascadeReport) -> Table | None:
    routed = report.unlabelled
    if routed is None:
        return None
    table = Table(
        id="unlabelled",
        title=f"The {routed.n_items} items without a human label, routed by the cascade",
        columns=(*routed.decided_share, "needs a human"),
    )
    table.add(*(fmt_rate(v) for v in routed.decided_share.values()), fmt_rate(routed.nobody_share))
    return table
