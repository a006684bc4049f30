"""The Python API for notebooks and scripts: ``jurybox.run``, ``jurybox.analyze``, ``jurybox.load``.

The same use cases as ``jurybox run``, ``jurybox analyze`` and ``jurybox export``, returning
values instead of printing paths (docs/python-api.md). Messages go to stderr as on the command
line; ``quiet=True`` silences them. Errors raise ``jurybox.errors.JuryboxError`` subclasses
(``InputError`` for bad input) rather than exiting.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from jurybox.app.export import load
from jurybox.app.run import run_from_config
from jurybox.io.judgments import judgments_path
from jurybox.pipeline.summary import RunSummary
from jurybox.thresholds import TrustThresholds

if TYPE_CHECKING:
    from jurybox.analysis.model import Report

__all__ = ["analyze", "load", "run"]


def _console(quiet: bool) -> Console:
    return Console(stderr=True, quiet=quiet)


def run(
    config: str | Path,
    *,
    output_dir: str | Path | None = None,
    resume: str | Path | None = None,
    limit: int | None = None,
    dry_run: bool = False,
    quiet: bool = False,
    until: str | None = None,
) -> RunSummary:
    """Judge the dataset CONFIG names (``jurybox run``); returns the run's summary
    (``output_dir``, ``judgments_path``, counts, ``failed_judges``). ``resume=DIR`` carries on
    a run; ``dry_run`` only estimates; ``until`` stops each judge early (``--until``: its stop
    in ``summary.schedule``)."""
    return run_from_config(
        config,
        output_dir=output_dir,
        resume=resume,
        dry_run=dry_run,
        limit=limit,
        console=_console(quiet),
        until=until,
    )


def analyze(
    path: str | Path,
    *,
    out: str | Path | None = None,
    dataset: str | Path | None = None,
    human: str | Path | None = None,
    plots: bool = True,
    thresholds: TrustThresholds | None = None,
    quiet: bool = False,
) -> Report:
    """Analyse a run folder or judgments.jsonl (``jurybox analyze``) into ``out`` (default: a
    ``report`` folder beside the judgments) and return the report (``analysis_report.json`` as
    its typed model: ``report.verdict.line``, ``report.verdict.judges[name].level`` ...).
    The dataset and labels default to the ones the run's manifest names."""
    from jurybox.analysis.model import Report  # noqa: PLC0415  (the analysis stack on use)
    from jurybox.app.analyze import analyze_to_dir  # noqa: PLC0415

    folder = Path(out) if out is not None else judgments_path(path).parent / "report"
    paths = analyze_to_dir(
        Path(path),
        human=Path(human) if human is not None else None,
        dataset=Path(dataset) if dataset is not None else None,
        out_dir=folder,
        console=_console(quiet),
        plots=plots,
        thresholds=thresholds,
    )
    return Report.model_validate_json(paths.json.read_text(encoding="utf-8"))
