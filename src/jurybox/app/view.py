"""``jurybox view DIR``: one offline page over every run and comparison under a folder.

Every folder under DIR is looked at once (plot and explorer-page folders and hidden ones are
skipped): a ``manifest.json`` a jurybox run wrote makes a run, an ``analysis_report.json`` a
report (of the run folder it sits in, else of judgments without a run: an import), a
``compare.json`` a comparison. Each file is read through its typed model (``RunManifest``,
``Report``, ``CompareReport``); a file that cannot be read is said on the page, never fatal.
Runs with a report that compared two arms are grouped into leaderboards by the item ids of
their datasets (``analysis.overview``).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError
from rich.console import Console

from jurybox.analysis.model import Report
from jurybox.analysis.model.compare import CompareReport
from jurybox.analysis.overview import (
    ArmModels,
    ComparisonFound,
    Overview,
    ReportFound,
    RunFound,
    leaderboards,
)
from jurybox.app.sources import run_items, run_sources
from jurybox.errors import InputError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.judgments import JUDGMENTS_FILE
from jurybox.io.targets import check_target
from jurybox.pipeline.manifest import MANIFEST_FILE, RunManifest, read_manifest
from jurybox.pipeline.options import RunOptions, recorded_options, resume_command
from jurybox.records import Item
from jurybox.reporting.render.compare import COMPARE_HTML, COMPARE_JSON
from jurybox.reporting.render.html import HTML_FILE
from jurybox.reporting.render.json_report import REPORT_FILE
from jurybox.reporting.render.view import is_view_page, render_view

VIEW_PAGE = "index.html"
# Folders that hold a report's own files, or nothing of jurybox's.
_SKIPPED = {"plots", "report_items", "node_modules", "__pycache__"}


def view_folder(folder: str | Path, *, out: str | Path | None = None, console: Console) -> Path:
    """Write the page over everything under ``folder`` to ``out`` (default
    ``folder/index.html``); an existing ``out`` is replaced only when it is such a page."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("no such folder", path=str(folder), field="DIR")
    page = Path(out) if out is not None else folder / VIEW_PAGE
    check_target(page, inputs=(), ours=is_view_page, what="a page jurybox view wrote")
    overview = survey(folder)
    write_text_atomic(page, render_view(overview, page.parent))
    analysed = sum(run.report is not None for run in overview.runs)
    console.print(
        f"{len(overview.runs)} runs ({analysed} analysed), {len(overview.comparisons)} "
        f"comparisons, {len(overview.leaderboards)} leaderboards: {page}",
        markup=False,
        soft_wrap=True,
    )
    return page


def survey(folder: Path) -> Overview:
    """Every run, report and comparison under ``folder``."""
    runs: list[Path] = []
    reports: list[Path] = []
    comparisons: list[Path] = []
    for here, folders, files in os.walk(folder):
        folders[:] = sorted(f for f in folders if f not in _SKIPPED and not f.startswith("."))
        where = Path(here)
        if MANIFEST_FILE in files:
            runs.append(where)
        if REPORT_FILE in files:
            reports.append(where)
        if COMPARE_JSON in files:
            comparisons.append(where)
    found = [_run(where, reports) for where in runs]
    owned = {report.html.parent for run in found if run is not None for report in run.reports}
    found += [_imported(where) for where in reports if where not in owned]
    kept = tuple(run for run in found if run is not None)
    compared = tuple(c for c in (_comparison(where) for where in comparisons) if c is not None)
    return Overview(folder, kept, compared, leaderboards(kept))


def _run(folder: Path, reports: list[Path]) -> RunFound | None:
    """The run in ``folder`` with the reports under it (``report`` first), or None when its
    manifest.json is another program's."""
    analyse = f"jurybox analyze {shlex.quote(str(folder))}"
    try:
        manifest = RunManifest.read(folder / MANIFEST_FILE)
    except InputError as exc:
        return RunFound(folder, None, (), analyse, problems=(str(exc),))
    if manifest is None:
        return None
    inside = [where for where in reports if where == folder or folder in where.parents]
    inside.sort(key=lambda where: (where.name != "report", str(where)))
    read = [_report(where) for where in inside]
    found = tuple(report for report in read if isinstance(report, ReportFound))
    problems = tuple(report for report in read if isinstance(report, str))
    resume = None if manifest.status == "complete" else _resume(folder)
    run = RunFound(folder, manifest, found, analyse, resume, problems=problems)
    return replace(run, models=_arm_models(run)) if found else run


def _imported(folder: Path) -> RunFound | None:
    """A report outside any run folder: of judgments without a run (an import)."""
    report = _report(folder)
    if isinstance(report, str):
        return RunFound(folder, None, (), "", problems=(report,))
    judgments = folder.parent / JUDGMENTS_FILE
    analyse = f"jurybox analyze {shlex.quote(str(judgments))}" if judgments.is_file() else ""
    return RunFound(folder, None, (report,), analyse)


def _report(folder: Path) -> ReportFound | str:
    """The report in ``folder``, or what stops it being read."""
    path = folder / REPORT_FILE
    try:
        report = Report.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValidationError is a ValueError
        return f"{path}: not readable as an analysis report ({_first_error(exc)})"
    return ReportFound(folder / HTML_FILE, report)


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        return f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}"
    return str(exc)


def _resume(folder: Path) -> str:
    """The command that carries the run on, from the options its manifest records."""
    options = recorded_options(read_manifest(folder / MANIFEST_FILE)) or RunOptions()
    return resume_command(replace(options, output_dir=str(folder)))


def _arm_models(run: RunFound) -> ArmModels | None:
    """The models a two-arm run compared and the ids of the items it judged (the dataset its
    manifest names, cut to the run's recorded --limit), or None where that is not known."""
    summary = run.reports[0].report.summary
    control, treatment = summary.control_arm, summary.treatment_arm
    if control is None or treatment is None:
        return None
    judgments = run.folder / JUDGMENTS_FILE
    try:
        items = run_items(judgments, run_sources(judgments, dataset=None, human=None))
    except InputError:
        return None
    if not items:
        return None
    options = recorded_options(read_manifest(run.folder / MANIFEST_FILE))
    judged = items[: options.limit] if options is not None and options.limit else items
    ids = frozenset(item.id for item in judged)
    return ArmModels(_model(judged, control), _model(judged, treatment), ids)


def _model(items: list[Item], arm: str) -> str:
    """The model an arm stands for: its ``authors`` entry where every item names the same one,
    else the arm's name."""
    named = {item.authors.get(arm) for item in items}
    only = named.pop() if len(named) == 1 else None
    return only if only else arm


def _comparison(folder: Path) -> ComparisonFound | None:
    path = folder / COMPARE_JSON
    try:
        report = CompareReport.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    written = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return ComparisonFound(folder, folder / COMPARE_HTML, report, written)
