"""Treatment-effect section: paired score tests per dimension and subgroup, win rates."""

from __future__ import annotations

from typing import Any

from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Json,
    Section,
    Table,
    add_parts,
    cell,
    computed,
    fmt_num,
    fmt_score,
    get,
    label,
    note_skipped_parts,
    ordered_dims,
    ordered_items,
    p_cell,
    skip_reason,
    yes_no,
)

# --- effects -------------------------------------------------------------------------------

EFFECT_COLUMNS = (
    "Subgroup",
    "Dimension",
    "Items",
    "Control mean",
    "Treatment mean",
    "Difference",
    "Wilcoxon p",
    "p (Holm)",
    "Cohen's d_z [95% CI]",
    "Rank-biserial r",
    "Significant",
)


def _effect_parts(section: Section, node: Json) -> None:
    section.notes.append(
        f"Control: {node.get('control_arm', '—')}; treatment: {node.get('treatment_arm', '—')}."
    )
    add_parts(section, node, (("scores", _score_tables), ("preferences", _win_rates)))


def _score_tables(section: Section, scores: Json) -> None:
    _effect_tables(section, scores)
    _per_judge_effects(section, scores.get("per_judge") or {})
    _equivalence_table(section, scores.get("equivalence"))
    _gate_table(section, scores.get("gate_failures"))
    note_skipped_parts(
        section,
        scores,
        ("by_category", "by_difficulty", "equivalence", "gate_failures"),
        "scores: ",
    )


def _effect_tables(section: Section, scores: Json) -> None:
    table = section.table(
        Table(
            id="effects-scores",
            title="Treatment effects per dimension and subgroup",
            columns=EFFECT_COLUMNS,
        )
    )
    groups: list[tuple[str, Any]] = [("all items", scores.get("overall"))]
    for column in ("category", "difficulty"):
        found = get(scores, f"by_{column}", "groups") or {}
        groups.extend((f"{column}: {name}", sub) for name, sub in found.items())
    for name, sub in groups:
        if skip_reason(sub):
            table.note(f"{name}: {skip_reason(sub)}")
            continue
        dims = get(sub, "dimensions") or {}
        for dim in ordered_dims(dims):
            _effect_row(table, name, label(dim), dims[dim])
    table.note(
        "Unit: the item (each arm's score = mean over judges, orders and repeats). "
        "Difference = treatment − control. Holm across the rubric dimensions of each "
        "subgroup; the total is tested on its own."
    )


def _effect_row(table: Table, group: str, dim: str, test: Any) -> None:
    if skip_reason(test):
        table.add(group, dim, *["—"] * 9)
        table.note(f"{group}, {dim}: {skip_reason(test)}")
        return
    wilcoxon = test.get("wilcoxon") or {}
    table.add(
        group,
        dim,
        fmt_num(test.get("n")),
        fmt_score(test.get("control_mean")),
        fmt_score(test.get("treatment_mean")),
        fmt_score(test.get("mean_difference")),
        p_cell(wilcoxon),
        p_cell(wilcoxon, "p_holm"),
        cell(table, test.get("cohens_d"), 2),
        cell(table, test.get("rank_biserial"), 3, interval=False),
        yes_no(test.get("significant")),
    )


def _per_judge_effects(section: Section, judges: Json) -> None:
    if not judges:
        return
    table = section.table(
        Table(
            id="effects-per-judge",
            title="Treatment effect on the total, per judge",
            columns=(
                "Judge",
                "Items",
                "Control mean",
                "Treatment mean",
                "Difference",
                "Wilcoxon p",
                "Cohen's d_z [95% CI]",
            ),
        )
    )
    for judge, test in judges.items():
        if skip_reason(test):
            table.add(str(judge), *["—"] * 6)
            table.note(f"{judge}: {skip_reason(test)}")
            continue
        table.add(
            str(judge),
            fmt_num(test.get("n")),
            fmt_score(test.get("control_mean")),
            fmt_score(test.get("treatment_mean")),
            fmt_score(test.get("mean_difference")),
            p_cell(test.get("wilcoxon")),
            cell(table, test.get("cohens_d"), 2),
        )


def _equivalence_table(section: Section, node: Any) -> None:
    if not computed(node) or node is None:
        return
    margin = fmt_score(node.get("margin"))
    table = section.table(
        Table(
            id="effects-equivalence",
            title=f"Equivalence on normal items (TOST, ±{margin})",
            columns=("Dimension", "Items", "Mean difference [90% CI]", "p (TOST)", "Equivalent"),
        )
    )
    for dim, test in ordered_items(node.get("dimensions") or {}):
        if skip_reason(test) or test.get("value") is None:
            table.add(label(dim), "—", "—", "—", "—")
            table.note(f"{label(dim)}: {skip_reason(test) or test.get('reason')}")
            continue
        table.add(
            label(dim),
            fmt_num(test.get("n")),
            cell(table, test, 2),
            p_cell(test),
            yes_no(test.get("equivalent")),
        )


def _gate_table(section: Section, node: Any) -> None:
    if not isinstance(node, dict) or skip_reason(node):
        return
    table = section.table(
        Table(
            id="effects-gates",
            title="Gate failures (McNemar)",
            columns=("Control failures", "Treatment failures", "Discordant", "p"),
        )
    )
    table.add(
        fmt_num(node.get("control_failures")),
        fmt_num(node.get("treatment_failures")),
        fmt_num(node.get("n_discordant")),
        p_cell(node),
    )


def _win_rates(section: Section, prefs: Json) -> None:
    table = section.table(
        Table(
            id="effects-win-rates",
            title="Win rate of treatment over control",
            columns=("Subgroup", "Rater", "Wins", "Losses", "Ties", "Win rate [95% CI]"),
        )
    )
    rows: list[tuple[str, str, Any]] = [
        ("all items", str(j), m) for j, m in (prefs.get("judges") or {}).items()
    ]
    if prefs.get("panel"):
        rows.append(("all items", "panel (majority)", prefs["panel"]))
    for column in ("category", "difficulty"):
        for name, metric in (prefs.get(f"by_{column}") or {}).items():
            rows.append((f"{column}: {name}", "panel (majority)", metric))
    for group, rater, metric in rows:
        table.add(
            group,
            rater,
            fmt_num(metric.get("wins")),
            fmt_num(metric.get("losses")),
            fmt_num(metric.get("ties")),
            cell(table, metric),
        )
    table.note(
        "Consolidated verdicts: a verdict that flips with the order is a tie; ties count "
        "half. 0.5 = no difference."
    )
    if prefs.get("panel_method"):
        table.note(f"Panel: {prefs['panel_method']}.")


EFFECTS = Family(
    key="effects",
    title="Treatment effects",
    question="Does the treatment arm beat control?",
    build=_effect_parts,
    plots=("treatment_effect", "dimension_heatmap"),
)
