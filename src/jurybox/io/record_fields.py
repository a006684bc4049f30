"""What a line of judgments.jsonl must hold, derived from ``JudgeRecord`` itself, and the check of
one line against it.

``record_fields()`` reads each field's annotation (``str``, ``int``, ``float``, ``bool``, the
``Status`` enum, ``Mapping[str, X]``, ``list[X]``, any of them ``| None``) and its default; the
record table's Arrow schema (``io/record_table.py``) and this line check are both made from it,
so neither keeps a list of fields of its own. The rules, for every reader of the file:

- a field absent from a line reads as null (JSON cannot tell them apart in a table either); a
  field with a default takes it where null; a field with neither (``key``, ``query_id`` ...)
  and not ``| None`` must be given: missing or null is an error;
- a line is JSON as ``io/input_files.parse_json`` bounds every outside file (UTF-8, nesting,
  number length, no ``Infinity``), ``NaN`` excepted;
- a value must have its field's type: an ``int`` is a JSON integer in the 64-bit range, a
  ``float`` a finite JSON number, ``NaN`` only inside a mapping of scores (a holistic answer
  without a number is one; a cost or latency is not), text is text; a mapping's ``null``
  values read as absent, a list's items may not be null;
- ``preferred_arm`` is null, ``tie`` (any case) or one of the arms of ``positions``;
- text UTF-8 cannot encode (an escaped lone surrogate) becomes U+FFFD and is counted in
  ``text_replaced``, as the writer counts it; keys not in ``JudgeRecord`` are ignored; a
  record of schema version 1 gets its collision-free key (``records.record_key``).

A line that breaks a rule is a ``DatasetError`` naming the file, the line and the field.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import numbers
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import json_kind, parse_json
from jurybox.io.text import clean_value
from jurybox.records import RECORD_SCHEMA_VERSION, JudgeRecord, record_key

_INT64 = 1 << 63


@dataclass(frozen=True, slots=True)
class Kind:
    """A field's value type: ``base`` is ``str``, ``int``, ``float``, ``bool``, an enum, or
    ``dict`` / ``list`` with the ``item`` kind of their values."""

    base: type
    item: Kind | None = None


@dataclass(frozen=True, slots=True)
class RecordField:
    """One ``JudgeRecord`` field as a reader sees it."""

    name: str
    kind: Kind
    nullable: bool  # annotated ``| None``
    default: Any  # ``dataclasses.MISSING``: none

    @property
    def required(self) -> bool:
        """Must be given, and not null."""
        return self.default is dataclasses.MISSING and not self.nullable


@functools.cache
def record_fields() -> tuple[RecordField, ...]:
    """Every ``JudgeRecord`` field, in order, from its annotation (worked out once)."""
    hints = typing.get_type_hints(JudgeRecord)
    found = []
    for spec in dataclasses.fields(JudgeRecord):
        kind, nullable = _kind_of(spec.name, hints[spec.name])
        found.append(RecordField(spec.name, kind, nullable, spec.default))
    return tuple(found)


def _kind_of(name: str, annotation: Any) -> tuple[Kind, bool]:
    """The kind of an annotation and whether it admits None."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        others = [arg for arg in args if arg is not type(None)]
        if len(others) != 1:
            raise TypeError(f"JudgeRecord.{name}: no column type for {annotation}")
        return _kind_of(name, others[0])[0], True
    return _plain_kind(name, annotation), False


def _plain_kind(name: str, annotation: Any) -> Kind:
    origin = typing.get_origin(annotation)
    if annotation in (str, int, float, bool):
        return Kind(annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return Kind(annotation)
    if origin in (Mapping, dict) and typing.get_args(annotation)[0] is str:
        return Kind(dict, _plain_kind(name, typing.get_args(annotation)[1]))
    if origin is list:
        return Kind(list, _plain_kind(name, typing.get_args(annotation)[0]))
    raise TypeError(f"JudgeRecord.{name}: no column type for {annotation}")


class _Bad(Exception):
    """A value that breaks its field's rule: the message, and the field's path."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.where = where


def parse_line(raw: bytes, path: str | None, line: int | None) -> dict[str, Any]:
    """One line's JSON object, as it is (nothing checked but that it is an object with a
    key), read by the bounded parser of every outside file (``io/input_files.parse_json``:
    invalid UTF-8, nesting past 100 levels, a number of over 100 characters, ``Infinity``
    refused naming the column), ``NaN`` accepted."""
    data = parse_json(raw, path=path or "", line=line, nan=True)
    if not isinstance(data, dict):
        raise DatasetError(f"not a judgment record ({json_kind(data)})", path=path, line=line)
    if data.get("key") is None:
        message = "not a judgment record: missing or null"
        raise DatasetError(message, path=path, line=line, field="key")
    return data


def checked_record(data: Mapping[str, Any], path: str | None, line: int | None) -> dict[str, Any]:
    """The record's fields (every one, in order) as the rules above read them, its key migrated
    and ``schema_version`` current; a ``DatasetError`` naming the field that breaks a rule."""
    cleaned, replaced = clean_value(dict(data))
    values: dict[str, Any] = {}
    try:
        for spec in record_fields():
            values[spec.name] = _field(spec, cleaned.get(spec.name))
    except _Bad as bad:
        raise DatasetError(str(bad), path=path, line=line, field=bad.where) from None
    values["text_replaced"] += replaced
    _check_preferred_arm(values, path, line)
    try:
        values["key"] = record_key(values)
    except (TypeError, ValueError) as exc:
        raise DatasetError(f"invalid record: {exc}", path=path, line=line) from None
    values["schema_version"] = RECORD_SCHEMA_VERSION
    return values


def _check_preferred_arm(values: Mapping[str, Any], path: str | None, line: int | None) -> None:
    """``preferred_arm`` is null, a tie or one of the arms the record showed (``positions``):
    any other name (a typo) would be read as an arm no judge was shown."""
    preferred, shown = values["preferred_arm"], values["positions"]
    if preferred is None or preferred.lower() == "tie" or preferred in shown.values():
        return
    arms = ", ".join(repr(arm) for arm in shown.values())
    message = f"{preferred!r} is not an arm the record showed ({arms}) nor a tie"
    raise DatasetError(message, path=path, line=line, field="preferred_arm")


def _field(spec: RecordField, value: Any) -> Any:
    if value is None:
        if spec.nullable:
            return None
        if spec.default is dataclasses.MISSING:
            raise _Bad("missing or null", spec.name)
        return spec.default
    if spec.kind.base is float and isinstance(value, float) and math.isnan(value):
        raise _Bad(_NAN_HERE, spec.name)
    return _value(spec.kind, value, spec.name)


# NaN is a score without a number (a holistic answer gave none): in a field of scores only.
_NAN_HERE = "NaN is not a number here (only a score may be NaN)"


def _value(kind: Kind, value: Any, where: str) -> Any:
    check = _CHECKS.get(kind.base)
    if check is not None:
        return check(kind, value, where)
    return _member(kind.base, value, where)


# Records held in memory may hold numpy's scalars or ``str`` subclasses: taken as their value.
def _text(kind: Kind, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _Bad(f"expected text, got {_json_type(value)}", where)
    return str(value)


def _flag(kind: Kind, value: Any, where: str) -> bool:
    if not (isinstance(value, bool) or type(value).__name__ in _NUMPY_BOOLS):
        raise _Bad(f"expected true or false, got {_json_type(value)}", where)
    return bool(value)


_NUMPY_BOOLS = ("bool", "bool_")


def _integer(kind: Kind, value: Any, where: str) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise _Bad(f"expected an integer, got {_json_type(value)}", where)
    number = int(value)
    if not -_INT64 <= number < _INT64:
        raise _Bad("integer out of range (64 bits)", where)
    return number


def _number(kind: Kind, value: Any, where: str) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise _Bad(f"expected a number, got {_json_type(value)}", where)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if math.isinf(number):
        raise _Bad("not a finite number", where)
    return number


def _mapping(kind: Kind, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _Bad(f"expected an object, got {_json_type(value)}", where)
    assert kind.item is not None
    return {
        key: _value(kind.item, item, f"{where}.{key}")
        for key, item in value.items()
        if item is not None
    }


def _list(kind: Kind, value: Any, where: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise _Bad(f"expected an array, got {_json_type(value)}", where)
    assert kind.item is not None
    for position, item in enumerate(value):
        if item is None:
            raise _Bad("null in an array", f"{where}[{position}]")
    return [_value(kind.item, item, where) for item in value]


def _member(base: type, value: Any, where: str) -> Any:
    known = [member.value for member in typing.cast(Any, base)]
    if not isinstance(value, str) or value not in known:
        raise _Bad(f"{value!r} is not one of {', '.join(map(str, known))}", where)
    return str(value)


_CHECKS: dict[type, Any] = {
    str: _text,
    bool: _flag,
    int: _integer,
    float: _number,
    dict: _mapping,
    list: _list,
}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__
