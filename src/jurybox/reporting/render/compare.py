"""compare.json, compare.md and compare.html for a ``CompareReport``, written atomically.

The HTML is one offline page rendered by the same autoescaping Jinja2 environment as
report.html, under a Content-Security-Policy that forbids every script and network load; the
Markdown escapes every user-supplied string (judge names, item ids, reasons).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from jurybox.analysis.model.compare import CompareReport
from jurybox.io.atomic import write_text_atomic
from jurybox.reporting.render.html import _environment, _table
from jurybox.reporting.render.markdown import render_table
from jurybox.reporting.view.compare import build_compare_sections
from jurybox.reporting.view.format import ROUNDING_NOTE
from jurybox.reporting.view.markdown_escape import escape_markdown

COMPARE_JSON, COMPARE_MD, COMPARE_HTML = "compare.json", "compare.md", "compare.html"
TEMPLATE = "compare.html.j2"
ROUNDING = ROUNDING_NOTE.replace("analysis_report.json", COMPARE_JSON)


@dataclass(frozen=True)
class ComparePaths:
    json: Path
    markdown: Path
    html: Path


def _title(report: CompareReport) -> str:
    return " vs ".join(run.label for run in report.runs)


def render_compare_markdown(report: CompareReport) -> str:
    lines = [f"# jurybox compare: {escape_markdown(_title(report))}", ""]
    for section in build_compare_sections(report):
        lines += [
            f"## {escape_markdown(section.title)}",
            "",
            f"_{escape_markdown(section.question)}_",
            "",
        ]
        lines += [f"- {escape_markdown(note)}" for note in section.notes]
        if section.notes:
            lines.append("")
        for table in section.tables:
            lines += render_table(table)
    lines += [ROUNDING, ""]
    return "\n".join(lines)


def render_compare_html(report: CompareReport) -> str:
    text = resources.files("jurybox.reporting.render").joinpath(TEMPLATE).read_text("utf-8")
    sections = [
        {
            "id": section.id,
            "title": section.title,
            "question": section.question,
            "notes": section.notes,
            "tables": [_table(table) for table in section.tables],
        }
        for section in build_compare_sections(report)
    ]
    return (
        _environment()
        .from_string(text)
        .render(
            title=_title(report),
            version=report.generated_by.version,
            schema_version=report.schema_version,
            sections=sections,
            rounding_note=ROUNDING,
        )
    )


def write_compare(report: CompareReport, out_dir: Path) -> ComparePaths:
    """All three files into ``out_dir`` (created); each replaces its old copy atomically."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    return ComparePaths(
        json=write_text_atomic(out_dir / COMPARE_JSON, data),
        markdown=write_text_atomic(out_dir / COMPARE_MD, render_compare_markdown(report)),
        html=write_text_atomic(out_dir / COMPARE_HTML, render_compare_html(report)),
    )
