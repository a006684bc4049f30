"""The overview section: records and failures per judge (not a report family)."""

from __future__ import annotations

import re

from jurybox.analysis.model import Report
from jurybox.analysis.model.summary import RunCost, Summary
from jurybox.pricing import format_cost, format_usd
from jurybox.reporting.view.tables import (
    Link,
    Section,
    Table,
    fmt_num,
    fmt_rate,
    fmt_text,
)


def slug(text: str) -> str:
    """An HTML id fragment for a judge or status name."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


# How the overview says a batch saving was priced (RunCost.batch_saving_method).
_SAVING_PRICED = {
    "synchronous prices": "priced at the run's synchronous prices",
    "assumed 50% discount": "assuming the vendors' 50% batch discount: no manifest gave the "
    "judges' prices",
    "mixed": "at the run's synchronous prices where its manifest gave them, else assuming the "
    "vendors' 50% batch discount",
}


def failures_anchor(judge: str) -> str:
    return f"#failures-{slug(judge)}"


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


def overview_section(report: Report) -> Section:
    summary = report.summary
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
    for judge in summary.judges:
        info = summary.failures.get(judge.name)
        failed = info.n_failed if info else 0
        statuses = info.by_status if info else {}
        table.add(
            judge.name,
            fmt_text(judge.model),
            fmt_text(judge.vendor),
            fmt_num(judge.n_records),
            fmt_num(judge.n_ok),
            Link(str(failed), failures_anchor(judge.name)) if failed else "0",
            fmt_rate(info.failure_rate if info else None),
            fmt_rate(info.parse_failure_rate if info else None),
            ", ".join(f"{k} {v}" for k, v in statuses.items()) or "—",
        )
    section.notes.extend(_overview_notes(summary))
    if report.stopping is not None:  # a `jurybox run --until` run
        section.notes.extend(
            f"Stopped by --until {report.stopping.until}: {name} {judge.statement}."
            for name, judge in report.stopping.judges.items()
        )
    return section


def non_finite_line(summary: Summary) -> str | None:
    """Judge scores left out because they were no number (NaN, ±inf), counted and named."""
    bad = summary.non_finite_scores
    if bad is None:
        return None
    more = " ..." if bad.n_items > len(bad.items) else ""
    return (
        f"{bad.total} score(s) not finite (NaN or infinite) on {bad.n_items} item(s): "
        f"{', '.join(bad.items)}{more} (e.g. {bad.examples[0]})"
    )


def _overview_notes(summary: Summary) -> list[str]:
    excluded = summary.excluded
    listed = ", ".join(f"{k}: {v}" for k, v in excluded.by_status.items()) or "none"
    modes = ", ".join(summary.modes) or "—"
    arms = ", ".join(summary.arms) or "—"
    notes = [
        f"{summary.n_records} records, {summary.n_ok} ok, over "
        f"{summary.n_items} items; modes: {modes}.",
        f"Excluded from every metric: {excluded.total} record(s) (by status: {listed}; "
        f"holistic fallback, the judge ignored the rubric: {excluded.holistic_fallback})"
        + (f"; and {bad}." if (bad := non_finite_line(summary)) else "."),
        f"Arms: {arms} (control: {summary.control_arm or '—'}, treatment: "
        f"{summary.treatment_arm or '—'}).",
    ]
    labels = summary.human_labels.model_dump()
    if any(labels.values()):
        notes.append("Human labels: " + ", ".join(f"{k} {v}" for k, v in labels.items()) + ".")
    cost = summary.cost
    if cost is not None and (cost.n_priced or cost.unpriced_judges):
        notes.append(_cost_note(cost))
    if cost is not None and cost.n_batch_records:
        notes.append(
            f"Provider batches answered {cost.n_batch_records} records, synchronous calls "
            f"{cost.n_sync_records}; batch cost {format_usd(cost.batch_cost_usd)}, saving about "
            f"{format_usd(cost.batch_saving_usd)} against synchronous prices "
            f"({_SAVING_PRICED[cost.batch_saving_method or 'assumed 50% discount']})."
        )
    if summary.local_judge_used:
        notes.append(
            "The bundled local judge (SmolLM2-135M) was used: it is a weak judge, fit for "
            "demos only."
        )
    return notes


def _cost_note(cost: RunCost) -> str:
    """What the judgments cost, written as the run's summary writes it (``format_cost``)."""
    note = f"Cost: {format_cost(cost.cost_usd, cost.unpriced_judges)}"
    if cost.n_priced:
        note += f" over {cost.n_priced} priced records"
    if cost.unpriced_judges:
        note += (
            "; a judge is unpriced when neither the price table nor its price_* settings "
            "priced its model when it ran (docs/pricing.md)"
        )
    return note + "."
