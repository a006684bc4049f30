"""Section builders for the overview, the verdict, agreement, accuracy and panels.

Bias, effects, reliability and human calibration live in ``sections_families``. Every builder
reads the report dict (structure: ``jurybox.analysis.report``) defensively: a missing key
renders as an em dash, never as an exception, so an older or partial report still renders.
"""

from __future__ import annotations

import re
from typing import Any

from jurybox.reporting.sections_bias import bias_section
from jurybox.reporting.sections_effects import effects_section
from jurybox.reporting.sections_quality import human_section, reliability_section
from jurybox.reporting.tables import (
    FAMILY_TITLES,
    Json,
    Link,
    Section,
    Table,
    cell,
    computed,
    family_section,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_text,
    get,
    label,
    method_note,
    ordered_dims,
    rate_with_counts,
    skip_reason,
)


def slug(text: str) -> str:
    """An HTML id fragment for a judge or status name."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def failures_anchor(judge: str) -> str:
    return f"#failures-{slug(judge)}"


def build_sections(report: Json) -> list[Section]:
    """Every section of the report, in reading order (the verdict is rendered separately)."""
    return [
        overview_section(report),
        agreement_section(report),
        bias_section(report),
        effects_section(report),
        reliability_section(report),
        human_section(report),
        accuracy_section(report),
        panels_section(report),
    ]


# --- overview ------------------------------------------------------------------------------


RECORD_COLUMNS = (
    "Judge",
    "Model",
    "Vendor",
    "Records",
    "OK",
    "Failed",
    "Failure rate",
    "Parse-failure rate",
    "By status",
)


def overview_section(report: Json) -> Section:
    summary = report.get("summary") or {}
    section = Section(
        id="records",
        title="Records and failures",
        question="What went in, and what was excluded from the metrics and why?",
    )
    table = section.table(
        Table(
            id="records-by-judge",
            title="Records by judge",
            columns=RECORD_COLUMNS,
        )
    )
    failures = summary.get("failures") or {}
    for judge in summary.get("judges") or []:
        name = str(judge.get("name"))
        info = failures.get(name) or {}
        failed = info.get("n_failed", 0)
        statuses = info.get("by_status") or {}
        table.add(
            name,
            fmt_text(judge.get("model")),
            fmt_text(judge.get("vendor")),
            fmt_num(judge.get("n_records")),
            fmt_num(judge.get("n_ok")),
            Link(str(failed), failures_anchor(name)) if failed else "0",
            fmt_rate(info.get("failure_rate")),
            fmt_rate(info.get("parse_failure_rate")),
            ", ".join(f"{k} {v}" for k, v in statuses.items()) or "—",
        )
    section.notes.extend(_overview_notes(summary))
    return section


def _overview_notes(summary: Json) -> list[str]:
    excluded = summary.get("excluded") or {}
    by_status = excluded.get("by_status") or {}
    listed = ", ".join(f"{k}: {v}" for k, v in by_status.items()) or "none"
    modes = ", ".join(summary.get("modes") or []) or "—"
    arms = ", ".join(summary.get("arms") or []) or "—"
    holistic = excluded.get("holistic_fallback", 0)
    notes = [
        f"{summary.get('n_records', 0)} records, {summary.get('n_ok', 0)} ok, over "
        f"{summary.get('n_items', 0)} items; modes: {modes}.",
        f"Excluded from every metric: {excluded.get('total', 0)} (by status: {listed}; "
        f"holistic fallback, the judge ignored the rubric: {holistic}).",
        f"Arms: {arms} (control: {summary.get('control_arm') or '—'}, treatment: "
        f"{summary.get('treatment_arm') or '—'}).",
    ]
    labels = summary.get("human_labels") or {}
    if any(labels.values()):
        notes.append("Human labels: " + ", ".join(f"{k} {v}" for k, v in labels.items()) + ".")
    if summary.get("local_judge_used"):
        notes.append(
            "The bundled local judge (SmolLM2-135M) was used: it is a weak judge, fit for "
            "demos only."
        )
    return notes


# --- verdict -------------------------------------------------------------------------------

LEVEL_TITLES = {
    "trusted": "Yes — these judges can be trusted for this comparison",
    "use_with_caution": "With caution — usable, but some checks raised warnings",
    "not_trusted": "No — these judges should not be trusted for this comparison",
    "insufficient_evidence": "Not enough evidence to say",
}


def verdict_table(report: Json) -> Table:
    """Every trust check, failures first."""
    table = Table(
        id="trust-checks",
        title="Every check, failures first",
        columns=("Status", "Check", "Judge", "Value", "Passes when", "Detail"),
    )
    order = {"fail": 0, "warn": 1, "pass": 2, "skipped": 3}
    checks = get(report, "verdict", "checks") or []
    for check in sorted(checks, key=lambda c: order.get(c.get("status"), 4)):
        name = str(check.get("check"))
        table.add(
            str(check.get("status")),
            name.replace("_", " "),
            fmt_text(check.get("judge")),
            fmt_rate(check.get("value")),
            pass_rule(name, check.get("threshold")),
            str(check.get("message", "")),
        )
    table.note(
        "Value: the observed figure the check reads (for first-position bias, the share of "
        "decisive verdicts for the first-shown response; the check itself tests its Holm p)."
    )
    return table


_RULES = {
    "parse_failure_rate": "≤ {t}",
    "failure_rate": "≤ {t}",
    "first_position_bias": "Holm p ≥ {t}",
    "verbosity_bias": "no significant length effect",
    "self_enhancement": "no significant own-family excess",
    "local_judge": "not the bundled local judge",
}


def pass_rule(check: str, threshold: Any) -> str:
    """How a check passes, in words (the threshold formatted by ``_format``)."""
    rule = _RULES.get(check, "≥ {t}")
    if "{t}" in rule and threshold is None:
        return "—"
    return rule.format(t=fmt_rate(threshold) if "{t}" in rule else "")


def judge_verdict_table(report: Json) -> Table:
    table = Table(id="judge-verdicts", title="Per judge", columns=("Judge", "Level", "Reasons"))
    for judge, entry in (get(report, "verdict", "judges") or {}).items():
        reasons = "; ".join(entry.get("reasons") or []) or "no failed or warned check"
        table.add(str(judge), str(entry.get("level", "")).replace("_", " "), reasons)
    return table


# --- agreement -----------------------------------------------------------------------------


AGREEMENT_COLUMNS = (
    "Data",
    "Level",
    "Units (complete/all)",
    "Krippendorff's α",
    "Fleiss' κ",
    "All judges agree [95% CI]",
)
PAIR_COLUMNS = ("Judges", "Data", "n", "Cohen's κ [95% CI]", "Percent agreement [95% CI]")


def agreement_section(report: Json) -> Section:
    section = family_section(report, "agreement", "Do the judges agree with each other?")
    section.plots.append("agreement_matrix")
    node = report.get("agreement") or {}
    if section.status == "skipped":
        return section
    table = section.table(
        Table("agreement-per-dimension", "Agreement per dimension", AGREEMENT_COLUMNS)
    )
    pairs = section.table(Table("agreement-pairs", "Agreement per judge pair", PAIR_COLUMNS))
    for name, block in _agreement_blocks(node):
        if not computed(block):
            table.add(name, *["—"] * 5)
            table.note(f"{name}: {skip_reason(block)}")
            continue
        table.add(
            name,
            str(block.get("level", "")),
            fmt_count(block.get("n_complete_units"), block.get("n_units")),
            cell(table, block.get("krippendorff_alpha"), interval=False),
            cell(table, block.get("fleiss_kappa"), interval=False),
            cell(table, block.get("percent_agreement")),
        )
        _pair_rows(pairs, name, block.get("pairs") or [])
    _agreement_notes(section, node, table)
    return section


def _agreement_blocks(node: Json) -> list[tuple[str, Any]]:
    """Computed blocks (preferences, each score dimension, verdicts); a lone skipped
    preferences block is kept so that the table says why it is empty."""
    blocks: list[tuple[str, Any]] = [("preferences", node.get("preferences"))]
    dims = get(node, "scores", "dimensions") or {}
    blocks.extend((f"scores: {label(d)}", dims[d]) for d in ordered_dims(dims))
    blocks.append(("criterion verdicts", node.get("verdicts")))
    found = [(n, b) for n, b in blocks if computed(b)]
    return found or [("preferences", node.get("preferences") or {"status": "skipped"})]


def _pair_rows(table: Table, name: str, pairs: list[Json]) -> None:
    for pair in pairs:
        raters = pair.get("raters") or pair.get("judges") or []
        kappa = pair.get("cohen_kappa") or {}
        table.add(
            " vs ".join(map(str, raters)),
            name,
            fmt_num(kappa.get("n")),
            cell(table, kappa),
            cell(table, pair.get("percent_agreement")),
        )


def _agreement_notes(section: Section, node: Json, table: Table) -> None:
    unit = node.get("unit") or {}
    if unit:
        section.notes.append(
            "Units: " + "; ".join(f"{k}: {v}" for k, v in unit.items()) + ". Preferences are "
            "nominal, scores ordinal."
        )
    table.note("α ≥ 0.667 is Krippendorff's lowest tentative level of reliability.")


# --- accuracy ------------------------------------------------------------------------------


def accuracy_section(report: Json) -> Section:
    section = family_section(
        report, "accuracy_vs_gold", "How often does each judge pick the gold answer?"
    )
    if section.status == "skipped":
        return section
    judges = get(report, "accuracy_vs_gold", "judges") or {}
    orders = sorted({o for entry in judges.values() for o in (entry.get("orders") or {})})
    table = section.table(
        Table(
            id="accuracy-per-judge",
            title="Accuracy per judge and presentation order",
            columns=(
                "Judge",
                *[f"Order {o}" for o in orders],
                "Pooled",
                "Consolidated",
                "Correct in both orders",
            ),
        )
    )
    for judge, entry in judges.items():
        cells = [_accuracy_cell(table, get(entry, "orders", o)) for o in orders]
        table.add(
            str(judge),
            *cells,
            _accuracy_cell(table, entry.get("pooled")),
            _accuracy_cell(table, entry.get("consolidated")),
            _accuracy_cell(table, entry.get("both_orders_correct")),
        )
    table.note(
        "Cells: accuracy (correct/judged) over successful judgments; where judgments failed, "
        "'all:' counts them as wrong (the convention of LLMBar's published figures)."
    )
    table.note("Consolidated: one verdict per item, a verdict that flips with the order is a tie.")
    method_note(table, report.get("accuracy_vs_gold"))
    return section


def _accuracy_cell(table: Table, metric: Any) -> str:
    if not isinstance(metric, dict):
        return "—"
    text = rate_with_counts(table, metric, "correct")
    n_total = metric.get("n_total")
    if (
        n_total is not None
        and n_total != metric.get("n")
        and metric.get("accuracy_all") is not None
    ):
        counts = fmt_count(metric.get("correct"), n_total)
        text += f"; all: {fmt_rate(metric['accuracy_all'])} ({counts})"
    return text


# --- panels --------------------------------------------------------------------------------


def panels_section(report: Json) -> Section:
    section = family_section(report, "panels", "What do the judges say together?")
    if section.status == "skipped":
        return section
    node = report.get("panels") or {}
    _majority_table(section, node.get("majority_vote"))
    _score_panel_table(section, node.get("scores"))
    _dawid_skene_table(section, node.get("dawid_skene"))
    _win_rate_table(section, node.get("win_rates"))
    _borda_notes(section, node.get("borda"))
    for key in ("majority_vote", "scores", "borda", "dawid_skene", "win_rates"):
        reason = skip_reason(node.get(key))
        if reason:
            section.subsections_skipped.append((key.replace("_", " "), reason))
    return section


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


__all__ = [
    "FAMILY_TITLES",
    "LEVEL_TITLES",
    "build_sections",
    "failures_anchor",
    "fmt_p",
    "judge_verdict_table",
    "slug",
    "verdict_table",
]
