"""report.html: one self-contained page (inline CSS, SVG figures as data URIs).

Rendered with a Jinja2 environment that autoescapes everything, so judge output, responses and
names can never inject markup; a Content-Security-Policy meta tag forbids every network load
and every script but the item explorer's own, allowed by its hash (``reporting/explorer``).
Figures are SVG inside ``<img>`` (``img-src data:``): an SVG shown as an image can run no script
and load nothing, and matplotlib escapes the text it writes into it. Failed records are listed
in an appendix, each with an anchor that the records table links to, raw text escaped and
truncated.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

from jurybox.analysis.model import Report
from jurybox.pipeline.failures import describe_kinds
from jurybox.records import Status
from jurybox.reporting.explorer import (
    ExplorerData,
    asset,
    encode_payload,
    items_href,
    script_hash,
)
from jurybox.reporting.explorer.paged import (
    PAGES_DIR,
    QUESTION_CHARS,
    PagedExplorer,
    page_file,
)
from jurybox.reporting.plots.specs import PlotSpec, RenderedPlot
from jurybox.reporting.render.failures import FailedRecord, FailureDigest
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
from jurybox.reporting.view.tables import Cell, Link, Section, Table

HTML_FILE = "report.html"
TEMPLATE = "report.html.j2"
EXCERPT_CHARS = 600
FULL_CHARS = 20_000
NOWRAP_CHARS = 24


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


# Template data: what report.html.j2 reads, one frozen dataclass per element.


@dataclass(frozen=True)
class HtmlCell:
    text: str
    href: str | None
    cls: str


@dataclass(frozen=True)
class HtmlTable:
    id: str
    title: str
    columns: list[str]
    numeric: list[bool]
    rows: list[list[HtmlCell]]
    notes: list[str]


@dataclass(frozen=True)
class HtmlPlot:
    name: str
    title: str
    status: str
    note: str | None
    caption: str | None
    filename: str
    data_uri: str
    width: int
    height: int
    svg_filename: str = ""
    left_out: str | None = None
    sampled: str | None = None


@dataclass(frozen=True)
class PlotRow:
    """One line of the plot index: a drawn figure (with its anchor) or a plot not drawn."""

    title: str
    anchor: str | None
    files: list[str]
    status: str
    note: str


@dataclass(frozen=True)
class HtmlSection:
    id: str
    title: str
    question: str
    status: str
    reason: str | None
    notes: list[str]
    tables: list[HtmlTable]
    skipped_parts: list[tuple[str, str]]
    plot_items: list[HtmlPlot]
    plot_skips: list[str] = field(default_factory=list)  # "title: why" of plots not drawn


@dataclass(frozen=True)
class Chip:
    """A short "name: value" label (a judge's level, a figure at a glance)."""

    name: str
    level: str


@dataclass(frozen=True)
class HtmlVerdict:
    level: str
    title: str
    line: str
    reasons: list[str]
    judges: list[Chip]


@dataclass(frozen=True)
class Glance:
    value: str
    label: str
    href: str | None = None  # the explorer's view of these items


@dataclass(frozen=True)
class HtmlFailure:
    anchor: str
    line: int
    key: str
    status: str
    kind: str | None
    order: str | None
    error: str | None
    excerpt: str | None
    truncated: bool
    full: str | None
    full_truncated: bool
    length: int


@dataclass(frozen=True)
class FailureGroup:
    judge: str
    slug: str
    records: list[HtmlFailure]
    total: int  # every failed record of the judge, listed or not
    by_status: str
    by_kind: str  # "connection refused 12, HTTP 500 2": what failed, most actionable first
    explorer_href: str


@dataclass(frozen=True)
class HtmlFailures:
    total: int
    omitted: int
    excerpt_chars: int
    full_chars: int
    groups: list[FailureGroup]
    side_file: str | None = None


def _cell(value: Cell, column: str, numeric: bool) -> HtmlCell:
    text = str(value)
    classes = ["num"] if numeric else []
    if len(text) <= NOWRAP_CHARS:
        classes.append("nw")  # short labels ("judge-openai", "category: math") stay whole
    if column == "Status" and text in ("fail", "warn", "pass", "skipped"):
        classes.append(f"status-{text}")
    href = value.href if isinstance(value, Link) else None
    return HtmlCell(text, href, " ".join(classes))


def _table(table: Table) -> HtmlTable:
    """Template data of a table; a column is right-aligned when every cell in it is a number."""
    columns = list(table.columns)
    numeric = table.numeric_columns()
    rows = [
        [_cell(v, columns[i], numeric[i]) for i, v in enumerate(row) if i < len(columns)]
        for row in table.rows
    ]
    return HtmlTable(table.id, table.title, columns, numeric, rows, table.notes)


def _plot(rendered: RenderedPlot) -> HtmlPlot:
    width, height = rendered.size
    spec = rendered.spec
    encoded = base64.b64encode(rendered.svg.encode("utf-8")).decode("ascii")
    return HtmlPlot(
        name=spec.name,
        title=spec.title,
        status=spec.status,
        note=spec.note,
        caption=spec.caption,
        filename=spec.filename,
        data_uri=f"data:image/svg+xml;base64,{encoded}",
        width=width,
        height=height,
        svg_filename=spec.svg_filename,
        left_out=spec.left_out,
        sampled=spec.sampled,
    )


def _plot_rows(drawn: Sequence[HtmlPlot], skipped: Sequence[PlotSpec]) -> list[PlotRow]:
    rows = [
        PlotRow(
            p.title,
            f"plot-{p.name}",
            [f"plots/{p.filename}", f"plots/{p.svg_filename}"],
            p.status.replace("_", " "),
            " ".join(n for n in (p.note, p.left_out, p.sampled) if n),
        )
        for p in drawn
    ]
    rows += [PlotRow(s.title, None, [], "not drawn", s.note or "") for s in skipped]
    return rows


def _section(
    section: Section, plots: Mapping[str, HtmlPlot], skipped: Mapping[str, PlotSpec]
) -> HtmlSection:
    return HtmlSection(
        id=section.id,
        title=section.title,
        question=section.question,
        status=section.status,
        reason=section.reason,
        notes=section.notes,
        tables=[_table(t) for t in section.tables],
        skipped_parts=section.subsections_skipped,
        plot_items=[plots[name] for name in section.plots if name in plots],
        plot_skips=[
            f"{skipped[name].title}: {skipped[name].note}"
            for name in section.plots
            if name in skipped
        ],
    )


def _verdict(report: Report) -> HtmlVerdict:
    verdict = report.verdict
    level = verdict.level
    judges = [Chip(name, entry.level.replace("_", " ")) for name, entry in verdict.judges.items()]
    return HtmlVerdict(
        level, LEVEL_TITLES.get(level, level), verdict.line, list(verdict.reasons), judges
    )


def _glance(report: Report) -> list[Glance]:
    summary = report.summary
    return [
        Glance(fmt_num(summary.n_records), "records"),
        Glance(fmt_num(summary.n_ok), "judgments in the metrics"),
        Glance(
            fmt_num(summary.excluded.total),
            "excluded (failed or fallback)",
            items_href(filter="failed") if summary.excluded.total else None,
        ),
        Glance(fmt_num(len(summary.judges)), "judges"),
        Glance(fmt_num(summary.n_items), "items", items_href()),
        Glance(", ".join(summary.modes) or "—", "mode"),
    ]


@dataclass(frozen=True)
class HtmlExplorer:
    """The item explorer: its data block, its script and the CSP source allowing it."""

    n_items: int
    judges: list[str]
    filters: list[tuple[str, str]]
    label_name: str
    payload: str
    encoding: str
    script: str
    script_hash: str
    css: str
    pages: HtmlPages | None = None  # past PAGED_OVER items: the rows are in side files


@dataclass(frozen=True)
class HtmlPages:
    """The explorer's side files: how many, of how many items each, and where."""

    count: int
    size: int
    folder: str
    first: str
    last: str
    question_chars: int


FILTER_TITLES = {
    "flipped": "the verdict changed with the presentation order",
    "wrong": "a judgment missed the gold or human label (a failed one counts)",
    "disagree": "the judges' verdicts differ (a flip between orders is a tie)",
    "failed": "a judgment failed or fell back to a holistic score",
}


def _explorer(explorer: ExplorerData | PagedExplorer | None) -> HtmlExplorer:
    script = asset("explorer.js")
    if isinstance(explorer, PagedExplorer):  # its index, encoded where its pages were written
        payload = explorer.payload
    else:
        payload = encode_payload(explorer.to_json() if explorer is not None else None)
    n_items = 0
    if isinstance(explorer, ExplorerData):
        n_items = len(explorer.rows)
    elif explorer is not None:
        n_items = explorer.n_items
    return HtmlExplorer(
        n_items=n_items,
        judges=list(explorer.judges) if explorer is not None else [],
        filters=list(FILTER_TITLES.items()),
        label_name={"gold": "gold label", "human": "human label"}.get(
            explorer.label_kind if explorer is not None else "", "label (none given)"
        ),
        payload=payload.text,
        encoding=payload.encoding,
        script=script,
        script_hash=script_hash(script),
        css=asset("explorer.css"),
        pages=_pages(explorer) if isinstance(explorer, PagedExplorer) else None,
    )


def _pages(explorer: PagedExplorer) -> HtmlPages:
    return HtmlPages(
        count=explorer.n_pages,
        size=explorer.page_items,
        folder=PAGES_DIR,
        first=page_file(1),
        last=page_file(explorer.n_pages),
        question_chars=QUESTION_CHARS,
    )


def _failure_entry(failed: FailedRecord) -> HtmlFailure:
    raw = failed.raw_response
    status = failed.status
    if status == Status.OK.value and failed.holistic_fallback:
        status = "ok (holistic fallback: excluded from score metrics)"
    return HtmlFailure(
        anchor=f"rec-{failed.line}",
        line=failed.line,
        key=failed.key,
        status=status,
        kind=failed.kind,
        order=failed.order,
        error=failed.error,
        excerpt=None if raw is None else raw[:EXCERPT_CHARS],
        truncated=raw is not None and len(raw) > EXCERPT_CHARS,
        full=None if raw is None else raw[:FULL_CHARS],
        full_truncated=raw is not None and len(raw) > FULL_CHARS,
        length=0 if raw is None else len(raw),
    )


def _failures(failed: Sequence[FailedRecord] | FailureDigest) -> HtmlFailures:
    digest = failed if isinstance(failed, FailureDigest) else FailureDigest.of(failed)
    groups: dict[str, list[HtmlFailure]] = {}
    for entry in digest.listed:
        groups.setdefault(entry.judge, []).append(_failure_entry(entry))
    return HtmlFailures(
        total=digest.total,
        omitted=max(digest.total - len(digest.listed), 0),
        excerpt_chars=EXCERPT_CHARS,
        full_chars=FULL_CHARS,
        side_file=digest.side_file,
        groups=[
            FailureGroup(
                judge=judge,
                slug=slug(judge),
                records=groups.get(judge, []),
                total=sum(counts.values()),
                by_status=", ".join(f"{k} {v}" for k, v in counts.items()),
                by_kind=describe_kinds(digest.kinds.get(judge, {})),
                explorer_href=items_href(judge=judge, filter="failed"),
            )
            for judge, counts in sorted(digest.by_judge.items())
        ],
    )


def render_html(
    report: Report | Mapping[str, Any],
    *,
    plots: Sequence[RenderedPlot] = (),
    skipped_plots: Sequence[PlotSpec] = (),
    failed: Sequence[FailedRecord] | FailureDigest = (),
    source: str = "judgments.jsonl",
    explorer: ExplorerData | PagedExplorer | None = None,
) -> str:
    """The whole report.html text; ``explorer`` fills the item explorer (empty without);
    ``skipped_plots``: plots that do not apply (one line each in their section, no figure)."""
    report = as_report(report)
    by_name = {p.spec.name: _plot(p) for p in plots}
    skipped = {spec.name: spec for spec in skipped_plots}
    sections = [_section(section, by_name, skipped) for section in build_sections(report)]
    return _template().render(
        source=source,
        version=report.generated_by.version,
        schema_version=report.schema_version,
        verdict=_verdict(report),
        glance=_glance(report),
        checks_table=_table(verdict_table(report)),
        judges_table=_table(judge_verdict_table(report)),
        sections=sections,
        plot_rows=_plot_rows(list(by_name.values()), skipped_plots),
        plot_policy=PLOT_POLICY,
        failures=_failures(failed),
        rounding_note=ROUNDING_NOTE,
        explorer=_explorer(explorer),
    )
