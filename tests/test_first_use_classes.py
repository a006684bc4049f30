"""Frozen classes made with ``records.made_on_first_use`` (start-up, issue #19).

Those a run first uses after its first request (``frozen=True``) get their ``__init__``,
``__repr__``, ``__eq__`` and ``__hash__`` when first used; those it makes before its first request
(``init_at_once=True``) get ``__init__`` with the class and the others when first used. Each
behaves as the ``@dataclass(frozen=True)`` made from the class's own source: same surface, same
generated code, same values; and a fresh interpreter that imports them generates no more.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import sys
import textwrap

import pytest

from frozen_reference import assert_same_surface
from python_child import run_python

DECORATOR = "@made_on_first_use(frozen=True"
CLASSES = (
    ("jurybox.rubrics.safety", "SafetyResult"),
    ("jurybox.pipeline.failures", "JudgeFailures"),
    ("jurybox.pipeline.retry", "CallFailed"),
    ("jurybox.pipeline.runner", "Fresh"),
)
INIT_AT_ONCE = (
    ("jurybox.records", "Item"),
    ("jurybox.records", "WorkUnit"),
    ("jurybox.records", "CompletionRequest"),
    ("jurybox.io.datasets._readers", "_Where"),
    ("jurybox.io.datasets._readers", "_Record"),
    ("jurybox.io.datasets._fields", "_Layout"),
    ("jurybox.io.datasets._fields", "_Spec"),
    ("jurybox.prompts.builders", "PromptParts"),
    ("jurybox.rubrics.safety", "SafetySettings"),
    ("jurybox.modes.base", "JudgingContext"),
    ("jurybox.modes.base", "Presentation"),
    ("jurybox.providers._common", "Dependency"),
    ("jurybox.pipeline.recording", "RecordContext"),
    ("jurybox.pipeline.retry", "RetryPolicy"),
    ("jurybox.pipeline.runner", "Runtime"),
    ("jurybox.pipeline.runner", "RunInputs"),
    ("jurybox.pipeline.runner", "_Judge"),
    ("jurybox.pipeline.runner", "_Sink"),
    ("jurybox.providers.openai_compatible", "ProxySetting"),
)
ALL = CLASSES + INIT_AT_ONCE
IDS = [name for _, name in ALL]


def _class(module: str, name: str) -> type:
    found: type = getattr(importlib.import_module(module), name)
    return found


def _reference(cls: type) -> type:
    """``cls`` as ``@dataclass(frozen=True)`` makes it, from the same source, in its module."""
    source = textwrap.dedent(inspect.getsource(cls))
    first, _, rest = source.partition("\n")
    assert first.startswith(DECORATOR), first
    namespace = {**vars(sys.modules[cls.__module__]), "dataclass": dataclasses.dataclass}
    exec(compile("@dataclass(frozen=True)\n" + rest, "<reference>", "exec"), namespace)
    reference: type = namespace[cls.__name__]
    return reference


@pytest.mark.parametrize(("module", "name"), ALL, ids=IDS)
def test_same_surface_and_code_as_a_plain_frozen_dataclass(module: str, name: str) -> None:
    cls = _class(module, name)
    assert_same_surface(cls, _reference(cls))


@pytest.mark.parametrize(("module", "name"), ALL, ids=IDS)
def test_same_values_as_a_plain_frozen_dataclass(module: str, name: str) -> None:
    cls = _class(module, name)
    reference = _reference(cls)
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    # A frozen dataclass's __init__ checks no types: any values show what it stores.
    for values in ([f"v{n}" for n in range(len(fields))], [(n,) for n in range(len(fields))]):
        mine, theirs = cls(*values), reference(*values)
        assert repr(mine) == repr(theirs)
        assert list(vars(mine).items()) == list(vars(theirs).items())
        assert hash(mine) == hash(theirs)
        assert mine == cls(*values) and mine != cls(*values[:-1], "other")
        assert dataclasses.replace(mine) == mine
        with pytest.raises(dataclasses.FrozenInstanceError):
            mine.x = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError) as mine_error:
        cls(*range(len(fields) + 1))
    with pytest.raises(TypeError) as their_error:
        reference(*range(len(fields) + 1))
    assert str(mine_error.value) == str(their_error.value)


def test_importing_them_generates_no_more_than_init_at_once() -> None:
    code = (
        "import importlib\n"
        f"classes = {ALL!r}\n"
        "found = {n: vars(getattr(importlib.import_module(m), n)) for m, n in classes}\n"
        "made = lambda body: [m for m in ('__init__', '__repr__', '__eq__', '__hash__')"
        " if callable(body.get(m, print))]\n"
        "print({n: made(body) for n, body in found.items()})\n"
    )
    expected = {name: [] for _, name in CLASSES} | {name: ["__init__"] for _, name in INIT_AT_ONCE}
    assert run_python(code) == repr(expected)
