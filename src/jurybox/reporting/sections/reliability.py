"""Reliability section: test–retest, internal consistency, confidence calibration."""

from __future__ import annotations

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
    ordered_items,
    p_cell,
)

# --- reliability ---------------------------------------------------------------------------


def _reliability_parts(section: Section, node: Json) -> None:
    parts = (
        ("test_retest", _retest_tables),
        ("internal_consistency", _consistency_table),
        ("confidence_calibration", _confidence_table),
    )
    add_parts(section, node, parts)


def _retest_tables(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="reliability-retest",
            title="Test–retest reliability (ICC(2,1))",
            columns=("Scope", "ICC [95% CI]", "Pairs"),
        )
    )
    for dim, metric in ordered_items(node.get("dimensions") or {}):
        table.add(f"dimension: {label(dim)}", cell(table, metric), fmt_num(metric.get("n")))
    for judge, metric in (node.get("judges") or {}).items():
        table.add(f"judge: {judge} (total)", cell(table, metric), fmt_num(metric.get("n")))
    for name in ("preferences", "verdicts"):
        block = node.get(name)
        if isinstance(block, dict):
            kappa = block.get("cohen_kappa") or {}
            table.add(
                f"{name}: percent agreement",
                cell(table, block.get("percent_agreement")),
                fmt_num(block.get("n_pairs")),
            )
            table.add(f"{name}: Cohen's κ", cell(table, kappa), fmt_num(block.get("n_pairs")))


def _consistency_table(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="reliability-internal",
            title="Internal consistency across rubric dimensions",
            columns=("Scope", "Cronbach's α [95% CI]", "Subjects"),
        )
    )
    rows = [("pooled", node.get("pooled")), *(node.get("judges") or {}).items()]
    for scope, metric in rows:
        table.add(str(scope), cell(table, metric), fmt_num(get(metric, "n")))
    table.note(f"Subjects: {node.get('subjects', 'record x arm')}.")


def _confidence_table(section: Section, node: Json) -> None:
    table = section.table(
        Table(
            id="reliability-confidence",
            title="Does stated confidence track being right?",
            columns=("Judgments", "Judge", "Spearman ρ [95% CI]", "p", "n", "Mean absolute error"),
        )
    )
    for kind in ("preferences", "scores"):
        block = node.get(kind)
        if not computed(block) or block is None:
            continue
        table.note(f"{kind}: target = {block.get('target', '—')}.")
        for judge, entry in (block.get("judges") or {}).items():
            rho = entry.get("spearman") or {}
            table.add(
                kind,
                str(judge),
                cell(table, rho),
                p_cell(rho),
                fmt_num(rho.get("n")),
                fmt_score(entry.get("mean_abs_error")),
            )


RELIABILITY = Family(
    key="reliability",
    title="Reliability",
    question="Would the judges say the same thing again?",
    build=_reliability_parts,
)
