"""The page ``jurybox view`` writes: every run and comparison under a folder, and leaderboards.

One offline page: rendered by the same autoescaping Jinja2 environment as report.html, its CSS
inline, one inline script (column sorting) allowed by its hash in a Content-Security-Policy that
forbids every other script and every load; links are relative to where the page is written, so
they resolve as long as the page stays beside the runs it lists.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from jurybox.analysis.overview import ComparisonFound, Leaderboard, Overview, RunFound
from jurybox.reporting.explorer import script_hash
from jurybox.reporting.render.html import _environment
from jurybox.reporting.sections.first_screen import result_lines
from jurybox.reporting.view.format import MISSING, few_items, fmt_num, fmt_rate, fmt_value_ci

TEMPLATE = "view.html.j2"
SCRIPT = "view.js"
GENERATOR = '<meta name="generator" content="jurybox view">'
_HEAD_BYTES = 2048


@dataclass(frozen=True)
class ViewCell:
    """One cell: its text (a link where ``href``), what it sorts on, the lines under it (a
    command, a note), the links after it and the judges' levels as chips."""

    text: str
    sort: str | None = None
    href: str | None = None
    cls: str = ""
    lines: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    chips: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ViewTable:
    id: str
    columns: tuple[str, ...]
    rows: list[list[ViewCell]]
    notes: list[str] = field(default_factory=list)
    title: str = ""


def is_view_page(path: Path) -> bool:
    """Whether ``path`` is a page this command wrote (the only file it replaces)."""
    with path.open("rb") as handle:
        return GENERATOR.encode() in handle.read(_HEAD_BYTES)


def render_view(overview: Overview, page_dir: Path) -> str:
    """The page, its links relative to ``page_dir`` (where it is written)."""
    script = resources.files(__package__).joinpath(SCRIPT).read_text(encoding="utf-8")
    template = resources.files(__package__).joinpath(TEMPLATE).read_text(encoding="utf-8")
    links = _Links(page_dir, overview.folder)
    return (
        _environment()
        .from_string(template)
        .render(
            folder=str(overview.folder),
            generator=GENERATOR,
            runs=runs_table(overview.runs, links),
            comparisons=comparisons_table(overview.comparisons, links),
            boards=[
                board_table(board, index, links)
                for index, board in enumerate(overview.leaderboards, start=1)
            ],
            script=script,
            script_hash=script_hash(script),
        )
    )


@dataclass(frozen=True)
class _Links:
    """Hrefs from the page's folder, and names relative to the folder surveyed."""

    page_dir: Path
    root: Path

    def href(self, target: Path) -> str:
        relative = os.path.relpath(target.resolve(), self.page_dir.resolve())
        return quote(Path(relative).as_posix())

    def name(self, folder: Path) -> str:
        try:
            return folder.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(folder)


# --- runs ------------------------------------------------------------------------------------

RUN_COLUMNS = ("Started (UTC)", "Run", "Status", "Mode", "Items", "Judges", "Result")


def runs_table(runs: Sequence[RunFound], links: _Links) -> ViewTable:
    """Newest first (runs without a manifest last), one row per run."""
    runs = [
        *sorted((run for run in runs if _stamp(run)), key=_stamp, reverse=True),
        *(run for run in runs if not _stamp(run)),
    ]
    rows = [
        [
            _started(run),
            _run_cell(run, links),
            _status(run),
            _mode(run),
            _items(run),
            _judges(run),
            _result(run),
        ]
        for run in runs
    ]
    return ViewTable("runs", RUN_COLUMNS, rows)


def _stamp(run: RunFound) -> str:
    """When the run started (ISO 8601, UTC), or "" without a manifest."""
    return (run.manifest.started_at if run.manifest is not None else None) or ""


def _started(run: RunFound) -> ViewCell:
    stamp = _stamp(run)
    if not stamp:
        return ViewCell(MISSING, sort="")
    return ViewCell(stamp[:16].replace("T", " "), sort=stamp)


def _run_cell(run: RunFound, links: _Links) -> ViewCell:
    name = links.name(run.folder)
    reports = run.reports
    if not reports:
        return ViewCell(name, sort=name, cls="name")
    first, *others = reports
    more = tuple((f"also {links.name(r.html.parent)}", links.href(r.html)) for r in others)
    lines = () if run.manifest is not None else ("a report outside any run folder",)
    return ViewCell(
        name, sort=name, cls="name", href=links.href(first.html), links=more, lines=lines
    )


def _status(run: RunFound) -> ViewCell:
    manifest = run.manifest
    if manifest is None:
        return ViewCell(MISSING, sort="")
    # A run killed without a word left its manifest's count at 0: its report counted the
    # records it read (the larger is the later).
    analysed = run.report.report.summary.run if run.report is not None else None
    records = manifest.records
    if analysed is not None and analysed.units_done is not None:
        records = max(records or 0, analysed.units_done)
    done = f"{fmt_num(records)} of {fmt_num(manifest.units_planned)} judgments"
    said = {
        "complete": ("complete", ()),
        "interrupted": (f"interrupted — {done}", ("stopped before the end; resume:",)),
        "failed": (f"failed — {done}", ("stopped by an error; resume:",)),
        "running": (
            f"running — {done}",
            ("or killed without a word: if no jurybox process runs it, resume:",),
        ),
    }
    text, lines = said.get(manifest.status, (manifest.status, ()))
    code = (run.resume,) if run.resume is not None else ()
    cls = "" if manifest.status == "complete" else "warn"
    return ViewCell(text, sort=manifest.status, cls=cls, lines=lines, code=code)


def _mode(run: RunFound) -> ViewCell:
    if run.report is not None:
        return ViewCell(", ".join(run.report.report.summary.modes) or MISSING)
    config = run.manifest.config if run.manifest is not None else None
    return ViewCell(config.task.mode if config is not None else MISSING)


def _items(run: RunFound) -> ViewCell:
    if run.report is not None:
        count: int | None = run.report.report.summary.n_items
    else:
        dataset = run.manifest.dataset if run.manifest is not None else None
        count = dataset.items if dataset is not None else None
    return ViewCell(fmt_num(count), sort=str(count) if count is not None else "", cls="num")


def _judges(run: RunFound) -> ViewCell:
    if run.report is not None:
        verdicts = run.report.report.verdict.judges
        chips = tuple(
            (f"{name}: {v.level.replace('_', ' ')}", v.level) for name, v in verdicts.items()
        )
        trusted = sum(v.level == "trusted" for v in verdicts.values())
        return ViewCell("", sort=str(trusted), chips=chips)
    config = run.manifest.config if run.manifest is not None else None
    names = tuple(config.judges) if config is not None else ()
    return ViewCell("", sort="", chips=tuple((name, "none") for name in names))


def _result(run: RunFound) -> ViewCell:
    if run.report is None:
        if not run.analyse:
            return ViewCell("not readable", sort="", lines=run.problems)
        return ViewCell(
            "not analysed",
            sort="",
            cls="muted",
            lines=("analyse it with:", *run.problems),
            code=(run.analyse,),
        )
    report = run.report.report
    lines = tuple(result_lines(report))  # as the report's first screen gives it
    return ViewCell(report.verdict.line, sort=report.verdict.line, lines=lines + run.problems)


# --- comparisons ----------------------------------------------------------------------------

COMPARISON_COLUMNS = ("Written (UTC)", "Comparison", "Runs", "Items", "Result")


def comparisons_table(found: Sequence[ComparisonFound], links: _Links) -> ViewTable:
    rows = []
    for comparison in found:
        report = comparison.report
        shared = [c.n_shared_items for c in report.comparisons]
        stamp = comparison.written.isoformat(timespec="seconds")
        name = links.name(comparison.folder)
        rows.append(
            [
                ViewCell(stamp[:16].replace("T", " "), sort=stamp),
                ViewCell(name, sort=name, href=links.href(comparison.html)),
                ViewCell(
                    " vs ".join(run.label for run in report.runs),
                    lines=tuple(f"{run.label}: {run.source}" for run in report.runs),
                ),
                ViewCell(fmt_num(min(shared)) if shared else MISSING, cls="num"),
                ViewCell("", lines=tuple(_comparison_lines(comparison))),
            ]
        )
    return ViewTable("comparisons", COMPARISON_COLUMNS, rows)


def _comparison_lines(comparison: ComparisonFound, most: int = 4) -> list[str]:
    """Per matched judge: its accuracy in both runs and the change, else the verdicts that
    changed."""
    lines = []
    for compared in comparison.report.comparisons:
        for judge in compared.judges:
            verdicts = judge.verdicts
            if verdicts is None:
                continue
            accuracy = verdicts.accuracy
            head = f"{compared.run_b} vs {compared.run_a}, {judge.judge_a}: "
            if accuracy is not None:
                change = accuracy.difference
                lines.append(
                    head + f"accuracy {fmt_rate(change.p_x)} → {fmt_rate(change.p_y)}, change "
                    f"{fmt_value_ci(change.value, change.ci_low, change.ci_high)}"
                    + few_items(accuracy.n_items)
                )
            else:
                lines.append(head + f"{verdicts.n_changed} of {verdicts.n_units} verdicts changed")
    return lines[:most] + (
        [f"… {len(lines) - most} more in the comparison"] if len(lines) > most else []
    )


# --- leaderboards ---------------------------------------------------------------------------


def board_table(board: Leaderboard, index: int, links: _Links) -> ViewTable:
    columns = (
        "Model",
        "Run",
        *(f"{judge}: win rate over {board.baseline}" for judge in board.judges),
    )
    rows = []
    for row in board.rows:
        cells = [
            ViewCell(row.model, sort=row.model),
            ViewCell(links.name(row.run.folder), href=links.href(row.run.reports[0].html)),
        ]
        for judge in board.judges:
            rate = row.win_rates.get(judge)
            if rate is not None:
                text = fmt_value_ci(rate.estimate, rate.ci_low, rate.ci_high)
                cells.append(ViewCell(text, sort=repr(rate.estimate), cls="num"))
            else:
                level = row.levels.get(judge)
                shown = f"{level.replace('_', ' ')}: not shown" if level else MISSING
                cells.append(ViewCell(shown, sort="", cls="muted"))
        rows.append(cells)
    title = f"Against {board.baseline}, on the same {board.n_items} items"
    return ViewTable(f"board-{index}", columns, rows, _board_notes(board), title)


def _board_notes(board: Leaderboard) -> list[str]:
    ordered = (
        f"Rows are ordered by {board.ordered_by}'s win rate, the judge trusted on most rows."
        if board.ordered_by is not None
        else "No judge is trusted on any row: no win rate is shown, nothing is ranked."
    )
    return [
        f"Each row is one run that compared the model with {board.baseline} on these same "
        "items. A cell is the judge's win rate of the model over "
        f"{board.baseline} (ties count half; {board.confidence:.0%} Wilson interval) where that "
        "run's own report trusts the judge; where it does not, only its level is shown.",
        "Win rates are not pooled across judges or runs, and rows whose intervals overlap are "
        "not ranked against each other: the order is not a verdict. " + ordered,
    ]
