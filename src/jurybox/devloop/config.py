"""The judge-development config: criteria (one judge each), the labelled split, the judge model.

```yaml
split: split                 # folder written by `jurybox split` (relative to this file)
run_dir: runs                # history, frozen state, judgments and reports
judge: {provider: local}     # the model that runs every LLM criterion
criteria:                    # code criteria run first: free and deterministic
  - has_pointer.yaml
  - {path: next_step.yaml, split: other_split}   # a criterion with labels of its own
traces: ../traces.jsonl      # default unlabelled traces for `jurybox estimate`
```

Loading resolves every criterion: ``train_examples`` are written out from the train split, every
few-shot example is leak-checked against dev and test, and the prompt hash is computed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from jurybox.config import JudgeConfig, answer_identity, read_yaml_mapping
from jurybox.devloop.leakage import resolve_examples
from jurybox.devloop.split import LoadedSplit, load_split
from jurybox.errors import ConfigError
from jurybox.evaluators import check_fingerprint
from jurybox.prompts import criterion_prompt
from jurybox.records import Item
from jurybox.rubrics.criteria import Criterion, load_criterion
from jurybox.rubrics.model import validation_error


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CriterionEntry(_Frozen):
    path: str = Field(description="Criterion YAML, relative to the config file.")
    split: str | None = Field(None, description="This criterion's own labelled split folder.")


class DevloopConfig(_Frozen):
    """The whole judge-development YAML file."""

    split: str = Field(description="Default split folder (`jurybox split --out`).")
    run_dir: str = Field("results/devloop", description="History, frozen state, runs, reports.")
    judge: JudgeConfig | None = Field(None, description="Model for the LLM criteria.")
    criteria: tuple[CriterionEntry, ...] = Field(min_length=1)
    traces: str | None = Field(None, description="Default unlabelled traces for `estimate`.")
    random_seed: int = Field(42, description="Seeds the pipeline and the bootstrap.")
    max_tokens: int = Field(512, gt=0, description="Judge output budget per call.")
    confidence: float = Field(0.95, gt=0, lt=1, description="Level of every interval.")
    source_path: Annotated[str | None, Field(exclude=True)] = None

    @field_validator("criteria", mode="before")
    @classmethod
    def _paths_as_entries(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return [{"path": entry} if isinstance(entry, str) else entry for entry in value]
        return value

    def resolve(self, relative: str) -> Path:
        path = Path(relative)
        if path.is_absolute() or self.source_path is None:
            return path
        # normpath: "examples/devloop/../../results" prints as "results"
        return Path(os.path.normpath(Path(self.source_path).parent / path))


@dataclass(frozen=True)
class CriterionSetup:
    """One criterion ready to run: resolved, leak-checked, hashed."""

    name: str
    source: Path
    criterion: Criterion
    split: LoadedSplit
    prompt_hash: str
    judge: JudgeConfig | None  # None for code criteria

    @property
    def is_code(self) -> bool:
        return self.criterion.kind == "code"

    @property
    def short_hash(self) -> str:
        return self.prompt_hash[:12]

    def describe(self) -> str:
        if self.criterion.check is not None:
            return f"code: {self.criterion.check.type}"
        assert self.judge is not None
        return f"llm: {self.judge.provider}" + (f"/{self.judge.model}" if self.judge.model else "")


@dataclass(frozen=True)
class Devloop:
    """A loaded config: its criteria in report order (code first), and where state lives."""

    config: DevloopConfig
    path: Path
    run_dir: Path
    criteria: tuple[CriterionSetup, ...]

    def criterion_dir(self, setup: CriterionSetup) -> Path:
        return self.run_dir / setup.name


def judge_identity(judge: JudgeConfig, max_tokens: int) -> dict[str, Any]:
    """The judge's answer-changing settings (``answer_identity``), its output budget resolved."""
    data = answer_identity(judge)
    data["max_tokens"] = judge.max_tokens or max_tokens
    return data


def llm_prompt_hash(criterion: Criterion, judge: JudgeConfig, max_tokens: int) -> str:
    """sha256 of what the judge reads (static prompt as rendered, user template around a probe
    item, answer schema) and of who reads it: another model is another judge."""
    probe = Item(id="probe", question="{question}", responses={"response": "{response}"})
    parts = criterion_prompt(criterion, probe, "response")
    payload = {
        "system": parts.system,
        "user": parts.user,
        "schema": parts.schema,
        "judge": judge_identity(judge, max_tokens),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _setup(
    entry: CriterionEntry, config: DevloopConfig, splits: dict[Path, LoadedSplit]
) -> CriterionSetup:
    source = config.resolve(entry.path)
    folder = config.resolve(entry.split or config.split)
    if folder not in splits:
        splits[folder] = load_split(folder)
    split = splits[folder]
    criterion = resolve_examples(load_criterion(source), split, source=str(source))
    if criterion.check is not None:
        digest = check_fingerprint(criterion.check, source.parent)
        return CriterionSetup(criterion.name, source, criterion, split, digest, None)
    if config.judge is None:
        raise ConfigError(
            f"criterion '{criterion.name}' needs a model: add `judge:` to the config",
            path=config.source_path,
            field="judge",
        )
    digest = llm_prompt_hash(criterion, config.judge, config.max_tokens)
    return CriterionSetup(criterion.name, source, criterion, split, digest, config.judge)


def load_devloop(path: str | Path) -> Devloop:
    """Read the config, then load, resolve, leak-check and hash every criterion."""
    path = Path(path)
    data, _ = read_yaml_mapping(path)  # missing, not UTF-8, not YAML: named errors
    try:
        config = DevloopConfig.model_validate({**data, "source_path": str(path)})
    except ValidationError as exc:
        raise validation_error(exc, str(path)) from None
    splits: dict[Path, LoadedSplit] = {}
    setups = [_setup(entry, config, splits) for entry in config.criteria]
    names = [setup.name for setup in setups]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ConfigError(f"criterion names must be unique: {repeated}", path=str(path))
    ordered = sorted(setups, key=lambda setup: not setup.is_code)  # stable: code first
    return Devloop(config, path, config.resolve(config.run_dir), tuple(ordered))
