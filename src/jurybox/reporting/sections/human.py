"""Human-calibration section: judges against human labels, and the annotators."""

from __future__ import annotations

from typing import Any

from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Json,
    Section,
    Table,
    add_parts,
    cell,
    fmt_count,
    fmt_num,
    fmt_rate,
    get,
    label,
    ordered_items,
    skip_reason,
)

# --- human calibration ---------------------------------------------------------------------


def _human_parts(section: Section, node: Json) -> None:
    parts = (
        ("inter_annotator", _annotator_table),
        ("preferences", _human_pref_table),
        ("scores", _human_score_table),
        ("criterion", _criterion_table),
    )
    add_parts(section, node, parts)


def _annotator_table(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="human-annotators",
            title="Agreement among the human annotators",
            columns=("Statistic", "Value", "n"),
        )
    )
    table.add(
        "Krippendorff's α",
        cell(table, node.get("krippendorff_alpha"), interval=False),
        fmt_num(get(node, "krippendorff_alpha", "n")),
    )
    table.add(
        "Fleiss' κ",
        cell(table, node.get("fleiss_kappa"), interval=False),
        fmt_num(get(node, "fleiss_kappa", "n")),
    )
    for pair in node.get("pairs") or []:
        raters = " vs ".join(map(str, pair.get("raters") or pair.get("judges") or []))
        kappa = pair.get("cohen_kappa") or {}
        table.add(f"Cohen's κ, {raters}", cell(table, kappa), fmt_num(kappa.get("n")))
    counts = node.get("majority_counts") or {}
    if counts:
        table.note(
            "Majority labels: "
            + ", ".join(f"{k}: {v}" for k, v in counts.items())
            + f"; no majority: {node.get('no_majority', 0)}."
        )


def _human_pref_table(section: Section, node: Json) -> None:
    judges = node.get("judges") or {}
    orders = sorted({o for e in judges.values() for o in (e.get("orders") or {})})
    table = section.table(
        Table(
            id="human-preferences",
            title="Judge vs human preferences (Cohen's κ [95% CI])",
            columns=("Judge", *[f"Order {o}" for o in orders], "Pooled", "Consolidated", "n"),
        )
    )
    for judge, entry in judges.items():
        cells = [cell(table, get(entry, "orders", o)) for o in orders]
        pooled = entry.get("pooled") or {}
        table.add(
            str(judge),
            *cells,
            cell(table, pooled),
            cell(table, entry.get("consolidated")),
            fmt_num(pooled.get("n")),
        )
    table.note("κ ≥ 0.4 is 'moderate' agreement (Landis & Koch 1977).")


def _human_score_table(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="human-scores",
            title="Judge vs human scores",
            columns=("Judge", "Dimension", "Cohen's κ [95% CI]", "Quadratic κ", "ICC(2,1)", "n"),
        )
    )
    for judge, entry in (node.get("judges") or {}).items():
        for dim, metric in ordered_items(entry.get("dimensions") or {}):
            icc = entry.get("total_icc") if dim == "total" else None
            table.add(
                str(judge),
                label(dim),
                cell(table, metric),
                cell(table, metric.get("weighted_quadratic"), interval=False),
                cell(table, icc) if icc else "—",
                fmt_num(metric.get("n")),
            )
    if node.get("rounding"):
        table.note(f"κ uses the {node['rounding']}.")


def _criterion_table(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="human-criterion",
            title="Criterion verdicts against human Pass/Fail",
            columns=(
                "Judge",
                "TPR [95% CI]",
                "TNR [95% CI]",
                "Human pass rate",
                "Judge pass rate",
                "Corrected pass rate [95% CI]",
            ),
        )
    )
    for judge, entry in (node.get("judges") or {}).items():
        if skip_reason(entry):
            table.add(str(judge), *["—"] * 5)
            table.note(f"{judge}: {skip_reason(entry)}")
            continue
        tt = entry.get("tpr_tnr") or {}
        corrected = entry.get("corrected_pass_rate") or {}
        if skip_reason(corrected):
            table.note(f"{judge}: corrected pass rate: {skip_reason(corrected)}")
        table.add(
            str(judge),
            _prop(tt.get("tpr")),
            _prop(tt.get("tnr")),
            cell(table, entry.get("human_pass_rate")),
            cell(table, entry.get("judge_pass_rate")),
            cell(table, corrected) if not skip_reason(corrected) else "—",
        )
    table.note(
        "Corrected pass rate: Rogan–Gladen over the unlabelled responses, interval "
        "carrying the uncertainty of both sets."
    )


def _prop(metric: Any) -> str:
    """A nested proportion (``estimate`` key) with its counts."""
    if not isinstance(metric, dict):
        return "—"
    value = metric.get("estimate", metric.get("value"))
    ci = f" [{fmt_rate(metric.get('ci_low'))}, {fmt_rate(metric.get('ci_high'))}]"
    return f"{fmt_rate(value)} ({fmt_count(metric.get('successes'), metric.get('n'))}){ci}"


HUMAN_CALIBRATION = Family(
    key="human_calibration",
    title="Human calibration",
    question="Do the judges agree with humans?",
    build=_human_parts,
    plots=("calibration",),
)
