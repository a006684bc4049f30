"""The Python API for notebooks and scripts: ``jurybox.run``, ``jurybox.analyze``, ``jurybox.load``.

The same use cases as ``jurybox run``, ``jurybox analyze`` and ``jurybox export``, returning
values instead of printing paths (docs/python-api.md). Messages go to stderr as on the command
line; ``quiet=True`` silences them. Errors raise ``jurybox.errors.JuryboxError`` subclasses
(``InputError`` for bad input) rather than exiting, and name this API's arguments
(``resume=``), not the command line's flags (``--resume``). The values returned show
themselves as HTML in a notebook (``_repr_html_``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from jurybox.app import export
from jurybox.app.run import run_from_config
from jurybox.errors import InputError
from jurybox.pipeline.summary import RunSummary
from jurybox.thresholds import TrustThresholds

if TYPE_CHECKING:
    import pandas as pd

    from jurybox.analysis.model import Report

__all__ = ["analyze", "load", "run"]

# Command-line flags -> the API argument that does the same (what a message tells to pass).
_RUN_ARGUMENTS = {
    "--resume": "resume",
    "--output-dir": "output_dir",
    "--limit": "limit",
    "--force": "force=True",
    "--dry-run": "dry_run=True",
    "--until": "until",
}
_ANALYZE_ARGUMENTS = {
    "--out": "out",
    "--dataset": "dataset",
    "--human": "human",
    "--no-plots": "plots=False",
}
# A resume command as ``pipeline.options.resume_command`` prints it: in the API the run's
# recorded options (limit, engine, batch, until) apply by themselves, so it is one call.
_RESUME_COMMAND = re.compile(
    r"jurybox run (?P<config>\S+) --resume (?P<folder>\S+?)(?: --(?:until|limit|batch-fallback|"
    r"engine|ray-address) \S+?| --batch)*(?=[\s,;)]|$)"
)


def _in_api_words(text: str, arguments: Mapping[str, str], given: Mapping[str, object]) -> str:
    """``text`` with each flag named as the API argument it stands for; ``--resume DIR`` with
    DIR the value given reads ``resume='DIR'``."""
    text = _RESUME_COMMAND.sub(
        lambda found: f"jurybox.run({found['config']!r}, resume={found['folder']!r})", text
    )
    for flag, argument in arguments.items():
        value = given.get(argument)
        if value is not None and not argument.endswith(("True", "False")):
            shown = repr(str(value)) if isinstance(value, str | Path) else repr(value)
            text = text.replace(f"{flag} {value}", f"{argument}={shown}")
        text = re.sub(rf"{re.escape(flag)}(?![\w-])", argument, text)
    return text


@contextmanager
def _api_errors(arguments: Mapping[str, str], **given: object) -> Iterator[None]:
    """Bad input raised inside as the same error, its message and field in API words."""
    try:
        yield
    except InputError as exc:
        field = _in_api_words(exc.field, arguments, {}) if exc.field is not None else None
        reason = _in_api_words(exc.reason, arguments, given)
        if reason == exc.reason and field == exc.field:
            raise
        raise type(exc)(reason, path=exc.path, line=exc.line, field=field) from None


def _console(quiet: bool) -> Console:
    return Console(stderr=True, quiet=quiet)


def run(
    config: str | Path,
    *,
    output_dir: str | Path | None = None,
    resume: str | Path | None = None,
    limit: int | None = None,
    dry_run: bool = False,
    force: bool = False,
    quiet: bool = False,
    until: str | None = None,
) -> RunSummary:
    """Judge the dataset CONFIG names (``jurybox run``); returns the run's summary
    (``output_dir``, ``judgments_path``, counts, ``failed_judges``). ``resume=DIR`` carries on
    a run (``force=True``: one whose folder has no manifest.json); ``dry_run`` only
    estimates; ``until`` stops each judge early (``--until``: its stop in ``summary.schedule``)."""
    from jurybox.app.notebook import RunResult  # noqa: PLC0415

    given = {"resume": resume, "output_dir": output_dir, "limit": limit, "until": until}
    with _api_errors(_RUN_ARGUMENTS, **given):
        summary = run_from_config(
            config,
            output_dir=output_dir,
            resume=resume,
            dry_run=dry_run,
            limit=limit,
            force=force,
            console=_console(quiet),
            until=until,
        )
    return RunResult.of(summary)


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
    from jurybox.app.analyze import analyze_to_dir, default_report_dir  # noqa: PLC0415
    from jurybox.app.notebook import AnalysisResult  # noqa: PLC0415  (the analysis stack)

    folder = Path(out) if out is not None else default_report_dir(Path(path))
    with _api_errors(_ANALYZE_ARGUMENTS, out=out, dataset=dataset, human=human):
        paths = analyze_to_dir(
            Path(path),
            human=Path(human) if human is not None else None,
            dataset=Path(dataset) if dataset is not None else None,
            out_dir=folder,
            console=_console(quiet),
            plots=plots,
            thresholds=thresholds,
        )
    return AnalysisResult.model_validate_json(paths.json.read_text(encoding="utf-8"))


def load(
    run: str | Path, *, dataset: str | Path | None = None, human: str | Path | None = None
) -> pd.DataFrame:
    """``run``'s judgments as a pandas DataFrame: the table ``jurybox export`` writes."""
    with _api_errors(_ANALYZE_ARGUMENTS, dataset=dataset, human=human):
        return export.load(run, dataset=dataset, human=human)
