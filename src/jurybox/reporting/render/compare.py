"""compare.json, compare.md and compare.html for a ``CompareReport``, written atomically.

The HTML is one offline page rendered by the same autoescaping Jinja2 environment as
report.html, under a Content-Security-Policy that forbids every script and network load; the
Markdown escapes every user-supplied string (judge names, item ids, reasons). Both open on the
answer (``view.compare_answer``): per judge, did B do better, both runs' trust levels, and what
changed between the configs. Links to a run's report are relative to the folder the page is
written in (``page_dir``), so they open from wherever the page and the runs sit.
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
from jurybox.reporting.view.compare_answer import AnswerView, RunLinks, build_answers
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


def _answer_markdown(answer: AnswerView) -> list[str]:
    lines = [f"## {escape_markdown(answer.title)}", "", f"**{escape_markdown(answer.answer)}**", ""]
    for line in answer.lines:
        said = f"{line.judge}: {line.answer}"
        lines.append(f"- **{escape_markdown(said)}**: {escape_markdown(line.figure)}; ")
        lines[-1] += escape_markdown(line.trust)
    reports = [f"[{text}]({href})" for text, href in answer.reports if href is not None]
    lines += ["", *([" · ".join(reports), ""] if reports else [])]
    lines += [f"- {escape_markdown(note)}" for note in answer.notes]
    lines += [""] * bool(answer.notes) + render_table(answer.changes)
    for setting, diff in answer.diffs:
        lines += [f"`{setting}`:", "", "```diff", *diff, "```", ""]
    return lines


def render_compare_markdown(report: CompareReport, page_dir: Path | None = None) -> str:
    """compare.md; ``page_dir``: the folder it is written in (for links to run reports)."""
    links = RunLinks.of(report, page_dir)
    lines = [f"# jurybox compare: {escape_markdown(_title(report))}", ""]
    for answer in build_answers(report, links):
        lines += _answer_markdown(answer)
    for section in build_compare_sections(report, links):
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


def render_compare_html(report: CompareReport, page_dir: Path | None = None) -> str:
    """compare.html; ``page_dir``: the folder it is written in (for links to run reports)."""
    text = resources.files("jurybox.reporting.render").joinpath(TEMPLATE).read_text("utf-8")
    links = RunLinks.of(report, page_dir)
    answers = [
        {**vars(answer), "changes": _table(answer.changes)}
        for answer in build_answers(report, links)
    ]
    sections = [
        {
            "id": section.id,
            "title": section.title,
            "question": section.question,
            "notes": section.notes,
            "tables": [_table(table) for table in section.tables],
        }
        for section in build_compare_sections(report, links)
    ]
    return (
        _environment()
        .from_string(text)
        .render(
            title=_title(report),
            version=report.generated_by.version,
            schema_version=report.schema_version,
            answers=answers,
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
        markdown=write_text_atomic(out_dir / COMPARE_MD, render_compare_markdown(report, out_dir)),
        html=write_text_atomic(out_dir / COMPARE_HTML, render_compare_html(report, out_dir)),
    )
