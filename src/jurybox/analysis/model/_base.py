"""Building blocks of the report model: frozen models that dump only the keys they were given.

A report key is either always there or added only when it applies (a family that was skipped has
no content, a metric that could not be computed has no interval). Optional keys are fields that
default to None and are left out of ``model_dump`` unless they were set (given to the
constructor or present in the validated data), so ``Report.model_validate(d).model_dump()`` is
``d`` again, key order included: ``analysis_report.json`` stays byte-compatible.

A metric keeps the key order of the flattened ``jurybox.stats`` result it came from: the result's
fields in order without the headline, then ``value``, ``n`` (when the result has no field of that
name), ``reason`` and ``warnings``, then whatever the family added. A metric that could not be
computed reads ``value, n, method, reason`` and then the family's additions.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

# A JSON number as the statistics produced it: a count stays 2, an estimate stays 2.0 (a plain
# ``float`` field would turn every integer into a float and change the file's bytes).
Number = int | float
# A label as judges and humans give it: an arm, "tie", Pass/Fail or a score.
Label = str | bool | int | float | None

BASE_KEYS = ("value", "n", "method", "reason")


class Model(BaseModel):
    """Frozen, closed (unknown keys are an error), dumps only the fields that were set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @classmethod
    def _dump_order(cls, fields_set: frozenset[str]) -> tuple[str, ...]:
        del fields_set  # the declared order; metrics choose between two orders
        return tuple(cls.model_fields)

    @classmethod
    def given(cls, **fields: Any) -> Self:
        """The model with the fields that are not None (the others stay out of the dump)."""
        return cls.model_validate({k: v for k, v in fields.items() if v is not None})

    @model_serializer(mode="wrap")
    def _present_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        given = frozenset(self.model_fields_set)
        return {key: data[key] for key in self._dump_order(given) if key in given}


class Skipped(Model):
    """A section or metric that could not be computed, with the reason."""

    status: Literal["skipped"]
    reason: str


class Section(Model):
    """A family or sub-section: computed (content fields set) or skipped (``reason`` set)."""

    status: Literal["computed", "skipped"]
    reason: str | None

    @property
    def computed(self) -> bool:
        """Whether the section holds content."""
        return self.status == "computed"

    @classmethod
    def of(cls, **content: Any) -> Self:
        """The section computed, with its content."""
        return cls(status="computed", reason=None, **content)

    @classmethod
    def skip(cls, reason: str, **extra: Any) -> Self:
        """The section skipped, with the reason (and any fields a skipped section keeps)."""
        return cls(status="skipped", reason=reason, **extra)


class Metric(Model):
    """One number with its sample size, how it was computed, and why it is null when it is.

    Subclasses declare their specific fields (``None`` unless set) and either ``result_type`` (a
    ``jurybox.stats`` result: the computed key order derives from its fields and ``headline``) or
    ``computed_order`` (a metric built here). ``leading`` keys come before the metric's own.
    """

    value: Number | None
    n: int
    method: str | None
    reason: str | None
    warnings: list[str] | None = None

    result_type: ClassVar[type | None] = None
    computed_order: ClassVar[tuple[str, ...]] = ()
    leading: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _dump_order(cls, fields_set: frozenset[str]) -> tuple[str, ...]:
        core = _core_order(cls)
        specific = set(core) - {*BASE_KEYS, "warnings"}
        head = core if fields_set & specific else BASE_KEYS
        rest = [k for k in cls.model_fields if k not in {*cls.leading, *core, *BASE_KEYS}]
        return (*cls.leading, *head, *rest)


@cache
def _core_order(cls: type[Metric]) -> tuple[str, ...]:
    """The keys of a computed metric, in the order the flattened stats result has them."""
    if cls.result_type is None:
        return cls.computed_order or (*BASE_KEYS, "warnings")
    names = [f.name for f in dataclasses.fields(cls.result_type)]
    headline: str = cls.result_type.headline  # type: ignore[attr-defined]
    own = [name for name in names if name != headline]
    return (*own, "value", *([] if "n" in names else ["n"]), "reason", "warnings")
