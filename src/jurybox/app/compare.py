"""``compare_to_dir``: two or more runs over the same items -> compare.json / .md / .html.

The use case behind ``jurybox compare``. Each run is a judgments.jsonl or a run folder; its items
(for response lengths and item-embedded human labels) come from ``dataset`` when given, else
from the dataset its manifest names (found as ``analyze`` finds it: ``app/sources.py``), else
from the companion items an import wrote. Human labels (``human``) apply to every run.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from jurybox.analysis import AnalysisOptions, build_frame, companion_items_path
from jurybox.analysis.compare import CompareOptions, RunInput, compare_runs
from jurybox.analysis.model.compare import CompareReport, JudgeComparison
from jurybox.app.sources import run_items, run_judgments, run_sources
from jurybox.errors import DatasetError
from jurybox.pipeline.manifest import MANIFEST_FILE, read_manifest
from jurybox.records import Item
from jurybox.reporting.render.compare import ComparePaths, write_compare
from jurybox.reporting.render.html import HTML_FILE
from jurybox.reporting.view.format import few_items, fmt_p, fmt_value_ci

__all__ = ["CompareOptions", "compare_to_dir", "load_run", "run_labels"]


def _run_items(judgments: Path, dataset: Path | None) -> tuple[list[Item] | None, str | None]:
    """The run's items and where they came from (None, None: no items found): the dataset
    given, else the one the run's manifest names (as ``analyze`` finds it), else an import's."""
    sources = run_sources(judgments, dataset=dataset, human=None)
    items = run_items(judgments, sources)
    if items is None:
        return None, None
    if sources.dataset.path is None:
        return items, f"{companion_items_path(judgments)} (written by import)"
    origin = "--dataset" if sources.dataset.origin == "given" else "from the run's manifest"
    return items, f"{sources.dataset.path} ({origin})"


def load_run(
    label: str,
    run: Path,
    *,
    dataset: Path | None,
    human: Mapping[str, Mapping[str, Any]] | None,
) -> RunInput:
    """One run's records, items and labels as a tidy frame."""
    from jurybox.analysis.frame_columns import FRAME_FIELDS  # noqa: PLC0415

    path, judged = run_judgments(run, FRAME_FIELDS)
    items, items_source = _run_items(path, dataset)
    try:
        frame = build_frame(judged, human=human, items=items, options=AnalysisOptions())
    except ValueError as exc:  # malformed labels
        raise DatasetError(str(exc), path=str(path)) from None
    manifest, report = _run_extras(path)
    return RunInput(label, str(path), frame, len(judged), items_source, manifest, report)


def _run_extras(judgments: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The run's manifest (its config and own prompt, for what changed; None for an import or
    an unreadable one) and its report.html where ``jurybox analyze`` was pointed at the run
    folder (``RUN/report/report.html`` or ``RUN/report.html``), for links into its items."""
    try:
        manifest = read_manifest(judgments.parent / MANIFEST_FILE)
    except DatasetError:
        manifest = None
    folder = judgments.parent
    found = (folder / "report" / HTML_FILE, folder / HTML_FILE)
    report = next((str(path.resolve()) for path in found if path.is_file()), None)
    return manifest, report


def run_labels(count: int) -> list[str]:
    """A, B, C, ... (then A2, B2 ... past 26 runs)."""
    letters = string.ascii_uppercase
    return [letters[i % 26] + (str(i // 26 + 1) if i >= 26 else "") for i in range(count)]


def compare_to_dir(
    runs: Sequence[Path],
    *,
    out_dir: Path,
    dataset: Path | None = None,
    human: Path | None = None,
    options: CompareOptions | None = None,
    console: Console | None = None,
) -> tuple[CompareReport, ComparePaths]:
    """Compare every run with the first and write the three files into ``out_dir``."""
    console = console or Console(stderr=True)
    if len(runs) < 2:
        raise DatasetError(f"compare needs at least two runs, got {len(runs)}")
    labels = None
    if human is not None:
        from jurybox.io.datasets import load_human_labels  # noqa: PLC0415

        labels = load_human_labels(human)
    inputs = [
        load_run(label, Path(run), dataset=dataset, human=labels)
        for label, run in zip(run_labels(len(runs)), runs, strict=True)
    ]
    _check_shared_items(inputs)
    report = compare_runs(inputs, options)
    paths = write_compare(report, Path(out_dir))
    _print_summary(report, paths, console)
    return report, paths


def _check_shared_items(inputs: Sequence[RunInput]) -> None:
    """Runs that share no item id have nothing to pair: say so instead of empty tables."""
    first = set(inputs[0].frame.records["query_id"])
    for run in inputs[1:]:
        if not first & set(run.frame.records["query_id"]):
            raise DatasetError(
                f"runs {inputs[0].label} and {run.label} share no item id: compare needs the "
                "same items judged in both",
                path=run.source,
            )


def _print_summary(report: CompareReport, paths: ComparePaths, console: Console) -> None:
    for run in report.runs:
        items = f"; items: {run.items_source}" if run.items_source else "; no items (no lengths)"
        console.print(
            f"{run.label}: {run.source} ({run.n_ok} ok records{items})",
            markup=False,
            soft_wrap=True,
        )
    for comparison in report.comparisons:
        for judge in comparison.judges:
            if judge.verdicts is not None:
                line = _verdict_line(comparison.run_a, comparison.run_b, judge)
                console.print(line, markup=False, soft_wrap=True)
        for headline in comparison.headlines or []:
            name = (
                headline.judge_a
                if headline.judge_a == headline.judge_b
                else (f"{headline.judge_a}→{headline.judge_b}")
            )
            said = f"did {comparison.run_b} judge better than {comparison.run_a}? {name}: "
            console.print(said + headline.answer, markup=False, soft_wrap=True)
    wrote = f"wrote {paths.json}, {paths.markdown.name}, {paths.html.name}"
    console.print(wrote, markup=False, soft_wrap=True)


def _verdict_line(run_a: str, run_b: str, judge: JudgeComparison) -> str:
    verdicts = judge.verdicts
    assert verdicts is not None
    name = judge.judge_a if judge.judge_a == judge.judge_b else f"{judge.judge_a}→{judge.judge_b}"
    line = (
        f"{run_b} vs {run_a}, {name}: {verdicts.n_changed} of {verdicts.n_units} verdicts changed"
    )
    if verdicts.accuracy is not None:
        accuracy = verdicts.accuracy
        diff, few = accuracy.difference, few_items(accuracy.n_items)
        line += f"; accuracy B − A {fmt_value_ci(diff.value, diff.ci_low, diff.ci_high)}{few}"
        line += f" over {accuracy.n_items} items, sign test p {fmt_p(accuracy.mcnemar.p_value)}"
    return line
