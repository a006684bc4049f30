"""Which dataset and human labels an analysis of a run uses, and why.

A run folder's ``manifest.json`` names the dataset it judged (``dataset.path`` and its hash) and
the config's ``paths.human_labels``; ``jurybox label`` writes ``labels.jsonl`` into the run
folder, which is then the labels ``analyze`` reads. ``analyze RUN_DIR`` uses those unless told
otherwise, so the checks that need the items (verbosity, self-preference, subgroups) and the
human labels are not silently dropped. Recorded paths were written relative to the directory
the run was started from; they are looked up there (the current directory), then re-anchored on
where the run folder is now (the folder moved or copied with its dataset), and the dataset's
hash says whether the file found is the one judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError
from rich.console import Console

from jurybox.config import DatasetConfig, JudgeConfig, LabelsConfig
from jurybox.errors import ConfigError, DatasetError
from jurybox.io.datasets import dataset_hash, load_dataset, load_human_labels
from jurybox.io.label_log import LABELS_FILE
from jurybox.io.verdicts import companion_items_path, read_items
from jurybox.pipeline.manifest import MANIFEST_FILE, read_manifest
from jurybox.records import Item, JudgeRecord

if TYPE_CHECKING:
    from jurybox.io.record_table import Judgments


@dataclass(frozen=True)
class Source:
    """A file the analysis reads (or ``None``), where it came from, and anything to warn about."""

    path: Path | None
    origin: str  # "given", "manifest", "labelled", "none"
    note: str | None = None

    def line(self, what: str) -> str:
        """One line for the console: ``dataset: examples/items.jsonl (from manifest.json)``."""
        if self.path is None:
            said = f"{what}: none"
        else:
            said = f"{what}: {self.path}" + _ORIGINS.get(self.origin, " (given)")
        return said + (f"; {self.note}" if self.note else "")


_ORIGINS = {"manifest": " (from manifest.json)", "labelled": " (written by jurybox label)"}


@dataclass(frozen=True)
class RunSources:
    """The dataset (and how to read its columns) and the labels an analysis uses (and how to
    read theirs: the run config's ``labels:`` section)."""

    dataset: Source
    human: Source
    dataset_config: DatasetConfig | None = None
    labels_config: LabelsConfig | None = None


def say_sources(sources: RunSources, console: Console) -> None:
    """Which dataset and labels were read, so a check left out is never silent."""
    for what, source in (("dataset", sources.dataset), ("human labels", sources.human)):
        if source.path is not None or source.note is not None:
            console.print(source.line(what), markup=False, soft_wrap=True)


def run_sources(
    judgments: Path,
    *,
    dataset: Path | None,
    human: Path | None,
    labels: LabelsConfig | None = None,
) -> RunSources:
    """The dataset and labels for ``judgments`` (a judgments.jsonl path): the ones given, else
    the ones the run folder's manifest names. Without a manifest (an import), nothing is added.
    Labels are read as ``labels`` says, else as the run config's ``labels:`` section does."""
    labelled = judgments.parent / LABELS_FILE  # `jurybox label`'s file in the run folder
    human_source = _given(human) or (Source(labelled, "labelled") if labelled.is_file() else None)
    try:
        manifest = read_manifest(judgments.parent / MANIFEST_FILE) or {}
    except DatasetError as exc:  # the judgments are still analysable: say what is missing
        unreadable = Source(None, "none", f"{exc}: pass --dataset / --human")
        return RunSources(
            _given(dataset) or unreadable, human_source or unreadable, labels_config=labels
        )
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    if dataset is not None and human is not None:
        given = RunSources(Source(Path(dataset), "given"), Source(Path(human), "given"))
        return replace(given, labels_config=labels or _section(config or {}, LabelsConfig))
    anchor = _run_cwd(judgments.parent, manifest)
    return RunSources(
        dataset=_given(dataset) or _recorded_dataset(manifest, anchor),
        human=human_source or _recorded_labels(manifest, config or {}, anchor),
        dataset_config=_section(config or {}, DatasetConfig) if dataset is None else None,
        labels_config=labels or _section(config or {}, LabelsConfig),
    )


def _given(path: Path | None) -> Source | None:
    return Source(Path(path), "given") if path is not None else None


_SECTIONS: dict[type[DatasetConfig | LabelsConfig], str] = {
    DatasetConfig: "dataset",
    LabelsConfig: "labels",
}


_S = TypeVar("_S", DatasetConfig, LabelsConfig)


def _section(config: Mapping[str, Any], kind: type[_S]) -> _S | None:
    """The run's column mapping (``dataset:``) or label reading (``labels:``), from the config
    snapshot: the files read as the run read them."""
    section = config.get(_SECTIONS[kind])
    return kind.model_validate(section) if isinstance(section, dict) else None


def _run_cwd(run_dir: Path, manifest: Mapping[str, Any]) -> Path | None:
    """Where the run was started from, as seen from where the run folder is now: the run
    folder with its recorded (relative) path taken off its end. ``None`` when unknowable."""
    recorded = manifest.get("output_dir") or _default_output_dir(manifest)
    if not recorded or Path(recorded).is_absolute():
        return None
    parts = Path(recorded).parts
    here = run_dir.resolve()
    if ".." in parts or len(here.parts) <= len(parts) or here.parts[-len(parts) :] != parts:
        return None
    return Path(*here.parts[: -len(parts)])


def _default_output_dir(manifest: Mapping[str, Any]) -> str | None:
    """For manifests that predate ``output_dir``: the config's folder + ``paths.output_dir``
    (right unless the run was given ``--output-dir``; the hash check catches the rest)."""
    config_path, paths = manifest.get("config_path"), _paths(manifest.get("config") or {})
    output = paths.get("output_dir")
    if not isinstance(config_path, str) or not isinstance(output, str):
        return None
    return str(Path(config_path).parent / output)


def _paths(config: Mapping[str, Any]) -> Mapping[str, Any]:
    paths = config.get("paths")
    return paths if isinstance(paths, dict) else {}


def _candidates(recorded: str, anchor: Path | None) -> Iterator[Path]:
    path = Path(recorded)
    yield path
    if anchor is not None and not path.is_absolute():
        yield anchor / path


def _recorded_dataset(manifest: Mapping[str, Any], anchor: Path | None) -> Source:
    entry = manifest.get("dataset")
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        return Source(None, "none")
    recorded, expected = entry["path"], entry.get("hash")
    found = [path for path in _candidates(recorded, anchor) if path.is_file()]
    for path in found:
        if expected is None or dataset_hash(path) == expected:
            return Source(path, "manifest")
    if found:
        note = "it changed since the run (hash differs): figures joined to it may be off"
        return Source(found[0], "manifest", note)
    return Source(None, "none", f"manifest.json names {recorded}, not found: pass --dataset")


def _recorded_labels(
    manifest: Mapping[str, Any], config: Mapping[str, Any], anchor: Path | None
) -> Source:
    recorded = manifest.get("human_labels") or _labels_from_config(manifest, config)
    if not isinstance(recorded, str):
        return Source(None, "none")
    for path in _candidates(recorded, anchor):
        if path.is_file():
            return Source(path, "manifest")
    return Source(None, "none", f"manifest.json names {recorded}, not found: pass --human")


def _labels_from_config(manifest: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """``paths.human_labels`` is relative to the config file, recorded as ``config_path``."""
    labels, config_path = _paths(config).get("human_labels"), manifest.get("config_path")
    if not isinstance(labels, str):
        return None
    if Path(labels).is_absolute() or not isinstance(config_path, str):
        return labels
    return str(Path(config_path).parent / labels)


def recorded_config_path(judgments: Path, manifest: Mapping[str, Any]) -> str | None:
    """The run's config file as its manifest records it, looked up as the dataset is (here,
    then re-anchored on where the run folder is now); the recorded path when not found. What
    the config's relative paths (rubric, criteria) are resolved against."""
    recorded = manifest.get("config_path")
    if not isinstance(recorded, str):
        return None
    for path in _candidates(recorded, _run_cwd(judgments.parent, manifest)):
        if path.is_file():
            return str(path)
    return recorded


def run_judgments(run: Path, columns: Sequence[str] | None = None) -> tuple[Path, Judgments]:
    """The judgments file of ``run`` (a run folder, a judgments.jsonl or an export's Parquet
    file) and its records, one per key, as the record table (``read_judgments``) of
    ``columns`` (default: all).

    Raises:
        DatasetError: no judgments file, a bad record, or a file without a record.
    """
    from jurybox.io.judgments import judgments_path  # noqa: PLC0415
    from jurybox.io.record_table import read_judgments  # noqa: PLC0415  (pyarrow: not in run)

    path = judgments_path(run)
    judged = read_judgments(path, columns)
    if not len(judged):
        raise DatasetError("no judgment records in the file", path=str(path))
    return path, judged


def run_records(run: Path) -> tuple[Path, list[JudgeRecord]]:
    """``run_judgments``' file and records, held in memory as a list: for the use cases that
    need them so (a cascade, a labelling session).

    Raises:
        DatasetError: no judgments file, a bad record, or a file without a record.
    """
    path, judged = run_judgments(run)
    return path, judged.records()


def run_items(judgments: Path, sources: RunSources) -> list[Item] | None:
    """The dataset (given, or the run's per its manifest), else the companion items an
    ``import`` wrote beside the records, else ``None``."""
    if sources.dataset.path is not None:
        return load_dataset(sources.dataset.path, sources.dataset_config, sources.labels_config)
    companion = companion_items_path(judgments)
    return read_items(companion) if companion.is_file() else None


def run_labels(sources: RunSources) -> dict[str, Mapping[str, Any]] | None:
    """The labels file's entries by item id, or ``None`` without one."""
    if sources.human.path is None:
        return None
    # `jurybox label` writes jurybox's own keys and the run's arm names: the ``labels:``
    # section describes the user's own file, and is not applied to that one.
    labelled = sources.human.origin == "labelled"
    return load_human_labels(sources.human.path, None if labelled else sources.labels_config)


def run_judges(judgments: Path) -> dict[str, JudgeConfig]:
    """The judges of the run that wrote ``judgments``, as its manifest records them (batch
    savings are priced at their synchronous prices); empty without a readable manifest. A judge
    whose settings no longer validate is left out (its saving is then assumed, and says so)."""
    try:
        manifest = read_manifest(judgments.parent / MANIFEST_FILE) or {}
    except DatasetError:
        return {}
    config = manifest.get("config")
    judges = config.get("judges") if isinstance(config, dict) else None
    if not isinstance(judges, dict):
        return {}
    found = {}
    for name, settings in judges.items():
        try:
            found[str(name)] = JudgeConfig.model_validate(settings)
        except ValidationError:
            continue
    return found


@dataclass(frozen=True)
class RunTask:
    """What a run judged, as its manifest records it: the mode, the run id and the config's
    folder candidates (where its rubric and criteria paths are read from)."""

    mode: str | None
    run_id: str | None
    task: Mapping[str, Any]
    folders: tuple[Path, ...]


def run_task(judgments: Path) -> RunTask:
    """The task section of the run that wrote ``judgments`` (empty without a manifest)."""
    try:
        manifest = read_manifest(judgments.parent / MANIFEST_FILE) or {}
    except DatasetError:
        manifest = {}
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    task = (config or {}).get("task")
    task = task if isinstance(task, dict) else {}
    config_path = manifest.get("config_path")
    base = Path(config_path).parent if isinstance(config_path, str) else Path()
    folders = tuple(_candidates(str(base), _run_cwd(judgments.parent, manifest)))
    mode, run_id = task.get("mode"), manifest.get("run_id")
    return RunTask(
        mode=mode if isinstance(mode, str) else None,
        run_id=run_id if isinstance(run_id, str) else None,
        task=task,
        folders=folders,
    )


def run_stopping(judgments: Path) -> dict[str, Any] | None:
    """The manifest's ``until`` entry of a ``jurybox run --until`` run (where each judge
    stopped, with its anytime-valid interval); None for any other run or without a manifest."""
    try:
        manifest = read_manifest(judgments.parent / MANIFEST_FILE) or {}
    except DatasetError:
        return None
    entry = manifest.get("until")
    return entry if isinstance(entry, dict) and isinstance(entry.get("judges"), dict) else None


def declared_scale(judgments: Path) -> tuple[int, int] | None:
    """The rubric's (min, max) scale, when the run that wrote ``judgments`` scored with a rubric
    (its manifest names it, relative to the config file, itself found as the dataset is). None
    without a manifest, for unscored modes, or when the rubric cannot be read here: weighted
    kappa, AC2 and the plots then span the observed scores, and their ``method`` says so."""
    from jurybox.rubrics.model import load_rubric  # noqa: PLC0415  (rubric runs only)

    try:
        manifest = read_manifest(judgments.parent / MANIFEST_FILE) or {}
    except DatasetError:
        return None
    config = manifest.get("config") if isinstance(manifest.get("config"), dict) else {}
    task = (config or {}).get("task")
    if not isinstance(task, dict) or not isinstance(task.get("rubric"), str):
        return None
    if task.get("mode") != "rubric" and not task.get("pairwise_with_rubric"):
        return None
    config_path = manifest.get("config_path")
    base = Path(config_path).parent if isinstance(config_path, str) else Path()
    for folder in _candidates(str(base), _run_cwd(judgments.parent, manifest)):
        try:
            return load_rubric(task["rubric"], base_dir=folder, env={}).scale
        except (ConfigError, OSError):
            continue
    return None
