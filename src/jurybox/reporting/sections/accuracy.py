"""Accuracy-against-gold section: per judge and presentation order."""

from __future__ import annotations

from typing import Any

from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Json,
    Section,
    Table,
    fmt_count,
    fmt_rate,
    get,
    method_note,
    rate_with_counts,
)


def _accuracy_table(section: Section, node: Json) -> None:
    judges = node.get("judges") or {}
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
    method_note(table, node)


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


ACCURACY = Family(
    key="accuracy_vs_gold",
    title="Accuracy against gold labels",
    question="How often does each judge pick the gold answer?",
    build=_accuracy_table,
)
