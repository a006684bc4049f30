"""Criteria for binary Pass/Fail judges: one atomic failure mode each, with few-shot examples.

A criterion names exactly one failure mode, says why it matters, defines Pass and Fail, lists
decision rules for the hard cases, and carries labelled examples (each with an optional ``id`` so
that a later train/dev/test split can check for leakage) and the judge's target TPR/TNR.

Grounding examples are written inline (``examples``) or taken from the train split by item id
(``train_examples``, resolved by ``jurybox.devloop``). A criterion of ``kind: code`` is judged by a
deterministic ``check`` (regex, keywords, length, JSON / JSON Schema, a Python callable; see
``jurybox.evaluators``) instead of a model.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from jurybox.errors import ConfigError
from jurybox.rubrics.model import read_yaml_mapping, validation_error

_ID = re.compile(r"^[A-Za-z0-9][\w.-]*$")
_LABEL = re.compile(r"^[\w][\w .-]*$")


def _matching(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{what} {value!r} must match {pattern.pattern}")
        return value

    return AfterValidator(check)


_ExampleId = Annotated[str, _matching(_ID, "example id")]
_ExampleLabel = Annotated[str, _matching(_LABEL, "example label")]


class _Frozen(BaseModel):
    # defer_build: the validators are built on first use, so a run that loads no rubric or
    # criterion file (a plain pairwise run) does not build them before its first request.
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)


class FewShotExample(_Frozen):
    """A labelled example shown to the judge."""

    id: _ExampleId | None = Field(None, description="Stable id, used for split-leakage checks.")
    input: str = Field(
        validation_alias=AliasChoices("input", "question"),
        description="The user input / question (YAML key `input` or `question`).",
    )
    response: str
    answer: Literal["Pass", "Fail"]
    reasoning: str = Field(min_length=1, description="Why the answer is right: shown as few-shot.")
    label: _ExampleLabel | None = Field(None, description="Free tag such as 'borderline'.")

    @field_validator("answer", mode="before")
    @classmethod
    def _normalise_answer(cls, value: object) -> object:
        # "pass" / "PASS" in a hand-written YAML file mean the same thing as "Pass".
        return value.strip().capitalize() if isinstance(value, str) else value


class ExampleRef(_Frozen):
    """A grounding example taken from the train split by item id (question, response and the
    human label come from the split; the reasoning shown to the judge is written here)."""

    id: _ExampleId = Field(description="Item id in the train split.")
    reasoning: str = Field(min_length=1, description="Why the human label is right.")
    label: _ExampleLabel | None = Field(None, description="Free tag such as 'borderline'.")


class RegexCheck(_Frozen):
    """Pass when ``pattern`` is found (``expect: present``) or not found (``expect: absent``)."""

    type: Literal["regex"]
    pattern: str = Field(min_length=1, description="Python regular expression (re.search).")
    expect: Literal["present", "absent"] = "present"
    ignore_case: bool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression {value!r}: {exc}") from None
        return value


class KeywordsCheck(_Frozen):
    """Pass when ``all`` / ``any`` of the keywords occur, or (``none``) when none does."""

    type: Literal["keywords"]
    keywords: tuple[str, ...] = Field(min_length=1)
    require: Literal["all", "any", "none"] = "all"
    case_sensitive: bool = False

    @field_validator("keywords")
    @classmethod
    def _non_empty(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not keyword.strip() for keyword in value):
            raise ValueError("keywords must not be empty strings")
        return value


class LengthCheck(_Frozen):
    """Pass when the response's length (words or characters) is within [min, max]."""

    type: Literal["length"]
    unit: Literal["words", "chars"] = "words"
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> LengthCheck:
        if self.min is None and self.max is None:
            raise ValueError("a length check needs `min`, `max` or both")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) is greater than max ({self.max})")
        return self


class JsonCheck(_Frozen):
    """Pass when the response is valid JSON and, given a schema, valid against it."""

    type: Literal["json"]
    json_schema: dict[str, Any] | None = Field(None, description="Inline JSON Schema.")
    json_schema_file: str | None = Field(
        None, description="JSON Schema file, relative to the criterion file."
    )
    allow_fenced: bool = Field(False, description="Accept one ```json fenced block around it.")

    @model_validator(mode="after")
    def _one_schema(self) -> JsonCheck:
        if self.json_schema is not None and self.json_schema_file is not None:
            raise ValueError("give json_schema or json_schema_file, not both")
        return self


class PythonCheck(_Frozen):
    """A user's function ``module:function``, imported from the criterion file's folder."""

    type: Literal["python"]
    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


CodeCheck = Annotated[
    RegexCheck | KeywordsCheck | LengthCheck | JsonCheck | PythonCheck, Field(discriminator="type")
]


class Targets(_Frozen):
    """The judge's required TPR and TNR, Pass being the positive class as in ``jurybox.stats``:
    TPR = P(judge Pass | human Pass), TNR = P(judge Fail | human Fail)."""

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
    kind: Literal["llm", "code"] = Field("llm", description="Judged by a model or by `check`.")
    check: CodeCheck | None = Field(None, description="`kind: code`: the deterministic check.")
    train_examples: tuple[ExampleRef, ...] = Field(
        (), description="Grounding examples by train-split item id (resolved by the devloop)."
    )

    @field_validator("examples")
    @classmethod
    def _unique_ids(cls, examples: tuple[FewShotExample, ...]) -> tuple[FewShotExample, ...]:
        ids = [e.id for e in examples if e.id is not None]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"example ids must be unique, repeated: {duplicates}")
        return examples

    @model_validator(mode="after")
    def _kind_matches_check(self) -> Criterion:
        if self.kind == "code" and self.check is None:
            raise ValueError("a criterion of kind 'code' needs a `check`")
        if self.kind == "llm" and self.check is not None:
            raise ValueError("`check` is only for criteria of kind 'code'")
        if self.kind == "code" and (self.examples or self.train_examples):
            raise ValueError("a code criterion shows no few-shot examples; remove `examples`")
        ids = [e.id for e in self.examples if e.id is not None]
        shared = sorted({ref.id for ref in self.train_examples} & set(ids))
        refs = [ref.id for ref in self.train_examples]
        repeated = sorted({i for i in refs if refs.count(i) > 1})
        if shared or repeated:
            raise ValueError(f"example ids must be unique, repeated: {shared or repeated}")
        return self


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
