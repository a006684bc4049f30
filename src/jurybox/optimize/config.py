"""The optimize config: which run config to tune, the candidates, the split, the budget.

```yaml
base: judge.yaml                 # a jurybox run config; its dataset holds the gold labels
judge: rules                     # the judge tuned (default: the config's only judge)
instructions: variants.yaml      # a YAML list of variants, or a folder of .md / .txt files
examples: {sizes: [2, 4], sets: 2}   # pairwise: few-shot sets drawn from train only
rubrics: [terse.yaml, strict.yaml]   # rubric mode: rubric wording variants
proposer: {judge: {provider: openai, model: gpt-4.1-mini}, rewrites: 3, train_items: 8}
split: {folder: optimize_split, train: 0.2, dev: 0.4, test: 0.4, seed: 42}
budget: {calls: 2000, usd: 5.0}  # or --budget-calls / --budget-usd
search: {eta: 2, min_items: 10, alpha: 0.05}
output_dir: results/optimize
```

Paths are relative to this file. The base config's own prompt (its instructions, no examples,
its rubric) is always candidate ``base``.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from jurybox.config import JudgeConfig, RunConfig, load_config, read_yaml_mapping
from jurybox.errors import ConfigError
from jurybox.rubrics.model import validation_error


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class ExampleSets(_Frozen):
    """Few-shot example sets drawn from the train split (pairwise mode)."""

    sizes: tuple[Annotated[int, Field(ge=1, le=20)], ...] = Field(
        (2,), min_length=1, description="Examples per set."
    )
    sets: int = Field(1, ge=1, le=10, description="Sets drawn per size (different train items).")


class Proposer(_Frozen):
    """A judge asked to rewrite the instructions; its prompt shows train items only."""

    judge: JudgeConfig
    rewrites: int = Field(3, ge=1, le=10, description="Rewrites asked for.")
    train_items: int = Field(8, ge=1, le=50, description="Labelled train items it is shown.")
    max_tokens: int = Field(2048, gt=0, description="Its output budget.")


class SplitSettings(_Frozen):
    folder: str = Field("optimize_split", description="Split folder and its test ledger.")
    train: float = Field(0.2, ge=0, le=1)
    dev: float = Field(0.4, gt=0, le=1)
    test: float = Field(0.4, gt=0, le=1)
    seed: int = Field(42, description="Seed of the first split (a new split takes the next).")

    @model_validator(mode="after")
    def _shares_sum_to_one(self) -> SplitSettings:
        if not math.isclose(self.train + self.dev + self.test, 1.0, abs_tol=1e-6):
            raise ValueError(
                f"train, dev and test must sum to 1, got {self.train} + {self.dev} + {self.test}"
            )
        return self


class BudgetSettings(_Frozen):
    calls: int | None = Field(None, gt=0, description="Most judge calls, test pass included.")
    usd: float | None = Field(None, gt=0, description="Most USD (the judges' prices' bound).")


class SearchSettings(_Frozen):
    eta: int = Field(2, ge=2, le=8, description="Successive halving keeps 1/eta per rung.")
    min_items: int = Field(10, ge=1, description="Fewest dev items of the first rung.")
    alpha: float = Field(0.05, gt=0, lt=1, description="Sign test level of the final choice.")
    confidence: float = Field(0.95, gt=0, lt=1, description="Level of every interval.")


class OptimizeConfig(_Frozen):
    """The whole optimize YAML file."""

    base: str = Field(description="The jurybox run config tuned (relative to this file).")
    judge: str | None = Field(None, description="Its judge to tune (default: the only one).")
    instructions: str | None = Field(None, description="Instruction variants: YAML or folder.")
    examples: ExampleSets | None = None
    rubrics: tuple[str, ...] = Field((), description="Rubric mode: rubric files to try.")
    proposer: Proposer | None = None
    split: SplitSettings = Field(default_factory=SplitSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    output_dir: str = Field("results/optimize", description="State, runs and the report.")


@dataclass(frozen=True)
class Optimize:
    """A loaded optimize config: the settings, the base run config, the judge tuned."""

    config: OptimizeConfig
    path: Path
    base: RunConfig
    judge: str
    sha256: str  # of the optimize file's text: a resume must find it unchanged

    def resolve(self, relative: str) -> Path:
        return resolve_beside(self.path, relative)

    @property
    def split_root(self) -> Path:
        """The split folder (absolute): its seeds' splits and the ledger of test passes."""
        return self.resolve(self.config.split.folder).resolve()


def resolve_beside(config_path: Path, relative: str) -> Path:
    """``relative`` from the folder of ``config_path`` (an absolute path as it is)."""
    path = Path(relative)
    if path.is_absolute():
        return path
    return Path(os.path.normpath(config_path.parent / path))


def load_optimize(path: str | Path) -> Optimize:
    """Read the optimize file and its base run config; errors name file, line and field."""
    path = Path(path)
    data, text = read_yaml_mapping(path)  # missing, not UTF-8, not YAML: named errors
    try:
        config = OptimizeConfig.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, str(path)) from None
    base = load_config(resolve_beside(path, config.base))
    judge = _judge(base, config.judge, path)
    if config.rubrics and base.task.mode != "rubric":
        raise ConfigError(
            f"rubric variants need task.mode rubric, the base config's is {base.task.mode}",
            path=str(path),
            field="rubrics",
        )
    if config.examples is not None and base.task.mode != "pairwise":
        raise ConfigError(
            "few-shot example sets are drawn for pairwise mode (a criterion keeps its examples "
            f"in its file); the base config's mode is {base.task.mode}",
            path=str(path),
            field="examples",
        )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Optimize(config, path, base, judge, digest)


def _judge(base: RunConfig, name: str | None, path: Path) -> str:
    if name is None:
        if len(base.judges) != 1:
            raise ConfigError(
                f"the base config has {len(base.judges)} judges: name the one to tune "
                f"(judge: one of {sorted(base.judges)})",
                path=str(path),
                field="judge",
            )
        return next(iter(base.judges))
    if name not in base.judges:
        raise ConfigError(
            f"no judge {name!r} in the base config (it has {sorted(base.judges)})",
            path=str(path),
            field="judge",
        )
    return name
