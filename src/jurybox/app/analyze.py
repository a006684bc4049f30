"""``analyze_to_dir``: judgments.jsonl (+ labels, + dataset) -> every report file in one folder.

The use case behind ``jurybox analyze``: read the records (and the items and labels), analyse
them, write every report file (``jurybox.reporting.write_reports``) and print the headline.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from jurybox.analysis import (
    AnalysisFrame,
    AnalysisOptions,
    analyze_frame,
    build_frame,
)
from jurybox.analysis.benchmarks import benchmark_figures
from jurybox.analysis.frame import judge_families, shown_arms
from jurybox.analysis.frame_columns import FRAME_FIELDS
from jurybox.analysis.model import Report
from jurybox.analysis.model.summary import InputScreen, RunProgress
from jurybox.app.show import sent_prompts
from jurybox.app.sources import (
    declared_scale,
    run_items,
    run_judges,
    run_judgments,
    run_labels,
    run_manifest,
    run_resume,
    run_sources,
    run_stopping,
    say_sources,
)
from jurybox.config import LabelsConfig
from jurybox.errors import DatasetError
from jurybox.io.judgments import judgments_path
from jurybox.io.label_screen import LabelScreen, screen_labels
from jurybox.io.record_table import Judgments, records_table
from jurybox.records import Item, JudgeRecord
from jurybox.reporting import ReportPaths, print_summary, report_folder, write_reports
from jurybox.reporting.explorer.calls import PROMPT_RECORDS
from jurybox.reporting.render.records_pass import PASS_FIELDS, write_pass
from jurybox.thresholds import TrustThresholds


def _judgments_file(judgments: Path) -> Path:
    """The judgments file (``judgments``, or the one in the run folder ``judgments``)."""
    path = judgments_path(judgments)
    if not path.is_file():
        raise DatasetError("judgments file not found", path=str(path))
    return path


def _judgments(path: Path, console: Console) -> Judgments:
    """The records the frame reads, one per key (the other columns stay in the file)."""
    _, judged = run_judgments(path, FRAME_FIELDS)
    if judged.dropped:
        console.print(
            f"{path}: dropped {judged.dropped} duplicate record(s) (same key; kept the last "
            "complete one)",
            markup=False,
        )
    return judged


def _screened(
    labels: dict[str, Mapping[str, Any]], judged: Judgments, console: Console
) -> LabelScreen:
    """Only labels that match the judgments: unknown ids and values naming no arm are
    excluded, and said so (they used to be counted)."""
    query_ids = set(judged.table.column("query_id").unique().to_pylist())
    arms = shown_arms(judged)
    screen = screen_labels(labels, query_ids, arms)
    if screen.unknown_ids:
        shown = ", ".join(screen.unknown_ids[:5]) + (" ..." if len(screen.unknown_ids) > 5 else "")
        console.print(
            f"human labels: excluded {len(screen.unknown_ids)} with a query id not in the "
            f"judgments ({shown})",
            markup=False,
        )
    if screen.bad_values:
        console.print(
            f"human labels: excluded {len(screen.bad_values)} with a value that names no arm: "
            + "; ".join(screen.bad_values[:5]),
            markup=False,
        )
        hint = screen.value_map_hint(sorted(arms))
        if hint is not None:
            console.print(hint, markup=False)
    return screen


def _with_input_screen(report: Report, dropped: int, screen: LabelScreen | None) -> Report:
    """The report with what was left out of its input recorded in ``summary.input_screen``."""
    counts = InputScreen(
        duplicates_dropped=dropped,
        labels_unknown_ids=len(screen.unknown_ids) if screen else 0,
        labels_bad_values=len(screen.bad_values) if screen else 0,
    )
    summary = report.summary.model_copy(update={"input_screen": counts})
    return report.model_copy(update={"summary": summary})


def _with_run(report: Report, path: Path) -> Report:
    """The report with where its run stood (``summary.run``), from the run's manifest: how
    much of its plan was judged, and the resume command where there is anything to redo. The
    judgments done are the records read, not the manifest's count: a run killed without a word
    (``kill -9``) never wrote its count there."""
    manifest = run_manifest(path)
    if manifest is None:
        return report
    redo = manifest.status != "complete" or "provider_error" in report.summary.excluded.by_status
    progress = RunProgress.given(
        status=manifest.status,
        units_planned=manifest.units_planned,
        units_done=report.summary.n_records,
        resume=run_resume(path.parent) if redo else None,
    )
    summary = report.summary.model_copy(update={"run": progress})
    return report.model_copy(update={"summary": summary})


def build_report(
    records: Judgments | Iterable[JudgeRecord],
    *,
    human: Mapping[str, Mapping[str, Any]] | None,
    items: Sequence[Item] | None,
    options: AnalysisOptions,
) -> tuple[Report, AnalysisFrame]:
    """The report and the tidy frame it was computed from (the plots need both)."""
    judged = records if isinstance(records, Judgments) else records_table(records)
    frame = _frame(judged, human=human, items=items, options=options, label_source=None)
    return _analysed(frame, judged.released(), items, options), frame


def _frame(
    judged: Judgments,
    *,
    human: Mapping[str, Mapping[str, Any]] | None,
    items: Sequence[Item] | None,
    options: AnalysisOptions,
    label_source: str | None,
) -> AnalysisFrame:
    try:
        return build_frame(judged, human=human, items=items, options=options)
    except ValueError as exc:  # malformed labels surface here (e.g. a verdict not Pass/Fail)
        raise DatasetError(str(exc), path=label_source) from None


def _analysed(
    frame: AnalysisFrame, judged: Judgments, items: Sequence[Item] | None, options: AnalysisOptions
) -> Report:
    """The report of the frame. Imported benchmark verdicts also get their benchmark's own
    figures (``report.benchmarks``), from the records of those items only (few by nature)."""
    report = analyze_frame(frame, options)
    sourced = {item.id for item in items or () if item.metadata and item.metadata.get("source")}
    if sourced:
        figures = benchmark_figures(judged.records(query_ids=sourced), items or ())
        if figures.model_fields_set:
            report = report.model_copy(update={"benchmarks": figures})
    return report


def _benchmark_items(items: Sequence[Item] | None) -> list[Item] | None:
    """The items the analysis still reads once the frame holds theirs: only those of an
    imported benchmark (its own figures). The texts of the others go, before the analysis."""
    if items is None:
        return None
    return [item for item in items if item.metadata and item.metadata.get("source")]


def _run_options(
    path: Path, judged: Judgments, thresholds: TrustThresholds | None
) -> AnalysisOptions:
    """The analysis options of the run that wrote ``path``: its judges' families, the rubric's
    declared scale, its judges' settings and where a ``--until`` run stopped (its manifest)."""
    return AnalysisOptions(
        judge_families=judge_families(judged),
        thresholds=thresholds or TrustThresholds(),
        score_scale=declared_scale(path),
        run_judges=run_judges(path),
        stopping=run_stopping(path),
    )


def default_report_dir(judgments: Path) -> Path:
    """Where ``analyze`` writes without ``--out``: ``report`` beside the judgments file (in the
    run folder, for a run)."""
    return judgments_path(Path(judgments)).parent / "report"


def analyze_to_dir(
    judgments: Path,
    *,
    human: Path | None,
    dataset: Path | None,
    out_dir: Path,
    console: Console | None = None,
    plots: bool | Collection[str] = True,
    thresholds: TrustThresholds | None = None,
    labels_config: LabelsConfig | None = None,
) -> ReportPaths:
    """Analyse ``judgments`` (a judgments.jsonl, a run folder, or the Parquet file ``jurybox
    export`` wrote) into ``out_dir``.

    Without ``dataset``, items written by ``jurybox import`` beside the records
    (``<stem>.items.jsonl``) are used when present: they carry lengths and the human gold. A
    run's manifest.json beside the records gives the rubric's declared scale
    (``AnalysisOptions.score_scale``: weighted kappa and AC2 weigh over every point of it).
    Prints the headline figures to ``console`` (stderr by default) and returns the paths.
    ``thresholds`` set the trust verdict's limits; ``labels_config`` how to read the labels
    (default: the run config's ``labels:``, per its manifest).
    """
    console = console or Console(stderr=True)
    path = _judgments_file(Path(judgments))
    sources = run_sources(path, dataset=dataset, human=human, labels=labels_config)
    say_sources(sources, console)
    items = run_items(path, sources)
    # Written whole into a folder beside out_dir, which it then replaces (``report_folder``).
    with report_folder(Path(out_dir)) as staging:
        judged = _judgments(path, console)
        labels = run_labels(sources)
        screen = _screened(labels, judged, console) if labels is not None else None
        options = _run_options(path, judged, thresholds)
        frame = _frame(
            judged,
            human=screen.labels if screen is not None else None,
            items=items,
            options=options,
            label_source=str(sources.human.path) if sources.human.path is not None else None,
        )
        # The appendix and the explorer now, from the columns the frame read (the texts read
        # again): then the frame holds all the analysis reads.
        prompts = sent_prompts(path) if len(judged) <= PROMPT_RECORDS else None
        # Of the columns the frame read, only those the pass shows stay (the scores go).
        judged = judged.released(keep=PASS_FIELDS)
        written = write_pass(frame, judged, items, staging, prompts)
        try:
            judged = judged.released()
            items = _benchmark_items(items)
            report = _analysed(frame, judged, items, options)
            report = _with_run(_with_input_screen(report, judged.dropped, screen), path)
            doing = f"writing the report{' and its plots' if plots else ''} to {out_dir}"
            with console.status(doing):
                paths = write_reports(
                    report, frame, staging, plots=plots, source=str(path), written=written
                )
        finally:
            written.discard()  # what was not installed
    paths = paths.under(Path(out_dir))
    print_summary(report, paths, console)
    return paths
