"""summary_tables.md: publication-ready Markdown tables of the report.

The tables are the ones report.html shows (``sections.build_sections``); numbers are rounded by
``view.format`` as ``ROUNDING_NOTE`` states at the top of the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jurybox.analysis.model import Report
from jurybox.reporting.plots.common import JUDGE_CRITERION, MAX_JUDGES
from jurybox.reporting.plots.specs import PlotSpec
from jurybox.reporting.sections import (
    LEVEL_TITLES,
    build_sections,
    first_screen,
    judge_verdict_table,
    verdict_table,
)
from jurybox.reporting.view.format import ROUNDING_NOTE
from jurybox.reporting.view.markdown_escape import escape_markdown, safe_link_target
from jurybox.reporting.view.report import as_report
from jurybox.reporting.view.tables import Section, Table

MARKDOWN_FILE = "summary_tables.md"


def _escape(text: str) -> str:
    # Judge names, metadata and reasons come from user files: inert text, never HTML or links.
    return escape_markdown(str(text).strip())


def render_table(table: Table, level: int = 3) -> list[str]:
    """One Markdown table with its title and notes."""
    lines = [f"{'#' * level} {table.title}", ""]
    if not table.rows:
        return [*lines, "_No rows._", ""]
    lines.append("| " + " | ".join(_escape(c) for c in table.columns) + " |")
    numeric = table.numeric_columns()
    lines.append("|" + "|".join("---:" if n else ":---" for n in numeric) + "|")
    for row in table.rows:
        lines.append("| " + " | ".join(_escape(str(c)) for c in row) + " |")
    lines.append("")
    lines.extend(f"- {_escape(n)}" for n in table.notes)
    if table.notes:
        lines.append("")
    return lines


def render_section(section: Section, plots: Mapping[str, PlotSpec]) -> list[str]:
    lines = [f"## {section.title}", "", f"_{section.question}_", ""]
    if section.status == "skipped":
        return [*lines, f"**Not computed:** {_escape(section.reason or '')}", ""]
    lines.extend(f"- {_escape(n)}" for n in section.notes)
    if section.notes:
        lines.append("")
    for table in section.tables:
        lines.extend(render_table(table))
    if section.subsections_skipped:
        lines.append("Not computed here:")
        lines.extend(f"- {name}: {_escape(why)}" for name, why in section.subsections_skipped)
        lines.append("")
    lines.extend(_section_plots(section, plots))
    return lines


def _section_plots(section: Section, plots: Mapping[str, PlotSpec]) -> list[str]:
    """Each of the section's figures (PNG shown, SVG linked), or one line for a plot that does
    not apply."""
    lines = []
    for spec in (plots[name] for name in section.plots if name in plots):
        if not spec.drawn:
            lines.append(f"- Plot not drawn, {_escape(spec.title)}: {_escape(spec.note or '')}")
            continue
        notes = " ".join(_escape(n) for n in (spec.note, spec.left_out, spec.sampled) if n)
        png = safe_link_target(f"plots/{spec.filename}") or ""
        svg = safe_link_target(f"plots/{spec.svg_filename}") or ""
        lines.append(
            f"![{_escape(spec.title)}]({png}) ([SVG]({svg})){' ' + notes if notes else ''}"
        )
    return [*lines, ""] if lines else []


def render_verdict(report: Report) -> list[str]:
    """The per-judge answer first (level, reason, figures both ways), then the checks."""
    verdict = report.verdict
    level = verdict.level
    screen = first_screen(report)
    lines = [
        "## Verdict: can these judges be trusted for this comparison?",
        "",
        _escape(screen.compared),
        "",
        f"**{_escape(verdict.line)}.** {LEVEL_TITLES.get(level, level)}.",
        "",
        f"**Result:** {_escape(' · '.join(screen.result))}",
        "",
    ]
    if screen.gaps:
        lines.extend(f"- **Mind the data:** {_escape(gap)}" for gap in screen.gaps)
        if screen.resume:
            lines.append(f"- Resume: {_escape(screen.resume)}")
        lines.append("")
    for judge in screen.judges:
        also = f". Also: {'; '.join(judge.also)}" if judge.also else ""
        said = judge.level.replace("_", " ")
        lines.append(f"- **{_escape(judge.judge)}** ({said}): {_escape(judge.finding + also)}.")
    lines.append("")
    lines.extend(render_table(judge_verdict_table(report)))
    if verdict.reasons:
        lines.append("Checks not passed, in the analysis's words: failures, then warnings:")
        lines.append("")
        lines.extend(f"- {_escape(reason)}" for reason in verdict.reasons)
        lines.append("")
    lines.extend(render_table(verdict_table(report)))
    return lines


def plot_index(plots: Iterable[PlotSpec]) -> list[str]:
    specs = list(plots)
    if not specs:
        return []
    lines = ["## Plots", "", "| Plot | Files | Status | Note |", "|:---|:---|:---|:---|"]
    for spec in specs:
        files = f"plots/{spec.filename}, plots/{spec.svg_filename}" if spec.drawn else "—"
        status = spec.status if spec.drawn else "not drawn (not applicable)"
        note = " ".join(n for n in (spec.note, spec.left_out, spec.sampled) if n)
        lines.append(f"| {_escape(spec.title)} | {files} | {status} | {_escape(note)} |")
    lines += ["", "- " + _escape(PLOT_POLICY), ""]
    return lines


PLOT_POLICY = (
    "Plot policy: a plot is drawn from the data that exists, as PNG and SVG; when its primary "
    "data is absent but a substitute exists (e.g. verdict shares instead of scores for pairwise "
    "data) it is marked 'fallback'; when nothing applies it is not drawn and its section says "
    "why in one line. Axes span the instrument's range (proportions 0 to 1, κ −1 to 1, scores "
    f"the rubric's scale); with more than {MAX_JUDGES} judges a figure shows {MAX_JUDGES} "
    f"({JUDGE_CRITERION}) and says how many it left out."
)


def render_markdown(
    report: Report | Mapping[str, Any],
    *,
    plots: Sequence[PlotSpec] = (),
    source: str | None = None,
) -> str:
    """The whole summary_tables.md text."""
    report = as_report(report)
    lines = [
        "# jurybox analysis: summary tables",
        "",
        f"Source: {_escape(source or 'judgments')} · jurybox {report.generated_by.version} · "
        f"report schema {report.schema_version}",
        "",
        f"_{ROUNDING_NOTE}_",
        "",
    ]
    lines.extend(render_verdict(report))
    by_name = {spec.name: spec for spec in plots}
    for section in build_sections(report):
        lines.extend(render_section(section, by_name))
    lines.extend(plot_index(plots))
    return "\n".join(lines).rstrip() + "\n"
