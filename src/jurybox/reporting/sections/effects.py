"""Treatment-effect section: paired score tests per dimension and subgroup, win rates."""

from __future__ import annotations

from jurybox.analysis.model import Skipped
from jurybox.analysis.model.effects import (
    EffectPreferences,
    Effects,
    EffectScores,
    Equivalence,
    GateFailures,
    PairedTests,
    PreferenceWinRate,
    Subgroup,
)
from jurybox.analysis.model.metrics import CorrectedWinRateMetric
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Part,
    Section,
    Table,
    add_parts,
    cell,
    fmt_num,
    fmt_p,
    fmt_score,
    label,
    note_skipped_parts,
    ordered_dims,
    ordered_items,
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


def _effect_parts(section: Section, node: Effects) -> None:
    section.notes.append(f"Control: {node.control_arm}; treatment: {node.treatment_arm}.")
    parts = (
        Part("scores", node.scores, _score_tables),
        Part("preferences", node.preferences, _win_rates),
    )
    add_parts(section, parts)


def _score_tables(section: Section, scores: EffectScores) -> None:
    _effect_tables(section, scores)
    _per_judge_effects(section, scores.per_judge or {})
    _equivalence_table(section, scores.equivalence)
    _gate_table(section, scores.gate_failures)
    parts = (
        ("by_category", scores.by_category),
        ("by_difficulty", scores.by_difficulty),
        ("equivalence", scores.equivalence),
        ("gate_failures", scores.gate_failures),
    )
    note_skipped_parts(section, parts, "scores: ")


def _effect_tables(section: Section, scores: EffectScores) -> None:
    table = section.table(
        Table(
            id="effects-scores",
            title="Treatment effects per dimension and subgroup",
            columns=EFFECT_COLUMNS,
        )
    )
    groups: list[tuple[str, Subgroup | Skipped | None]] = [("all items", scores.overall)]
    for column, by in (("category", scores.by_category), ("difficulty", scores.by_difficulty)):
        found = (by.groups if by else None) or {}
        groups.extend((f"{column}: {name}", sub) for name, sub in found.items())
    for name, sub in groups:
        if isinstance(sub, Skipped):
            table.note(f"{name}: {skip_reason(sub)}")
            continue
        dims = sub.dimensions if sub else {}
        for dim in ordered_dims(dims):
            _effect_row(table, name, label(dim), dims[dim])
    table.note(
        "Unit: the item (each arm's score = mean over judges, orders and repeats). "
        "Difference = treatment − control. Holm across the rubric dimensions of each "
        "subgroup; the total is tested on its own."
    )
    for column, by in (("category", scores.by_category), ("difficulty", scores.by_difficulty)):
        het = (by.heterogeneity if by else None) or {}
        for dim in ordered_dims(het):
            metric = het[dim]
            if metric.value is not None:
                table.note(
                    f"Does the effect on {label(dim)} differ by {column}? Kruskal–Wallis of "
                    f"per-item differences: p = {fmt_p(metric.value)}, ε² = "
                    f"{fmt_num(metric.epsilon_squared)} (Holm across subgroups within)."
                )


def _effect_row(table: Table, group: str, dim: str, test: PairedTests | Skipped) -> None:
    if isinstance(test, Skipped):
        table.add(group, dim, *["—"] * 9)
        table.note(f"{group}, {dim}: {skip_reason(test)}")
        return
    table.add(
        group,
        dim,
        fmt_num(test.n),
        fmt_score(test.control_mean),
        fmt_score(test.treatment_mean),
        fmt_score(test.mean_difference),
        fmt_p(test.wilcoxon.p_value),
        fmt_p(test.wilcoxon.p_holm),
        cell(table, test.cohens_d, 2),
        cell(table, test.rank_biserial, 3, interval=False),
        yes_no(test.significant),
    )


def _per_judge_effects(section: Section, judges: dict[str, PairedTests | Skipped]) -> None:
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
        if isinstance(test, Skipped):
            table.add(str(judge), *["—"] * 6)
            table.note(f"{judge}: {skip_reason(test)}")
            continue
        table.add(
            str(judge),
            fmt_num(test.n),
            fmt_score(test.control_mean),
            fmt_score(test.treatment_mean),
            fmt_score(test.mean_difference),
            fmt_p(test.wilcoxon.p_value),
            cell(table, test.cohens_d, 2),
        )


def _equivalence_table(section: Section, node: Equivalence | None) -> None:
    if node is None or not node.computed:
        return
    margin = fmt_score(node.margin)
    table = section.table(
        Table(
            id="effects-equivalence",
            title=f"Equivalence on normal items (TOST, ±{margin})",
            columns=("Dimension", "Items", "Mean difference [90% CI]", "p (TOST)", "Equivalent"),
        )
    )
    for dim, test in ordered_items(node.dimensions or {}):
        if isinstance(test, Skipped) or test.value is None:
            table.add(label(dim), "—", "—", "—", "—")
            table.note(f"{label(dim)}: {test.reason}")
            continue
        table.add(
            label(dim),
            fmt_num(test.n),
            cell(table, test, 2),
            fmt_p(test.p_value),
            yes_no(test.equivalent),
        )


def _gate_table(section: Section, node: GateFailures | Skipped | None) -> None:
    if node is None or isinstance(node, Skipped):
        return
    table = section.table(
        Table(
            id="effects-gates",
            title="Gate failures (McNemar)",
            columns=("Control failures", "Treatment failures", "Discordant", "p"),
        )
    )
    table.add(
        fmt_num(node.control_failures),
        fmt_num(node.treatment_failures),
        fmt_num(node.n_discordant),
        fmt_p(node.p_value),
    )


def _win_rates(section: Section, prefs: EffectPreferences) -> None:
    table = section.table(
        Table(
            id="effects-win-rates",
            title="Win rate of treatment over control",
            columns=(
                "Subgroup",
                "Rater",
                "Wins",
                "Losses",
                "Ties",
                "Win rate [95% CI]",
                "Length-controlled [95% CI]",
            ),
        )
    )
    controlled = dict(prefs.length_controlled or {})
    if prefs.panel_length_controlled is not None:
        controlled["panel (majority)"] = prefs.panel_length_controlled
    rows: list[tuple[str, str, PreferenceWinRate]] = [
        ("all items", str(j), m) for j, m in (prefs.judges or {}).items()
    ]
    if prefs.panel:
        rows.append(("all items", "panel (majority)", prefs.panel))
    for column, by in (("category", prefs.by_category), ("difficulty", prefs.by_difficulty)):
        for name, metric in (by or {}).items():
            rows.append((f"{column}: {name}", "panel (majority)", metric))
    for group, rater, metric in rows:
        table.add(
            group,
            rater,
            fmt_num(metric.wins),
            fmt_num(metric.losses),
            fmt_num(metric.ties),
            cell(table, metric),
            cell(table, controlled.get(rater)) if group == "all items" else "—",
        )
    table.note(
        "Consolidated verdicts: a verdict that flips with the order is a tie; ties count "
        "half. 0.5 = no difference. Length-controlled: the win rate at equal response length "
        "(a binomial GLM on tanh of the standardised length difference, AlpacaEval-style)."
    )
    if prefs.panel_method:
        table.note(f"Panel: {prefs.panel_method}.")
    _corrected_win_rates(section, prefs)


def _corrected_win_rates(section: Section, prefs: EffectPreferences) -> None:
    """Per judge: its raw win rate on the unlabelled items and the rate corrected by its
    confusion matrix on the human-labelled ones."""
    if not prefs.corrected:
        return
    table = section.table(
        Table(
            id="effects-corrected-win-rates",
            title="Win rate corrected for each judge's errors on human-labelled pairs",
            columns=("Judge", "Labelled", "Unlabelled", "Raw rate", "Corrected [95% CI]"),
        )
    )
    for judge, metric in prefs.corrected.items():
        counts = ("—", "—", "—")
        if isinstance(metric, CorrectedWinRateMetric) and metric.value is not None:
            counts = (
                fmt_num(metric.n_labelled),
                fmt_num(metric.n_unlabelled),
                fmt_num(metric.raw_rate),
            )
        table.add(str(judge), *counts, cell(table, metric))
    if prefs.corrected_method:
        table.note(f"Corrected: {prefs.corrected_method}.")


EFFECTS: Family[Effects] = Family(
    key="effects",
    title="Treatment effects",
    question="Does the treatment arm beat control?",
    node=lambda report: report.effects,
    build=_effect_parts,
    plots=("treatment_effect", "dimension_heatmap"),
)
