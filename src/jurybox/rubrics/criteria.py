"""Criteria for binary Pass/Fail judges: one atomic failure mode each, with few-shot examples.

A criterion names exactly one failure mode, says why it matters, defines Pass and Fail, lists
decision rules for the hard cases, and carries labelled examples (each with an optional ``id`` so
that a later train/dev/test split can check for leakage) and the judge's target TPR/TNR.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from jurybox.errors import ConfigError
from jurybox.rubrics.model import read_yaml_mapping, validation_error

_ID = re.compile(r"^[A-Za-z0-9][\w.-]*$")
_LABEL = re.compile(r"^[\w][\w .-]*$")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class FewShotExample(_Frozen):
    """A labelled example shown to the judge."""

    id: str | None = Field(None, description="Stable id, used for split-leakage checks.")
    input: str = Field(
        validation_alias=AliasChoices("input", "question"),
        description="The user input / question (YAML key `input` or `question`).",
    )
    response: str
    answer: Literal["Pass", "Fail"]
    reasoning: str = Field(min_length=1, description="Why the answer is right: shown as few-shot.")
    label: str | None = Field(None, description="Free tag such as 'borderline'.")

    @field_validator("answer", mode="before")
    @classmethod
    def _normalise_answer(cls, value: object) -> object:
        # "pass" / "PASS" in a hand-written YAML file mean the same thing as "Pass".
        return value.strip().capitalize() if isinstance(value, str) else value

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        if value is not None and not _ID.match(value):
            raise ValueError(f"example id {value!r} must match {_ID.pattern}")
        return value

    @field_validator("label")
    @classmethod
    def _valid_label(cls, value: str | None) -> str | None:
        if value is not None and not _LABEL.match(value):
            raise ValueError(f"example label {value!r} must match {_LABEL.pattern}")
        return value


class Targets(_Frozen):
    """The judge's required true-positive and true-negative rates (Fail is the positive)."""

    tpr: float | None = Field(None, ge=0.0, le=1.0)
    tnr: float | None = Field(None, ge=0.0, le=1.0)


class Criterion(_Frozen):
    """One atomic Pass/Fail criterion."""

    name: str = Field(pattern=r"^[A-Za-z][\w.-]*$")
    definition: str = Field(min_length=1, description="The one failure mode this checks.")
    why_it_matters: str = ""
    pass_definition: str = Field(min_length=1)
    fail_definition: str = Field(min_length=1)
    decision_rules: tuple[str, ...] = ()
    examples: tuple[FewShotExample, ...] = ()
    targets: Targets = Field(default_factory=Targets)

    @field_validator("examples")
    @classmethod
    def _unique_ids(cls, examples: tuple[FewShotExample, ...]) -> tuple[FewShotExample, ...]:
        ids = [e.id for e in examples if e.id is not None]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"example ids must be unique, repeated: {duplicates}")
        return examples


def load_criterion(path: str | Path) -> Criterion:
    """Read and validate a criterion YAML file; errors name the file and the field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("criterion file not found", path=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not valid UTF-8 ({exc.reason})", path=str(path)) from None
    data = read_yaml_mapping(text, str(path))
    try:
        return Criterion.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, str(path)) from None
