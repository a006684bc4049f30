"""Prompt builders for the four judging modes and batch pairwise.

Templates are rendered as a ``SandboxedEnvironment`` configured below renders them (by
``prompts.plain``, which needs no jinja2 import or compile; by jinja2 itself for anything it does
not handle) and only ever receive untrusted text as variables, so ``{{ 7*7 }}`` inside a response
stays literal. Every variable the templates print
goes through ``finalize``, which neutralises look-alikes of the prompt's own tags; only fenced
blocks (``Fenced``) are printed as they are. Static text (instructions, rubric, anchors,
few-shot examples) goes in ``system`` and the item in ``user``, so provider prompt caching
applies across items. Nothing that identifies an arm or an author reaches either part.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from jurybox.prompts import plain, schemas
from jurybox.prompts.fencing import Fenced, fence_untrusted, neutralise
from jurybox.records import POSITION_LETTERS, Item, SharedSchema, made_on_first_use

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment

    from jurybox.rubrics.criteria import Criterion
    from jurybox.rubrics.model import Rubric

_BLANK_LINES = re.compile(r"\n{3,}")


@made_on_first_use(frozen=True, init_at_once=True)  # start-up: repr, ==, hash later
class PromptParts:
    """A rendered prompt and the JSON Schema of the answer it asks for (a ``SharedSchema``
    from the builders below: one object for every call of a kind, read-only)."""

    system: str
    user: str
    schema: dict[str, Any]
    schema_name: str


def _finalize(value: Any) -> Any:
    if isinstance(value, Fenced):
        return str(value)
    if isinstance(value, str):
        return neutralise(value)
    return value


@functools.cache
def _environment() -> SandboxedEnvironment:
    # Cached because compiling the templates dominates rendering time; the environment is
    # configured once here and never mutated afterwards. ``prompts.plain`` renders as it does.
    from jinja2 import PackageLoader, StrictUndefined  # noqa: PLC0415 - start-up: see plain
    from jinja2.sandbox import SandboxedEnvironment  # noqa: PLC0415

    return SandboxedEnvironment(
        loader=PackageLoader("jurybox.prompts", "templates"),
        # Packaged templates do not change under a running process; auto_reload would stat
        # each template file on every render.
        auto_reload=False,
        undefined=StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_finalize,
    )


@functools.cache
def _template(name: str) -> Template:
    return _environment().get_template(name)


@functools.cache
def _plain(name: str) -> plain.Template | None:
    """``name`` parsed by ``prompts.plain``; None when it needs jinja2."""
    return plain.parse(name, _finalize, _plain)


def _render(name: str, context: dict[str, Any]) -> str:
    """The template's text as jinja2 renders it (before ``render``'s clean-up)."""
    template = _plain(name)
    if template is not None:
        try:
            return template.render(context)
        except Exception:
            pass
    return _template(name).render(**context)


def render(template: str, **context: Any) -> str:
    """Render one packaged template; runs of blank lines are collapsed to one."""
    text = _render(template, context)
    if "\n\n\n" in text:  # a plain search is ~50x faster than the regex finding nothing
        text = _BLANK_LINES.sub("\n\n", text)
    return text.strip() + "\n"


# --- the parts a run's calls share ---------------------------------------------------------------
# A run asks for the same system prompt on every call, and for the same item text in every order
# (and retest) of an item: both orders show the same question with the same responses in other
# places. Each builder names what its prompt is made of: plain options, typed (``True == 1``, but
# they may render differently), and objects taken by identity (the rubric, the criterion, the
# item: all frozen). Each part is rendered once per such key and kept, a few hashes per call:
#
# * ``_task_part``: a system prompt, per the builder's options (one text for every item; a
#   template that reads item variables is kept per item, as an item part without slots);
# * ``_item_part``: the item text, rendered once per item with a marker where each response goes
#   (a slot: one fenced text, or a list of them that a listwise template loops over); each call
#   puts its responses in, the same text as a full render at a fraction of its cost.
#
# What cannot be kept is rendered in full on every call: an item whose ``contexts`` is not a
# tuple (it could change), a slot or any text holding the marker character, a template that does
# not print each marker exactly once. Every store here and below keeps its entries with ``_keep``:
# an entry holds the objects its key names by ``id``, so no other object can have that id while
# the entry exists.

# Entries per store: a run has a few system prompts, rubrics and schemas; an item's orders (and
# arms) come one after the other (a run plans them so, and its workers take calls in plan order),
# so a few items suffice, and each item entry keeps its whole item alive.
_KEPT_LIMIT = 256
_TASK_PARTS: dict[tuple[Any, ...], tuple[object, str]] = {}
_ITEM_PARTS: dict[tuple[Any, ...], tuple[object, str | None]] = {}  # None: not slotted
_ITEM_VARIABLES = frozenset(("question", "contexts", "expected_answer"))
_MARK = "\x00"  # in every marker; a slot value holding it is rendered in full instead

Slots = dict[str, Any]  # name -> ``Fenced``, or a list of ``Fenced``
_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


def _keep(
    store: dict[_Key, tuple[object, _Value]], key: _Key, held: object, value: _Value
) -> _Value:
    """Store ``value`` under ``key`` with ``held`` (what the key names by ``id``); a full store
    starts again empty (its entries are cheap to build again)."""
    if len(store) >= _KEPT_LIMIT:
        store.clear()
    store[key] = (held, value)
    return value


@functools.cache
def _template_variables(name: str) -> tuple[str, ...] | None:
    """The variables ``name`` and the templates it includes may read, or None when it includes
    a template by a computed name (then what it reads is unknown)."""
    parsed = _plain(name)
    if parsed is not None:  # what jinja2's meta finds, without jinja2 (tests compare them)
        names = set(parsed.free)
        for other in parsed.includes:
            names.update(_template_variables(other) or ())
        return tuple(sorted(names))
    from jinja2 import meta  # noqa: PLC0415 - start-up: see plain

    environment = _environment()
    assert environment.loader is not None  # set in _environment
    source = environment.loader.get_source(environment, name)[0]
    tree = environment.parse(source)
    names = set(meta.find_undeclared_variables(tree))
    for included in meta.find_referenced_templates(tree):
        inner = _template_variables(included) if included is not None else None
        if inner is None:
            return None
        names.update(inner)
    return tuple(sorted(names))


@functools.cache
def _reads_item(template: str) -> bool:
    """Whether ``template`` may read the item's variables (it may when what it reads is
    unknown)."""
    names = _template_variables(template)
    return names is None or not _ITEM_VARIABLES.isdisjoint(names)


def _typed(value: Any) -> Any:
    """A hashable stand-in for an option: equal only for values that render alike (the type is
    part of it: ``True`` and ``1``, ``1`` and ``1.0`` render differently)."""
    if isinstance(value, list | tuple):
        return (type(value), tuple(_typed(v) for v in value))
    return (type(value), value)


def _task_part(
    template: str,
    task: tuple[Any, ...],
    held: object,
    item: Item,
    context: Callable[[], dict[str, Any]],
) -> str:
    """``render(template, **context())``, kept per ``task`` (the builder's options and the ``id``
    of ``held``), and per item too when the template reads the item's variables."""
    kept = _TASK_PARTS.get((template, task))
    if kept is not None:
        return kept[1]
    if _reads_item(template):  # never kept per task: the next item may need another text
        return _item_part(template, item, task, held, {}, context=context)
    return _keep(_TASK_PARTS, (template, task), held, render(template, **context()))


def _item_part(
    template: str,
    item: Item,
    task: tuple[Any, ...],
    held: object,
    slots: Slots,
    *,
    context: Callable[[], dict[str, Any]],
) -> str:
    """``render(template, **context(), **slots)``, its text with a marker in each slot kept per
    ``task`` and item object (its question, contexts and reference cannot change: the item is
    frozen and its contexts a tuple of strings)."""
    if type(item.contexts) is not tuple or _marked(slots):
        return render(template, **context(), **slots)
    key = (template, task, id(item))
    kept = _ITEM_PARTS.get(key)
    if kept is not None:
        stored = kept[1]
    else:
        stored = _keep(_ITEM_PARTS, key, (held, item), _marked_render(template, slots, context()))
    if stored is None:
        return render(template, **context(), **slots)
    return _filled(stored, slots)


def _marked(slots: Slots) -> bool:
    """Whether a slot value holds the marker character (then it cannot be slotted)."""
    for value in slots.values():
        if isinstance(value, list):
            if any(_MARK in part for part in value):
                return True
        elif _MARK in value:
            return True
    return False


def _markers(slots: Slots) -> dict[str, Any]:
    return {
        name: [Fenced(f"{_MARK}{name}.{i}{_MARK}") for i in range(len(value))]
        if isinstance(value, list)
        else Fenced(f"{_MARK}{name}{_MARK}")
        for name, value in slots.items()
    }


def _marked_render(template: str, slots: Slots, context: dict[str, Any]) -> str | None:
    """The template rendered with a marker in each slot; None when it does not print each
    marker exactly once (or prints the marker character elsewhere)."""
    markers = _markers(slots)
    flat = [m for v in markers.values() for m in (v if isinstance(v, list) else [v])]
    marked = _render(template, {**context, **markers})
    once = all(marked.count(marker) == 1 for marker in flat)
    return marked if once and marked.count(_MARK) == 2 * len(flat) else None


def _filled(stored: str, slots: Slots) -> str:
    """A stored slotted text with the slots put in, cleaned up as ``render`` does."""
    text = stored
    for name, value in slots.items():
        if isinstance(value, list):
            for i, part in enumerate(value):
                text = text.replace(f"{_MARK}{name}.{i}{_MARK}", part, 1)
        else:
            text = text.replace(f"{_MARK}{name}{_MARK}", value, 1)
    if "\n\n\n" in text:
        text = _BLANK_LINES.sub("\n\n", text)
    return text.strip() + "\n"


def _item_context(item: Item, reference_guided: bool) -> dict[str, Any]:
    return {
        "question": item.question,
        "reference_guided": reference_guided,
        "contexts": list(item.contexts),
        "expected_answer": item.expected_answer,
    }


# A rubric as the templates read it, built once per rubric object (never mutated).
_RUBRIC_CONTEXTS: dict[int, tuple[object, dict[str, Any]]] = {}


def _rubric_context(rubric: Rubric) -> dict[str, Any]:
    kept = _RUBRIC_CONTEXTS.get(id(rubric))
    if kept is not None and kept[0] is rubric:
        return kept[1]
    return _keep(_RUBRIC_CONTEXTS, id(rubric), rubric, _build_rubric_context(rubric))


def _build_rubric_context(rubric: Rubric) -> dict[str, Any]:
    from jurybox.rubrics.model import parse_band  # noqa: PLC0415 - a rubric is loaded already

    dimensions = [
        {
            "name": dim.name,
            "description": dim.description,
            "what_it_measures": dim.what_it_measures,
            "scoring": dim.scoring,
            "good": dim.good,
            "failure_modes": list(dim.failure_modes),
            "anchors": [(band, dim.anchors[band]) for band in sorted(dim.anchors, key=parse_band)],
            "scale": dim.scale,
        }
        for dim in rubric.dimensions
    ]
    return {"name": rubric.name, "description": rubric.description, "dimensions": dimensions}


def _response(item: Item, arm: str, label: str) -> Fenced:
    if arm not in item.responses:
        raise ValueError(f"item '{item.id}' has no response for arm '{arm}'")
    return Fenced(fence_untrusted(item.responses[arm], label))


def pairwise_prompt(
    item: Item,
    order: tuple[str, str],
    *,
    reference_guided: bool,
    rubric: Rubric | None,
    request_confidence: bool,
    confidence_scale: tuple[int, int] | None = None,
) -> PromptParts:
    """Blind A/B comparison; with ``rubric``, both responses are scored per dimension first.

    ``order`` is (arm shown as A, arm shown as B). ``confidence_scale`` asks for a confidence
    per dimension score (with a rubric only).
    """
    if len(order) != 2:
        raise ValueError(f"pairwise needs exactly two arms, got {order}")
    scale = confidence_scale if rubric is not None else None

    def context() -> dict[str, Any]:
        return {
            **_item_context(item, reference_guided),
            "request_confidence": request_confidence,
            "rubric": _rubric_context(rubric) if rubric is not None else None,
            "confidence_scale": scale,
        }

    # Types are part of the key, as in ``_typed``: True == 1, but they may render differently.
    task = (
        type(reference_guided),
        reference_guided,
        type(request_confidence),
        request_confidence,
        None if scale is None else _typed(scale),
        id(rubric),
    )
    system = _task_part("pairwise.system.j2", task, rubric, item, context)
    responses = {
        "response_a": _response(item, order[0], "Response A"),
        "response_b": _response(item, order[1], "Response B"),
    }
    user = _item_part("pairwise.user.j2", item, task, rubric, responses, context=context)
    if rubric is None:
        schema = _shared_schema(
            ("pairwise", request_confidence),
            None,
            lambda: schemas.pairwise_schema(request_confidence=request_confidence),
        )
        return PromptParts(system, user, schema, "pairwise_verdict")
    schema = _shared_schema(
        ("pairwise_rubric", id(rubric), scale, request_confidence),
        rubric,
        lambda: schemas.pairwise_rubric_schema(
            rubric, scale, request_confidence=request_confidence
        ),
    )
    return PromptParts(system, user, schema, "pairwise_rubric_verdict")


def batch_pairwise_prompt(
    pairs: Sequence[tuple[Item, tuple[str, str]]],
    *,
    reference_guided: bool,
    request_confidence: bool = True,
) -> PromptParts:
    """Several A/B comparisons in one prompt, numbered 1..k in the order given."""
    if not pairs:
        raise ValueError("batch pairwise needs at least one pair")
    examples = []
    for number, (item, order) in enumerate(pairs, start=1):
        if len(order) != 2:
            raise ValueError(f"pairwise needs exactly two arms, got {order}")
        examples.append(
            {
                **_item_context(item, reference_guided),
                "response_a": _response(item, order[0], f"Example {number}, Response A"),
                "response_b": _response(item, order[1], f"Example {number}, Response B"),
            }
        )
    context = {
        "count": len(pairs),
        "reference_guided": reference_guided,
        "request_confidence": request_confidence,
    }
    task = (len(pairs), _typed(reference_guided), _typed(request_confidence))
    system = _task_part("batch_pairwise.system.j2", task, None, pairs[0][0], lambda: context)
    user = render("batch_pairwise.user.j2", **context, examples=examples)
    schema = _shared_schema(
        ("batch_pairwise", len(pairs), request_confidence),
        None,
        lambda: schemas.batch_pairwise_schema(len(pairs), request_confidence=request_confidence),
    )
    return PromptParts(system, user, schema, "batch_pairwise_verdicts")


def rubric_prompt(
    item: Item,
    arm: str,
    rubric: Rubric,
    *,
    reference_guided: bool,
    request_confidence: bool,
    confidence_scale: tuple[int, int] | None,
) -> PromptParts:
    """Pointwise scoring of one response on every rubric dimension."""
    scale = confidence_scale if request_confidence else None

    def context() -> dict[str, Any]:
        return {
            **_item_context(item, reference_guided),
            "rubric": _rubric_context(rubric),
            "confidence_scale": scale,
        }

    task = (
        type(reference_guided),
        reference_guided,
        None if scale is None else _typed(scale),
        id(rubric),
    )
    system = _task_part("rubric.system.j2", task, rubric, item, context)
    response = {"response": _response(item, arm, "Response")}
    user = _item_part("rubric.user.j2", item, task, rubric, response, context=context)
    schema = _shared_schema(
        ("rubric", id(rubric), scale), rubric, lambda: schemas.rubric_schema(rubric, scale)
    )
    return PromptParts(system, user, schema, "rubric_judgment")


def ranking_prompt(
    item: Item, order: tuple[str, ...], rubric: Rubric, *, reference_guided: bool
) -> PromptParts:
    """Listwise: N anonymised responses ("Response A", ...) scored on the rubric, then ranked."""
    if not 2 <= len(order) <= len(POSITION_LETTERS):
        raise ValueError(f"ranking needs 2 to {len(POSITION_LETTERS)} arms, got {len(order)}")
    letters = list(POSITION_LETTERS[: len(order)])

    def context() -> dict[str, Any]:
        return {
            **_item_context(item, reference_guided),
            "rubric": _rubric_context(rubric),
            "letters": letters,
            "count": len(order),
        }

    task = (type(reference_guided), reference_guided, len(order), id(rubric))
    responses = [
        _response(item, arm, f"Response {letter}")
        for letter, arm in zip(letters, order, strict=True)
    ]
    system = _task_part("ranking.system.j2", task, rubric, item, context)
    user = _item_part(
        "ranking.user.j2", item, task, rubric, {"responses": responses}, context=context
    )
    schema = _shared_schema(
        ("ranking", id(rubric), *letters), rubric, lambda: schemas.ranking_schema(rubric, letters)
    )
    return PromptParts(system, user, schema, "ranking_judgment")


def criterion_prompt(criterion: Criterion, item: Item, arm: str) -> PromptParts:
    """Binary Pass/Fail on one atomic criterion, with the criterion's few-shot examples."""

    def context() -> dict[str, Any]:
        return {
            **_item_context(item, reference_guided=False),
            "criterion": criterion.model_dump(),
            "criterion_name": criterion.name,
            "examples": _criterion_examples(criterion),
        }

    task = (id(criterion),)
    system = _task_part("criterion.system.j2", task, criterion, item, context)
    response = {"response": _response(item, arm, "Response")}
    user = _item_part("criterion.user.j2", item, task, criterion, response, context=context)
    schema = _shared_schema(("criterion",), None, schemas.criterion_schema)
    return PromptParts(system, user, schema, "criterion_verdict")


def _criterion_examples(criterion: Criterion) -> list[dict[str, Any]]:
    return [
        {
            "id": example.id or f"example-{number}",
            "label": example.label,
            "input": example.input,
            "response": example.response,
            "answer_json": json.dumps(
                {"reasoning": example.reasoning, "answer": example.answer}, ensure_ascii=False
            ),
        }
        for number, example in enumerate(criterion.examples, start=1)
    ]


_SHARED_SCHEMAS: dict[tuple[Any, ...], tuple[object, SharedSchema]] = {}  # kept with ``_keep``


def _shared_schema(
    key: tuple[Any, ...], rubric: object, build: Callable[[], dict[str, Any]]
) -> SharedSchema:
    """One read-only schema object per distinct ``key``, so the prompt hash and the request
    body encode it once per run rather than once per call each. ``key`` holds the rubric's
    ``id``: the entry keeps the rubric itself and is used only for that very object."""
    kept = _SHARED_SCHEMAS.get(key)
    if kept is not None and kept[0] is rubric:
        return kept[1]
    return _keep(_SHARED_SCHEMAS, key, rubric, SharedSchema.of(build()))
