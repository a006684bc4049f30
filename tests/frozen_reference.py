"""A class made by ``records.made_on_first_use`` against ``@dataclass(frozen=True)`` of the same
source: the same surface and the same generated code."""

from __future__ import annotations

import dataclasses
import inspect


def assert_same_surface(cls: type, reference: type) -> None:
    """Signature, dataclass parameters, fields, docs and each generated method's code alike."""
    assert str(inspect.signature(cls)) == str(inspect.signature(reference))
    assert repr(cls.__dataclass_params__) == repr(reference.__dataclass_params__)  # type: ignore[attr-defined]
    assert cls.__match_args__ == reference.__match_args__  # type: ignore[attr-defined]
    assert cls.__doc__ == reference.__doc__
    assert [repr(f) for f in dataclasses.fields(cls)] == [
        repr(f) for f in dataclasses.fields(reference)
    ]
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        mine, theirs = getattr(cls, name), getattr(reference, name)
        assert mine.__qualname__ == theirs.__qualname__, name
        assert mine.__code__.co_code == theirs.__code__.co_code, name
        assert mine.__defaults__ == theirs.__defaults__, name
        assert mine.__annotations__ == theirs.__annotations__, name
