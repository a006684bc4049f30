"""Accuracy-against-gold section: per judge and presentation order."""

from __future__ import annotations

from jurybox.analysis.model._base import Skipped
from jurybox.analysis.model.accuracy import Accuracy, AccuracyVsGold, LabelledByDesign
from jurybox.reporting.explorer.links import items_href
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Cell,
    Link,
    Section,
    Table,
    cell,
    fmt_count,
    fmt_rate,
    method_note,
    rate_with_counts,
)


def _accuracy_tables(section: Section, node: AccuracyVsGold) -> None:
    if node.judges:
        _accuracy_table(section, node)
    if node.design is not None:
        _design_table(section, node.design)


def _design_table(section: Section, design: LabelledByDesign) -> None:
    """Accuracy over the items `jurybox label` chose, each stratum weighted by its size."""
    table = section.table(
        Table(
            id="accuracy-design",
            title="Accuracy over the items jurybox label chose, weighted by stratum",
            columns=("Judge", "Accuracy (failures counted)", "Over parsed verdicts", "Items"),
        )
    )
    if design.status != "computed":
        table.note(f"Not computed: {design.reason}.")
    for judge, entry in (design.judges or {}).items():
        counted = entry.counted
        by_stratum = counted.n_by_stratum or {}
        items = ", ".join(f"{name} {count}" for name, count in sorted(by_stratum.items()))
        table.add(str(judge), cell(table, counted), cell(table, entry.parsed), items or "—")
    streams = ", ".join(f"{n} {name}" for name, n in sorted((design.streams or {}).items()))
    strata = ", ".join(f"{name} {n}" for name, n in sorted((design.strata or {}).items()))
    table.note(f"Labelled items by stream: {streams}; items of the run by stratum: {strata}.")
    table.note(
        "The trust verdict reads this accuracy where it rests on at least as many labelled "
        "items as the unweighted one; the figures against humans read the labels that are a "
        "random sample (the uniform stream) only (docs/labelling.md)."
    )
    method_note(table, design.method)


def _accuracy_table(section: Section, node: AccuracyVsGold) -> None:
    judges = node.judges or {}
    orders = sorted({o for entry in judges.values() for o in entry.orders})
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
                "Wrong in an order (items)",
            ),
        )
    )
    for judge, entry in judges.items():
        cells = [_accuracy_cell(table, entry.orders.get(o)) for o in orders]
        table.add(
            str(judge),
            *cells,
            _accuracy_cell(table, entry.pooled),
            _accuracy_cell(table, entry.consolidated),
            _accuracy_cell(table, entry.both_orders_correct),
            _wrong_cell(str(judge), entry.both_orders_correct),
        )
    table.note(
        "Cells: accuracy (correct/judged) over successful judgments; where judgments failed, "
        "'all:' counts them as wrong (the convention of LLMBar's published figures)."
    )
    table.note("Consolidated: one verdict per item, a verdict that flips with the order is a tie.")
    table.note(
        "Wrong in an order: items judged in both orders where a judgment missed the gold label "
        "or failed (pairs minus correct in both orders); the count opens those items."
    )
    method_note(table, node.method)


def _wrong_cell(judge: str, both: Accuracy | Skipped) -> Cell:
    if isinstance(both, Skipped) or both.n is None or both.correct is None:
        return "—"
    wrong = both.n - both.correct
    return Link(f"{wrong} of {both.n}", items_href(judge=judge, filter="wrong"))


def _accuracy_cell(table: Table, metric: Accuracy | Skipped | None) -> str:
    if metric is None:
        return "—"
    text = rate_with_counts(table, metric, lambda m: m.correct)
    if isinstance(metric, Skipped):
        return text
    n_total = metric.n_total
    if n_total is not None and n_total != metric.n and metric.accuracy_all is not None:
        counts = fmt_count(metric.correct, n_total)
        text += f"; all: {fmt_rate(metric.accuracy_all)} ({counts})"
    return text


ACCURACY: Family[AccuracyVsGold] = Family(
    key="accuracy_vs_gold",
    title="Accuracy against gold labels",
    question="How often does each judge pick the gold answer?",
    node=lambda report: report.accuracy_vs_gold,
    build=_accuracy_tables,
)
