"""Panels section: majority vote, panel scores, Dawid–Skene, win rates, Borda."""

from __future__ import annotations

from jurybox.analysis.model import Skipped
from jurybox.analysis.model.panels import (
    Borda,
    DawidSkene,
    MajorityVote,
    Panels,
    ScorePanel,
    WinRates,
)
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Section,
    Table,
    cell,
    fmt_num,
    fmt_rate,
    fmt_score,
    method_note,
    note_skipped_parts,
    present,
)


def _panel_tables(section: Section, node: Panels) -> None:
    _majority_table(section, node.majority_vote)
    _score_panel_table(section, node.scores)
    _dawid_skene_table(section, node.dawid_skene)
    _win_rate_table(section, node.win_rates)
    _borda_notes(section, node.borda)
    parts = (
        ("majority_vote", node.majority_vote),
        ("scores", node.scores),
        ("borda", node.borda),
        ("dawid_skene", node.dawid_skene),
        ("win_rates", node.win_rates),
    )
    note_skipped_parts(section, parts)


def _majority_table(section: Section, node: MajorityVote | None) -> None:
    if node is None or not node.computed:
        return
    table = section.table(
        Table(
            id="panel-majority",
            title="Majority vote of the panel",
            columns=("Data", "Items", "Counts", "No majority", "Accuracy vs gold [95% CI]"),
        )
    )
    for name, block in (("preferences", node.preferences), ("verdicts", node.verdicts)):
        if block is not None:
            counts = ", ".join(f"{k}: {v}" for k, v in block.counts.items())
            table.add(
                name,
                fmt_num(block.n_items),
                counts or "—",
                fmt_num(block.no_majority),
                cell(table, block.accuracy_vs_gold),
            )
    method_note(table, node.method)


def _score_panel_table(section: Section, node: ScorePanel | None) -> None:
    if node is None or not node.computed:
        return
    table = section.table(
        Table(
            id="panel-scores",
            title="Panel mean score per arm",
            columns=("Arm", "Items", "Mean total", "Mean z-score"),
        )
    )
    for arm, entry in (node.arms or {}).items():
        table.add(
            str(arm),
            fmt_num(entry.n_items),
            fmt_score(entry.mean),
            fmt_score(entry.z_mean),
        )
    method_note(table, node.method)


def _dawid_skene_table(section: Section, node: DawidSkene | None) -> None:
    if node is None or not node.computed:
        return
    table = section.table(
        Table(
            id="panel-dawid-skene",
            title="Judge accuracy estimated without gold (Dawid–Skene)",
            columns=("Data", "Judge", "Estimated accuracy", "Converged"),
        )
    )
    for name, block in (("preferences", node.preferences), ("verdicts", node.verdicts)):
        if isinstance(block, Skipped):
            section.subsections_skipped.append((f"Dawid–Skene on {name}", block.reason))
            continue
        if block is None:
            continue
        for judge, entry in block.judges.items():
            table.add(
                name, str(judge), fmt_rate(entry.accuracy), "yes" if block.converged else "no"
            )
    if not table.rows:
        section.tables.remove(table)
        return
    table.note(
        "Dawid–Skene infers accuracy from how the judges agree with one another, without labels: "
        "judges that share a bias (e.g. for the first-shown answer) agree and score high. It "
        "never enters the verdict; where gold labels exist, accuracy against gold is the evidence."
    )


def _win_rate_table(section: Section, node: WinRates | None) -> None:
    if node is None or not node.computed:
        return
    table = section.table(
        Table(
            id="panel-win-rates",
            title="Win rates between arms",
            columns=("Arm", "Opponent", "Rater", "Source", "W / L / T", "Win rate [95% CI]"),
        )
    )
    for row in node.pairs or []:
        wlt = " / ".join("—" if n is None else str(n) for n in (row.wins, row.losses, row.ties))
        table.add(
            str(row.arm), str(row.opponent), str(row.rater), str(row.source), wlt, cell(table, row)
        )
    table.note(f"Ties: {node.tie_policy or 'count half'}.")


def _borda_notes(section: Section, node: Borda | None) -> None:
    panel = present(node.panel) if node is not None and node.computed else None
    if panel is not None and panel.ranking:
        ranking = [str(candidate) for candidate in panel.ranking]
        section.notes.append("Borda ranking of the arms (best first): " + " > ".join(ranking))


PANELS: Family[Panels] = Family(
    key="panels",
    title="Panels of judges",
    question="What do the judges say together?",
    node=lambda report: report.panels,
    build=_panel_tables,
)
