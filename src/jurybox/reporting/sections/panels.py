"""Panels section: majority vote, panel scores, Dawid–Skene, win rates, Borda."""

from __future__ import annotations

from typing import Any

from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Json,
    Section,
    Table,
    cell,
    computed,
    fmt_num,
    fmt_rate,
    fmt_score,
    method_note,
    skip_reason,
)


def _panel_tables(section: Section, node: Json) -> None:
    _majority_table(section, node.get("majority_vote"))
    _score_panel_table(section, node.get("scores"))
    _dawid_skene_table(section, node.get("dawid_skene"))
    _win_rate_table(section, node.get("win_rates"))
    _borda_notes(section, node.get("borda"))
    for key in ("majority_vote", "scores", "borda", "dawid_skene", "win_rates"):
        reason = skip_reason(node.get(key))
        if reason:
            section.subsections_skipped.append((key.replace("_", " "), reason))


def _majority_table(section: Section, node: Any) -> None:
    if not computed(node) or node is None:
        return
    table = section.table(
        Table(
            id="panel-majority",
            title="Majority vote of the panel",
            columns=("Data", "Items", "Counts", "No majority", "Accuracy vs gold [95% CI]"),
        )
    )
    for name in ("preferences", "verdicts"):
        block = node.get(name)
        if isinstance(block, dict):
            counts = ", ".join(f"{k}: {v}" for k, v in (block.get("counts") or {}).items())
            table.add(
                name,
                fmt_num(block.get("n_items")),
                counts or "—",
                fmt_num(block.get("no_majority")),
                cell(table, block.get("accuracy_vs_gold")),
            )
    method_note(table, node)


def _score_panel_table(section: Section, node: Any) -> None:
    if not computed(node) or node is None:
        return
    table = section.table(
        Table(
            id="panel-scores",
            title="Panel mean score per arm",
            columns=("Arm", "Items", "Mean total", "Mean z-score"),
        )
    )
    for arm, entry in (node.get("arms") or {}).items():
        table.add(
            str(arm),
            fmt_num(entry.get("n_items")),
            fmt_score(entry.get("mean")),
            fmt_score(entry.get("z_mean")),
        )
    method_note(table, node)


def _dawid_skene_table(section: Section, node: Any) -> None:
    if not computed(node) or node is None:
        return
    table = section.table(
        Table(
            id="panel-dawid-skene",
            title="Judge accuracy estimated without gold (Dawid–Skene)",
            columns=("Data", "Judge", "Estimated accuracy", "Converged"),
        )
    )
    for name in ("preferences", "verdicts"):
        block = node.get(name)
        if not isinstance(block, dict):
            continue
        if skip_reason(block):
            section.subsections_skipped.append((f"Dawid–Skene on {name}", str(skip_reason(block))))
            continue
        for judge, entry in (block.get("judges") or {}).items():
            table.add(
                name,
                str(judge),
                fmt_rate(entry.get("accuracy")),
                "yes" if block.get("converged") else "no",
            )
    if not table.rows:
        section.tables.remove(table)


def _win_rate_table(section: Section, node: Any) -> None:
    if not computed(node) or node is None:
        return
    table = section.table(
        Table(
            id="panel-win-rates",
            title="Win rates between arms",
            columns=("Arm", "Opponent", "Rater", "Source", "W / L / T", "Win rate [95% CI]"),
        )
    )
    for row in node.get("pairs") or []:
        wlt = f"{row.get('wins', '—')} / {row.get('losses', '—')} / {row.get('ties', '—')}"
        table.add(
            str(row.get("arm")),
            str(row.get("opponent")),
            str(row.get("rater")),
            str(row.get("source")),
            wlt,
            cell(table, row),
        )
    table.note(f"Ties: {node.get('tie_policy') or 'count half'}.")


def _borda_notes(section: Section, node: Any) -> None:
    if computed(node) and isinstance(node, dict) and isinstance(node.get("panel"), dict):
        ranking = node["panel"].get("ranking")
        if ranking:
            section.notes.append("Borda ranking of the arms (best first): " + " > ".join(ranking))


PANELS = Family(
    key="panels",
    title="Panels of judges",
    question="What do the judges say together?",
    build=_panel_tables,
)
