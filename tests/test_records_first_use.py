"""The record classes whose dataclass methods are made on first use behave as plain dataclasses.

``JudgeRecord``, ``Completion``, ``RateLimits`` and ``DimensionScore`` are declared with
``records._made_on_first_use(frozen=True)`` (start-up, issue #19): ``__init__``, ``__repr__``,
``__eq__`` and ``__hash__`` are generated when first used. Each is compared here with a reference
made from the class's own source by ``@dataclass(frozen=True)``: signatures, generated code,
values, errors and introspection. A fresh interpreter shows that importing the module makes
none of them, and that a record made without ``__init__`` (``JudgeRecord.from_fields``) still gets
them when it is printed or compared.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from frozen_reference import assert_same_surface
from jurybox import records
from jurybox.records import Completion, DimensionScore, JudgeRecord, RateLimits, Status

SRC = Path(__file__).resolve().parents[1] / "src"
LAZY = (JudgeRecord, Completion, RateLimits, DimensionScore)


def _reference(cls: type) -> type:
    """``cls`` as ``@dataclass(frozen=True)`` makes it, from the same source, in the same module."""
    source = textwrap.dedent(inspect.getsource(cls))
    decorator = "@_made_on_first_use(frozen=True)"
    assert source.startswith(decorator), source[:80]
    namespace = dict(vars(records))
    exec(
        compile("@dataclass(frozen=True)" + source[len(decorator) :], "<reference>", "exec"),
        namespace,
    )
    reference: type = namespace[cls.__name__]
    return reference


def _record_fields(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "key": "i1|j|control_first|0",
        "run_id": "r",
        "query_id": "i1",
        "judge_name": "j",
        "judge_model": "m",
        "judge_vendor": "fake",
        "mode": "pairwise",
        "presentation_order": "control_first",
        "positions": {"A": "control", "B": "treatment"},
        "status": Status.OK,
        "parse_success": True,
        "raw_response": '{"preference": "A"}',
        "timestamp": "2026-11-25T00:00:00Z",
        "preference": "A",
        "preferred_arm": "control",
    }
    return {**base, **changes}


SAMPLES: dict[type, list[dict[str, Any]]] = {
    JudgeRecord: [_record_fields(), _record_fields(preference="B", latency_ms=12.5)],
    Completion: [
        {"text": "a", "model": "m"},
        {"text": "a", "model": "m", "rate_limits": RateLimits(requests_limit=5.0)},
        {"text": "b", "model": "m", "input_tokens": 3, "structured": {"x": 1}},
    ],
    RateLimits: [{}, {"requests_limit": 10.0, "retry_after_s": 2.0}],
    DimensionScore: [{"name": "clarity", "score": 4.0}, {"name": "clarity", "score": 3.0}],
}


@pytest.mark.parametrize("cls", LAZY, ids=lambda cls: cls.__name__)
def test_same_class_surface_as_a_plain_frozen_dataclass(cls: type) -> None:
    assert_same_surface(cls, _reference(cls))


@pytest.mark.parametrize("cls", LAZY, ids=lambda cls: cls.__name__)
def test_same_values_and_errors_as_a_plain_frozen_dataclass(cls: type) -> None:
    reference = _reference(cls)
    samples = SAMPLES[cls]
    mine = [cls(**kwargs) for kwargs in samples]
    theirs = [reference(**kwargs) for kwargs in samples]
    for a, b in zip(mine, theirs, strict=True):
        assert repr(a) == repr(b)
        assert list(vars(a).items()) == list(vars(b).items())  # the fields, in order
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert dataclasses.replace(a) == a and dataclasses.replace(a) is not a
        assert copy.deepcopy(a) == a and pickle.loads(pickle.dumps(a)) == a
        assert (a == object()) is False and a.__eq__(object()) is NotImplemented
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.x = 1  # type: ignore[attr-defined]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del a.x  # type: ignore[attr-defined]
    for i, a in enumerate(mine):  # == and hash agree with the reference's, pair by pair
        for j, b in enumerate(mine):
            assert (a == b) == (theirs[i] == theirs[j])
        assert _hash_or_error(a) == _hash_or_error(theirs[i])
    too_many = range(len(dataclasses.fields(cls)) + 1)
    assert _outcome(cls, *too_many) == _outcome(reference, *too_many)
    assert _outcome(cls) == _outcome(reference)
    assert _outcome(cls, nope=1) == _outcome(reference, nope=1)


def _hash_or_error(value: object) -> object:
    try:
        return hash(value)
    except TypeError as exc:  # a record holds dicts: unhashable, as a plain dataclass's is
        return str(exc)


def _outcome(cls: type, *args: object, **kwargs: object) -> str:
    """The instance's repr, or the error's type and message."""
    try:
        return repr(cls(*args, **kwargs))
    except TypeError as exc:
        return f"TypeError: {exc}"


_FRESH = """
import dataclasses, json, sys
from jurybox import records
from jurybox.records import Completion, DimensionScore, JudgeRecord, RateLimits, Status
lazy = (JudgeRecord, Completion, RateLimits, DimensionScore)
def state():
    return {c.__name__: sorted({type(c.__dict__[n]).__name__ for n in records._MADE_ON_FIRST_USE})
            for c in lazy}
at_import = state()
fields = json.loads(sys.argv[1])
record = JudgeRecord.from_fields({**fields, "status": Status(fields["status"])})  # no __init__
text = repr(record)
same = record == JudgeRecord(**{**fields, "status": Status(fields["status"])})
completion = object.__new__(Completion)  # nothing made yet for Completion
try:
    completion.text = "x"
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
made_by_setattr = type(Completion.__dict__["__init__"]).__name__
params = repr(RateLimits.__dataclass_params__)
print(json.dumps({"at_import": at_import, "repr": text, "same": same, "frozen": frozen,
                  "params": params, "made_by_setattr": made_by_setattr, "after": state()}))
"""


def test_import_makes_none_and_first_use_makes_them() -> None:
    fields = _record_fields()
    path = os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _FRESH, json.dumps(fields)],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(done.stdout)
    stand_ins = ["_GeneratedOnFirstUse"]
    assert seen["at_import"] == {cls.__name__: stand_ins for cls in LAZY}
    assert seen["repr"] == repr(_reference(JudgeRecord)(**fields))
    assert seen["same"] is True
    assert seen["frozen"] is True  # made with the class: frozen from the start
    assert seen["made_by_setattr"] == "_GeneratedOnFirstUse"
    assert seen["params"] == repr(_reference(RateLimits).__dataclass_params__)  # type: ignore[attr-defined]
    made = ["_DataclassParams", "function"]
    assert seen["after"] == {
        "JudgeRecord": made,
        "Completion": stand_ins,  # each class on its own first use
        "RateLimits": made,
        "DimensionScore": stand_ins,
    }


def test_a_class_that_would_lose_its_own_methods_is_refused() -> None:
    with pytest.raises(TypeError, match="docstring"):

        @records._dataclass_made_on_first_use(frozen=True)
        class NoDoc:
            x: int

    with pytest.raises(TypeError, match="itself"):

        @records._dataclass_made_on_first_use(frozen=True)
        class OwnRepr:
            """Has its own repr."""

            x: int

            def __repr__(self) -> str:
                return "mine"
