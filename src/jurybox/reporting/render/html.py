"""report.html: one self-contained page (inline CSS, PNGs as base64 data URIs, no JavaScript).

Rendered with a Jinja2 environment that autoescapes everything, so judge output, responses and
names can never inject markup; a Content-Security-Policy meta tag forbids every network load
and every script. Failed records are listed in an appendix, each with an anchor that the
records table links to, raw text escaped and truncated.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2

from jurybox.analysis.model import Report
from jurybox.records import JudgeRecord, Status
from jurybox.reporting.plots.specs import RenderedPlot
from jurybox.reporting.render.markdown import PLOT_POLICY
from jurybox.reporting.sections import (
    LEVEL_TITLES,
    build_sections,
    judge_verdict_table,
    slug,
    verdict_table,
)
from jurybox.reporting.view.format import ROUNDING_NOTE, fmt_num
from jurybox.reporting.view.report import as_report
from jurybox.reporting.view.tables import Link, Table

HTML_FILE = "report.html"
TEMPLATE = "report.html.j2"
EXCERPT_CHARS = 600
FULL_CHARS = 20_000
MAX_FAILURES = 500
NOWRAP_CHARS = 24


@dataclass(frozen=True)
class FailedRecord:
    """A record excluded from the metrics and its 1-based line in judgments.jsonl."""

    line: int
    record: JudgeRecord


def failed_records(records: Iterable[JudgeRecord]) -> list[FailedRecord]:
    """Every record whose status is not ok, or that fell back to a holistic score."""
    return [
        FailedRecord(line, record)
        for line, record in enumerate(records, start=1)
        if record.status != Status.OK or record.holistic_fallback
    ]


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _template() -> jinja2.Template:
    text = (
        resources.files("jurybox.reporting.render").joinpath(TEMPLATE).read_text(encoding="utf-8")
    )
    return _environment().from_string(text)


def _cell(value: Any, column: str, numeric: bool) -> dict[str, Any]:
    text = str(value)
    classes = ["num"] if numeric else []
    if len(text) <= NOWRAP_CHARS:
        classes.append("nw")  # short labels ("judge-openai", "category: math") stay whole
    if column == "Status" and text in ("fail", "warn", "pass", "skipped"):
        classes.append(f"status-{text}")
    href = value.href if isinstance(value, Link) else None
    return {"text": text, "href": href, "cls": " ".join(classes)}


def _table(table: Table) -> dict[str, Any]:
    """Template data of a table; a column is right-aligned when every cell in it is a number."""
    columns = list(table.columns)
    numeric = table.numeric_columns()
    rows = [
        [_cell(v, columns[i], numeric[i]) for i, v in enumerate(row) if i < len(columns)]
        for row in table.rows
    ]
    return {
        "id": table.id,
        "title": table.title,
        "columns": columns,
        "numeric": numeric,
        "rows": rows,
        "notes": table.notes,
    }


def _plot(rendered: RenderedPlot) -> dict[str, Any]:
    width, height = rendered.size
    spec = rendered.spec
    encoded = base64.b64encode(rendered.png).decode("ascii")
    return {
        "name": spec.name,
        "title": spec.title,
        "status": spec.status,
        "note": spec.note,
        "caption": spec.caption,
        "filename": spec.filename,
        "data_uri": f"data:image/png;base64,{encoded}",
        "width": width,
        "height": height,
    }


def _verdict(report: Report) -> dict[str, Any]:
    verdict = report.verdict
    level = verdict.level
    untested = sorted({c.message for c in verdict.checks if c.status == "skipped"})
    judges = [
        {"name": name, "level": entry.level.replace("_", " ")}
        for name, entry in verdict.judges.items()
    ]
    reasons = list(verdict.reasons)
    if not reasons and verdict.answer:
        reasons = [verdict.answer]
    return {
        "level": level,
        "title": LEVEL_TITLES.get(level, level),
        "reasons": reasons,
        "untested": untested,
        "judges": judges,
    }


def _glance(report: Report) -> list[dict[str, str]]:
    summary = report.summary
    return [
        {"value": fmt_num(summary.n_records), "label": "records"},
        {"value": fmt_num(summary.n_ok), "label": "judgments in the metrics"},
        {"value": fmt_num(summary.excluded.total), "label": "excluded (failed or fallback)"},
        {"value": fmt_num(len(summary.judges)), "label": "judges"},
        {"value": fmt_num(summary.n_items), "label": "items"},
        {"value": ", ".join(summary.modes) or "—", "label": "mode"},
    ]


def _failure_entry(failed: FailedRecord) -> dict[str, Any]:
    record = failed.record
    raw = record.raw_response
    status = record.status.value
    if record.status == Status.OK and record.holistic_fallback:
        status = "ok (holistic fallback: excluded from score metrics)"
    return {
        "anchor": f"rec-{failed.line}",
        "line": failed.line,
        "key": record.key,
        "status": status,
        "order": record.presentation_order,
        "error": record.error,
        "excerpt": None if raw is None else raw[:EXCERPT_CHARS],
        "truncated": raw is not None and len(raw) > EXCERPT_CHARS,
        "full": None if raw is None else raw[:FULL_CHARS],
        "full_truncated": raw is not None and len(raw) > FULL_CHARS,
        "length": 0 if raw is None else len(raw),
    }


def _failures(failed: Sequence[FailedRecord]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = {}
    statuses: dict[str, dict[str, int]] = {}
    for entry in failed[:MAX_FAILURES]:
        judge = entry.record.judge_name
        groups.setdefault(judge, []).append(_failure_entry(entry))
        counts = statuses.setdefault(judge, {})
        counts[entry.record.status.value] = counts.get(entry.record.status.value, 0) + 1
    return {
        "total": len(failed),
        "omitted": max(len(failed) - MAX_FAILURES, 0),
        "excerpt_chars": EXCERPT_CHARS,
        "full_chars": FULL_CHARS,
        "groups": [
            {
                "judge": judge,
                "slug": slug(judge),
                "records": records,
                "by_status": ", ".join(f"{k} {v}" for k, v in statuses[judge].items()),
            }
            for judge, records in sorted(groups.items())
        ],
    }


def render_html(
    report: Report | Mapping[str, Any],
    *,
    plots: Sequence[RenderedPlot] = (),
    failed: Sequence[FailedRecord] = (),
    source: str = "judgments.jsonl",
) -> str:
    """The whole report.html text."""
    report = as_report(report)
    by_name = {p.spec.name: _plot(p) for p in plots}
    sections = []
    for section in build_sections(report):
        sections.append(
            {
                "id": section.id,
                "title": section.title,
                "question": section.question,
                "status": section.status,
                "reason": section.reason,
                "notes": section.notes,
                "tables": [_table(t) for t in section.tables],
                "skipped_parts": section.subsections_skipped,
                "plot_items": [by_name[name] for name in section.plots if name in by_name],
            }
        )
    return _template().render(
        source=source,
        version=report.generated_by.version,
        schema_version=report.schema_version,
        verdict=_verdict(report),
        glance=_glance(report),
        checks_table=_table(verdict_table(report)),
        judges_table=_table(judge_verdict_table(report)),
        sections=sections,
        plot_rows=list(by_name.values()),
        plot_policy=PLOT_POLICY,
        failures=_failures(failed),
        rounding_note=ROUNDING_NOTE,
    )
