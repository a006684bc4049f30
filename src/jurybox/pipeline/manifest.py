"""manifest.json: what a run was (config, dataset, versions) and what it produced (totals).

Written atomically (temp file + ``os.replace``) at the start of every session and at its end, so
a killed run still leaves a readable manifest with its run_id. Resume checks the manifest: a run
may be continued with other scheduling settings (concurrency, limits, retries, prices), but not
with settings that change the judgments, which would mix two experiments in one file.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)

from jurybox.config import RunConfig, dump_config, judgment_fields
from jurybox.errors import ConfigError, DatasetError
from jurybox.io.atomic import write_text_atomic
from jurybox.pricing import format_cost
from jurybox.records import JudgeRecord, Status
from jurybox.redaction import redact_value
from jurybox.versions import installed_version

MANIFEST_FILE = "manifest.json"
_PACKAGES = (
    "jurybox",
    "pydantic",
    "openai",
    "aiohttp",
    "anthropic",
    "google-genai",
    "llama-cpp-python",
)
# Settings that only schedule or price the work: a resume may change them.
_SCHEDULING_PIPELINE = (
    "concurrency",
    "max_retries",
    "retry_base_s",
    "retry_after_cap_s",
    "cache",
    "cache_path",
    "batch",
    "batch_fallback",
    "batch_poll_s",
    "batch_poll_max_s",
)


def package_versions() -> dict[str, str]:
    """Python and the installed versions of the packages that shape a run."""
    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        version = installed_version(name)
        if version is not None:
            versions[name] = version
    return versions


def write_manifest(path: Path, data: Mapping[str, Any]) -> None:
    """Write JSON atomically (``io.atomic``): a reader sees the old manifest or the new one,
    never half of one; known secrets are redacted on the way.

    On any ``OSError`` (disk full, unwritable directory) the temp file is removed, the old
    manifest is left as it was, and the error raised names ``path``.
    """
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def is_run_manifest(data: Mapping[str, Any]) -> bool:
    """Whether ``data`` is a manifest a jurybox run wrote (its run id, sessions and config):
    the only manifest.json a run replaces."""
    return (
        isinstance(data.get("run_id"), str)
        and isinstance(data.get("sessions"), list)
        and isinstance(data.get("config"), dict)
    )


def read_manifest(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not valid JSON ({exc.msg})", path=str(path), line=exc.lineno) from None
    if not isinstance(data, dict):
        raise DatasetError("expected a JSON object", path=str(path))
    return data


def config_snapshot(config: RunConfig) -> dict[str, Any]:
    """The config as the manifest stores it: credentials (``user:pass@`` in a ``base_url``, a
    key in ``extra_body``) redacted. Both sides of the resume check use this same form."""
    snapshot: dict[str, Any] = redact_value(json.loads(dump_config(config)))
    return snapshot


def _judgment_settings(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a config snapshot that decides the judgments."""
    pipeline = {
        k: v for k, v in snapshot.get("pipeline", {}).items() if k not in _SCHEDULING_PIPELINE
    }
    # Which judge settings count is declared on JudgeConfig itself (its ``Affects`` markers).
    kept = judgment_fields()
    judges = {
        name: {k: v for k, v in judge.items() if k in kept}
        for name, judge in snapshot.get("judges", {}).items()
    }
    rest = {k: snapshot.get(k) for k in ("task", "scoring", "dataset")}
    # A task setting left empty is the one a run started before it existed had: a manifest
    # without `examples` (added by issue 37) resumes under a config without them.
    task = rest.get("task")
    if isinstance(task, Mapping):
        rest["task"] = {k: v for k, v in task.items() if v not in (None, [], {})}
    return {"pipeline": pipeline, "judges": judges, **rest}


def _prompt_texts(entry: Any) -> Any:
    """The text of a manifest's ``prompt`` entry (instructions, templates), paths left out: a
    moved file with the same text judges the same."""
    if not isinstance(entry, Mapping):
        return None
    template = entry.get("template")
    if isinstance(template, Mapping):
        template = {part: (v.get("text") if isinstance(v, Mapping) else v)
                    for part, v in template.items()}  # fmt: skip
    return {"instructions": entry.get("instructions"), "template": template}


def check_resumable(
    manifest: Mapping[str, Any],
    config: RunConfig,
    dataset_hash: str,
    prompt: Mapping[str, Any] | None = None,
) -> None:
    """Refuse to resume a run whose judgments the new config or dataset would not reproduce.

    ``prompt`` is the run's own prompt as read now (``PromptSources.manifest_entry``): its text
    must be the text the run started with, whatever the config's paths say."""
    old = _judgment_settings(manifest.get("config", {}))
    new = _judgment_settings(config_snapshot(config))
    changed = [section for section in new if old.get(section) != new[section]]
    if _prompt_texts(manifest.get("prompt")) != _prompt_texts(prompt):
        changed.append("the instructions or template text")
    if changed:
        raise ConfigError(
            f"cannot resume: {', '.join(changed)} differ from the run's manifest; resume with "
            "the original config, or start a new run in another directory",
            path=config.source_path,
        )
    old_hash = manifest.get("dataset", {}).get("hash")
    if old_hash is not None and old_hash != dataset_hash:
        raise DatasetError(
            "cannot resume: the dataset changed since the run started (hash differs); "
            "start a new run in another directory",
            path=str(manifest.get("dataset", {}).get("path")),
        )


def totals(records: Iterable[JudgeRecord]) -> dict[str, Any]:
    """Counts by status and token/cost totals over a judgments file."""
    running = RunningTotals()
    for record in records:
        running.add(record)
    return running.as_dict()


class RunningTotals:
    """``totals`` kept up to date one record at a time, so a run that starts from the file's
    totals and adds each record it writes never has to read the file back at the end."""

    def __init__(self) -> None:
        self.counts = {status.value: 0 for status in Status}
        self.input_tokens = self.output_tokens = self.cached_hit_input = self.cache_hits = 0
        self.cost: float | None = None
        self.unpriced: set[str] = set()  # judges with answers but no cost: no price for them
        self.local = False
        self.batch_records = 0

    def add(self, record: JudgeRecord) -> None:
        self.counts[record.status.value] += 1
        self.input_tokens += record.input_tokens or 0
        self.output_tokens += record.output_tokens or 0
        if record.cache_hit:
            self.cache_hits += 1
            self.cached_hit_input += record.input_tokens or 0
        if record.cost_usd is not None:
            self.cost = (self.cost or 0.0) + record.cost_usd
        elif record.input_tokens is not None or record.output_tokens is not None:
            self.unpriced.add(record.judge_name)
        self.local = self.local or record.local_judge
        self.batch_records += record.batch_id is not None

    def as_dict(self) -> dict[str, Any]:
        tokens_in = self.input_tokens
        return {
            "records": sum(self.counts.values()),
            "status_counts": dict(self.counts),
            "parse_failures": self.counts[Status.UNPARSED.value],
            "input_tokens": tokens_in,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost,
            "unpriced_judges": sorted(self.unpriced),
            "cost": format_cost(self.cost, sorted(self.unpriced)),  # as every output writes it
            "cache_hits": self.cache_hits,
            "cache_input_share": self.cached_hit_input / tokens_in if tokens_in else None,
            "local_judge_used": self.local,
            "batch_records": self.batch_records,
        }


def _config_or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> RunConfig | None:
    """A config snapshot that no longer validates (an older jurybox wrote it) reads as None."""
    try:
        config: RunConfig | None = handler(value)
    except ValidationError:
        return None
    return config


class ManifestDataset(BaseModel):
    """The manifest's ``dataset`` entry: the file judged, its hash and how many items."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    path: str | None = None
    hash: str | None = None
    items: int | None = None


class RunManifest(BaseModel):
    """What a reader outside the run (``jurybox view``) reads of a manifest.json, typed; the
    rest of the file is ignored. ``status``: running, complete, interrupted or failed (a run
    killed without a word stays ``running``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    run_id: str
    status: str = "unknown"
    started_at: str | None = None
    finished_at: str | None = None
    dataset: ManifestDataset | None = None
    units_planned: int | None = None
    records: int | None = None
    cost_usd: float | None = None
    config: Annotated[RunConfig | None, WrapValidator(_config_or_none)] = None

    @classmethod
    def read(cls, path: Path) -> RunManifest | None:
        """``path``'s manifest, typed, when it is a jurybox run's; None when there is no file or
        it is another program's manifest.json (``run_dir.read_run_manifest`` refuses that one:
        a run would replace it).

        Raises:
            DatasetError: not JSON, or a run's manifest whose fields are not what a run writes.
        """
        data = read_manifest(path)
        if data is None or not is_run_manifest(data):
            return None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(part) for part in error["loc"])
            raise DatasetError(str(error["msg"]), path=str(path), field=field) from None
