"""``analyze_to_dir``: judgments.jsonl (+ labels, + dataset) -> every report file in one folder.

The use case behind ``jurybox analyze``: read the records (and the items and labels), analyse
them, write every report file (``jurybox.reporting.write_reports``) and print the headline.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
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
from jurybox.analysis.frame import BlockParsed, RecordTables, frame_from_tables, record_tables
from jurybox.analysis.model import Report
from jurybox.analysis.model.summary import InputScreen
from jurybox.app.sources import (
    declared_scale,
    run_items,
    run_judges,
    run_labels,
    run_sources,
    run_stopping,
    say_sources,
)
from jurybox.config import LabelsConfig
from jurybox.errors import DatasetError
from jurybox.io.judgments import (
    StoredRecords,
    judgments_path,
    read_line_blocks,
    read_unique_records,
)
from jurybox.io.label_screen import LabelScreen, screen_labels
from jurybox.records import Item, JudgeRecord
from jurybox.reporting import (
    RecordsPass,
    ReportPaths,
    print_summary,
    report_folder,
    write_reports,
)
from jurybox.thresholds import TrustThresholds


@dataclass(frozen=True)
class _Judgments:
    path: Path
    tables: RecordTables
    records: StoredRecords  # the kept records, left on disk


def _judgments_file(judgments: Path) -> Path:
    """The judgments file (``judgments``, or the one in the run folder ``judgments``)."""
    path = judgments_path(judgments)
    if not path.is_file():
        raise DatasetError("judgments file not found", path=str(path))
    return path


def _judgments(path: Path, console: Console, parsed: BlockParsed | None = None) -> _Judgments:
    """The judgments as columns, one record per key; never a list of every record (each
    block as parsed told to ``parsed``)."""
    tables = record_tables(read_line_blocks(path), parsed=parsed)
    if not len(tables.kept):
        raise DatasetError("no judgment records in the file", path=str(path))
    if tables.dropped:
        console.print(
            f"{path}: dropped {tables.dropped} duplicate record(s) (same key; kept the last "
            "complete one)",
            markup=False,
        )
    records = StoredRecords(path, tables.offsets[tables.kept].tolist())
    return _Judgments(path, tables, records)


def _screened(
    labels: dict[str, Mapping[str, Any]], tables: RecordTables, console: Console
) -> LabelScreen:
    """Only labels that match the judgments: unknown ids and values naming no arm are
    excluded, and said so (they used to be counted)."""
    screen = screen_labels(labels, set(tables.records["query_id"]), tables.arms)
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
        hint = screen.value_map_hint(tables.arms)
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


def build_report(
    records: Iterable[JudgeRecord],
    *,
    human: Mapping[str, Mapping[str, Any]] | None,
    items: Sequence[Item] | None,
    options: AnalysisOptions,
    label_source: str | None = None,
) -> tuple[Report, AnalysisFrame]:
    """The report and the tidy frame it was computed from (the plots need both). Imported
    benchmark verdicts also get their benchmark's own figures (``report.benchmarks``)."""
    records = list(records)
    try:
        frame = build_frame(records, human=human, items=items, options=options)
    except ValueError as exc:  # malformed labels surface here (e.g. a verdict not Pass/Fail)
        raise DatasetError(str(exc), path=label_source) from None
    report = analyze_frame(frame, options)
    figures = benchmark_figures(records, items or ())
    if figures.model_fields_set:
        report = report.model_copy(update={"benchmarks": figures})
    return report, frame


# Up to this many records the report's appendix and explorer read them from a list held
# once (as before streaming: each is parsed once); past it, from the file (the explorer's
# fields read by pyarrow), so that a million-record run never holds a million records.
RECORDS_HELD = 100_000


def _streamed_report(
    read: _Judgments,
    *,
    human: Mapping[str, Mapping[str, Any]] | None,
    items: Sequence[Item] | None,
    options: AnalysisOptions,
    label_source: str | None,
    records_pass: RecordsPass | None = None,
) -> tuple[Report, AnalysisFrame]:
    """``build_report`` from the streamed tables: the same report, no record list. Benchmark
    figures read the records of imported benchmark items only (small by nature). The report's
    ``records_pass`` starts as soon as the frame exists, beside the analysis."""
    try:
        frame = frame_from_tables(read.tables, human=human, items=items, options=options)
    except ValueError as exc:  # malformed labels surface here (e.g. a verdict not Pass/Fail)
        raise DatasetError(str(exc), path=label_source) from None
    if records_pass is not None:
        records_pass.start(frame)
    report = analyze_frame(frame, options)
    sourced = {item.id for item in items or () if item.metadata and item.metadata.get("source")}
    if sourced:
        records = read_unique_records(read.path, query_ids=sourced).records
        figures = benchmark_figures(records, items or ())
        if figures.model_fields_set:
            report = report.model_copy(update={"benchmarks": figures})
    return report, frame


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
    options: AnalysisOptions | None = None,
    thresholds: TrustThresholds | None = None,
    labels_config: LabelsConfig | None = None,
) -> ReportPaths:
    """Analyse ``judgments`` (a judgments.jsonl or a run folder) into ``out_dir``.

    Without ``dataset``, items written by ``jurybox import`` beside the records
    (``<stem>.items.jsonl``) are used when present: they carry lengths and the human gold. A
    run's manifest.json beside the records gives the rubric's declared scale
    (``AnalysisOptions.score_scale``: weighted kappa and AC2 weigh over every point of it).
    Prints the headline figures to ``console`` (stderr by default) and returns the paths.
    ``thresholds`` set the trust verdict's limits (ignored when ``options`` is given);
    ``labels_config`` how to read the labels (default: the run config's ``labels:``, per its
    manifest).
    """
    console = console or Console(stderr=True)
    path = _judgments_file(Path(judgments))
    sources = run_sources(path, dataset=dataset, human=human, labels=labels_config)
    say_sources(sources, console)
    # The items first: a large file's records pass is forked with them, before the records
    # are read, and spools them beside the frame and the analysis (else it starts with the
    # frame); the records stay on disk past RECORDS_HELD (read from the file, no list made).
    items = run_items(path, sources)
    # Written whole into a folder beside out_dir, which it then replaces (``report_folder``).
    with (
        report_folder(Path(out_dir)) as staging,
        RecordsPass((), items, staging, held=RECORDS_HELD) as records_pass,
    ):
        records_pass.start_early(path)
        read = _judgments(path, console, records_pass.block_parsed)
        records_pass.records_read(read.records, read.tables.records)
        labels = run_labels(sources)
        screen = _screened(labels, read.tables, console) if labels is not None else None
        report, frame = _streamed_report(
            read,
            human=screen.labels if screen is not None else None,
            items=items,
            options=options
            or AnalysisOptions(
                judge_families=read.tables.judge_families(),
                thresholds=thresholds or TrustThresholds(),
                score_scale=declared_scale(path),
                run_judges=run_judges(path),
                stopping=run_stopping(path),
            ),
            label_source=str(sources.human.path) if sources.human.path is not None else None,
            records_pass=records_pass,
        )
        report = _with_input_screen(report, read.tables.dropped, screen)
        with console.status(f"writing the report{' and its plots' if plots else ''} to {out_dir}"):
            paths = write_reports(
                report,
                frame,
                staging,
                plots=plots,
                source=str(path),
                items=items,
                records_pass=records_pass,
            )
    paths = paths.under(Path(out_dir))
    print_summary(report, paths, console)
    return paths
