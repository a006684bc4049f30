"""The overview section: records and failures per judge (not a report family)."""

from __future__ import annotations

import re

from jurybox.reporting.view.tables import (
    Json,
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
