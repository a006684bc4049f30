"""Run one criterion over one dataset through the ordinary pipeline and collect its verdicts.

Each (criterion, dataset, prompt hash) gets its own run folder, so a repeated command resumes it
(a finished run makes no calls) and a changed prompt never mixes with the old judgments. The
criterion the judge reads is written, resolved, to ``<criterion>/prompts/<hash>/`` and the run
names that file: the judgments point at exactly the prompt that produced them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from jurybox.config import JudgeConfig, RunConfig, config_from_mapping
from jurybox.devloop.config import CriterionSetup, Devloop
from jurybox.errors import ParseError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.datasets import dataset_hash, load_dataset
from jurybox.io.judgments import read_records
from jurybox.modes.code import CodeProvider
from jurybox.modes.criterion import judgment_of
from jurybox.pipeline.runner import Runtime, run_async
from jurybox.providers.base import Provider
from jurybox.records import JudgeRecord, Status

# Stands in for a code criterion's judge in the run config. The criterion mode answers code
# criteria with its check (records say judge_vendor "code"); injecting a CodeProvider as the
# judge also keeps this fake from ever being built (the manifest names the code judge).
_CODE_JUDGE = JudgeConfig(provider="fake", model="code")


@dataclass(frozen=True)
class Judged:
    """One criterion's verdicts on one dataset."""

    records: tuple[JudgeRecord, ...]  # this dataset's items only (a --limit may cut it)
    run_dir: Path
    provider_calls: int
    elapsed_s: float

    @property
    def verdicts(self) -> dict[str, str]:
        """query id -> "Pass"/"Fail" for the records that answered."""
        return {r.query_id: r.verdict for r in self.records if _answered(r) and r.verdict}

    @property
    def failures(self) -> dict[str, str]:
        """query id -> "status: error" for the records that did not."""
        return {
            r.query_id: f"{r.status.value}: {r.error}" for r in self.records if not _answered(r)
        }

    def reasoning(self, query_id: str) -> str:
        for record in self.records:
            if record.query_id == query_id:
                return record_reasoning(record)
        return ""


def _answered(record: JudgeRecord) -> bool:
    return record.status == Status.OK and record.verdict in ("Pass", "Fail")


def record_reasoning(record: JudgeRecord) -> str:
    """The judge's reasoning, as the criterion mode's typed result keeps it."""
    if not record.raw_response:
        return record.error or ""
    try:
        return judgment_of(record).reasoning or ""
    except ParseError:
        return record.raw_response


def prompt_file(loop: Devloop, setup: CriterionSetup) -> Path:
    """The criterion as run: the user's file for code checks (their Python and schema files sit
    beside it), else the resolved criterion with train examples written out."""
    if setup.is_code:
        return setup.source
    folder = loop.criterion_dir(setup) / "prompts" / setup.short_hash
    path = folder / f"{setup.name}.yaml"
    if not path.exists():
        data = setup.criterion.model_dump(mode="json", exclude_defaults=True)
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
        write_text_atomic(
            path, f"# resolved from {setup.source}; prompt {setup.prompt_hash}\n{text}"
        )
    return path


def run_config(loop: Devloop, setup: CriterionSetup, dataset: Path, out_dir: Path) -> RunConfig:
    judge = _CODE_JUDGE if setup.is_code else setup.judge
    data: dict[str, Any] = {
        "judges": {setup.name: judge},
        "task": {"mode": "criterion", "criteria": [str(prompt_file(loop, setup).resolve())]},
        "pipeline": {
            "random_seed": loop.config.random_seed,
            "max_tokens": loop.config.max_tokens,
            "test_retest_count": 0,
            "cache_path": str((loop.criterion_dir(setup) / "cache.sqlite").resolve()),
        },
        "paths": {"dataset": str(dataset.resolve()), "output_dir": str(out_dir.resolve())},
    }
    return config_from_mapping(data, source=str(loop.path))


def run_folder(loop: Devloop, setup: CriterionSetup, kind: str, dataset: Path) -> Path:
    """``<criterion>/runs/<kind>-<dataset hash>-<prompt hash>``: one folder per experiment."""
    name = f"{kind}-{dataset_hash(dataset)[:8]}-{setup.short_hash}"
    return loop.criterion_dir(setup) / "runs" / name


def judge_dataset(
    loop: Devloop,
    setup: CriterionSetup,
    dataset: Path,
    *,
    kind: str,
    limit: int | None = None,
    console: Console | None = None,
    providers: Mapping[str, Provider] | None = None,
) -> Judged:
    """Judge ``dataset`` (its first ``limit`` items) with one criterion; resumes its folder.

    ``providers`` (tests, embedding) maps a criterion name to a ready-made provider.
    """
    out_dir = run_folder(loop, setup, kind, dataset)
    config = run_config(loop, setup, dataset, out_dir)
    injected: dict[str, Provider] = dict(providers or {})
    if setup.is_code:
        injected = {setup.name: CodeProvider()}
    summary = asyncio.run(
        run_async(
            config,
            output_dir=out_dir,
            resume=True,
            limit=limit,
            console=console,
            runtime=Runtime(providers={k: v for k, v in injected.items() if k == setup.name}),
        )
    )
    wanted = {item.id for item in load_dataset(dataset)[:limit]}
    records = tuple(r for r in read_records(summary.judgments_path) if r.query_id in wanted)
    return Judged(records, out_dir, summary.provider_calls, summary.elapsed_s)
