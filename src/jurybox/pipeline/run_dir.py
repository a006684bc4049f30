"""The run directory: opening it for a new run or a resume, and what the run keeps about it."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jurybox.errors import ConfigError, DatasetError, InputError
from jurybox.io.datasets import dataset_hash
from jurybox.io.judgments import JUDGMENTS_FILE, prepare_resume, read_records
from jurybox.io.targets import same_file
from jurybox.pipeline.failures import FailureTally
from jurybox.pipeline.manifest import (
    MANIFEST_FILE,
    RunningTotals,
    check_resumable,
    config_snapshot,
    is_run_manifest,
    package_versions,
    read_manifest,
)
from jurybox.pipeline.options import RunOptions, recorded_options, resume_command
from jurybox.pipeline.recording import utc_now
from jurybox.records import WorkUnit

if TYPE_CHECKING:
    from jurybox.pipeline.runner import RunInputs


@dataclass
class RunOutput:
    """The run directory: paths, the manifest being kept, this session's entry in it, done keys."""

    directory: Path
    judgments: Path
    manifest_path: Path
    manifest: dict[str, Any]
    session: dict[str, Any]
    done: set[str]
    # Totals over the whole judgments file: read once when the run opens it, then each record
    # this session writes is added (the file is never read back at the end).
    totals: RunningTotals = field(default_factory=RunningTotals)
    failures: FailureTally = field(default_factory=FailureTally)

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])


def new_run_id() -> str:
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def open_output(
    inputs: RunInputs, directory: Path, *, resume: bool, force: bool = False
) -> RunOutput:
    """Prepare the run directory. Resume keeps the original run_id and repairs the file; a new
    run refuses a directory that already holds judgments rather than mixing two runs, and a
    resume refuses judgments without a manifest (nothing to check the config against) unless
    ``force``."""
    directory.mkdir(parents=True, exist_ok=True)
    judgments, manifest_path = directory / JUDGMENTS_FILE, directory / MANIFEST_FILE
    if not resume and judgments.exists() and judgments.stat().st_size > 0:
        raise ConfigError(
            f"{directory} already holds a run ({JUDGMENTS_FILE}); to continue it: "
            f"{_resume_hint(inputs, directory)}, or choose another --output-dir",
            field="paths.output_dir",
        )
    data_hash = dataset_hash(inputs.dataset_path)
    previous = read_manifest(manifest_path) if resume else None
    own = inputs.mode.ctx.prompt  # the run's own instructions / template, kept as run
    prompt = own.manifest_entry() if own is not None else None
    if previous is not None:
        check_resumable(previous, inputs.config, data_hash, prompt)
    elif resume and not force and judgments.exists() and judgments.stat().st_size > 0:
        # Judgments with no manifest: nothing to check this config against. (A folder with no
        # judgments yet has nothing to mix with: the devloop resumes into fresh folders.)
        raise ConfigError(
            f"cannot resume {directory}: it has no {MANIFEST_FILE}, so nothing shows that this "
            "config made its judgments (two experiments would mix); pass --force to resume "
            "anyway",
            field="--resume",
        )
    done = prepare_resume(judgments) if resume else set()
    file_totals, failures = RunningTotals(), FailureTally()
    for record in read_records(judgments) if judgments.exists() else ():
        file_totals.add(record)
        failures.add(record)
    manifest = previous or {"run_id": new_run_id(), "started_at": utc_now()}
    session = {"started_at": utc_now(), "resumed": resume}
    manifest.setdefault("sessions", []).append(session)
    manifest.update(
        config=config_snapshot(inputs.config),
        config_path=inputs.config.source_path,
        dataset={"path": str(inputs.dataset_path), "hash": data_hash, "items": len(inputs.items)},
        # Where `jurybox analyze RUN_DIR` finds the labels and re-anchors relative paths.
        human_labels=_labels_path(inputs),
        output_dir=str(directory),
        units_planned=len(inputs.units),
        units_per_judge=units_per_judge(inputs.units),
        versions=package_versions(),
    )
    if prompt is not None:
        manifest["prompt"] = prompt
    return RunOutput(
        directory, judgments, manifest_path, manifest, session, done, file_totals, failures
    )


def _resume_hint(inputs: RunInputs, directory: Path) -> str:
    """The command that continues the run already in ``directory``, with its recorded options."""
    try:
        recorded = recorded_options(read_manifest(directory / MANIFEST_FILE))
    except InputError:  # an unreadable manifest: the folder and config still say enough
        recorded = None
    options = recorded or RunOptions()
    here = replace(options, config_path=inputs.config.source_path, output_dir=str(directory))
    return resume_command(here)


def read_run_manifest(directory: Path) -> dict[str, Any] | None:
    """The run folder's manifest (None: it has none yet); refused where ``manifest.json`` is not
    a jurybox run's, JSON or not, since a run would replace it."""
    manifest_path = directory / MANIFEST_FILE
    try:
        existing = read_manifest(manifest_path)
        foreign = existing is not None and not is_run_manifest(existing)
    except DatasetError:  # not JSON at all
        foreign = True
    if foreign:
        raise ConfigError(
            f"{manifest_path} is not the manifest of a jurybox run, and a run would replace it; "
            "choose another --output-dir",
            field="paths.output_dir",
        )
    return existing


def check_run_folder(inputs: RunInputs, directory: Path) -> None:
    """Refuse a folder whose manifest.json is not a jurybox run's (it would be replaced), and a
    run whose dataset or labels are the files it writes: before the folder is locked, so a
    refused folder is left exactly as it was."""
    judgments, manifest_path = directory / JUDGMENTS_FILE, directory / MANIFEST_FILE
    read_run_manifest(directory)
    labels = inputs.config.paths.human_labels
    reads = [inputs.dataset_path]
    if labels is not None:
        reads.append(inputs.config.resolve(labels))
    for source in reads:
        for written in (judgments, manifest_path):
            if same_file(source, written):
                raise ConfigError(
                    f"{source} is the run's own {written.name}: choose another --output-dir",
                    field="paths.output_dir",
                )


def _labels_path(inputs: RunInputs) -> str | None:
    labels = inputs.config.paths.human_labels
    return str(inputs.config.resolve(labels)) if labels is not None else None


def units_per_judge(units: Sequence[WorkUnit]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for unit in units:
        counts[unit.judge] = counts.get(unit.judge, 0) + 1
    return counts
