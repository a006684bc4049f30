"""Prompt builders for the four judging modes and batch pairwise.

Templates are rendered by the ``SandboxedEnvironment`` configured below and only ever receive
untrusted text as variables, so ``{{ 7*7 }}`` inside a response stays literal. Every variable the
templates print goes through ``finalize``, which neutralises look-alikes of the prompt's own tags;
only fenced blocks (``Fenced``) are printed as they are. Static text (instructions, rubric,
anchors, few-shot examples) goes in ``system`` and the item in ``user``, so provider prompt
caching applies across items. Nothing that identifies an arm or an author reaches either part.

``sources`` (``prompts.custom.PromptSources``) carries the user's own prompt: its instructions go
into the system part as the fenced evaluation criteria, and its template, when there is one,
replaces the packaged pair (rendered by ``prompts.custom``, with the same variables). Without
them every prompt is what it always was.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jinja2 import PackageLoader
from jinja2.sandbox import SandboxedEnvironment

from jurybox.prompts import schemas
from jurybox.prompts.custom import TEMPLATE_OPTIONS, PromptSources, render_custom, response_names
from jurybox.prompts.fencing import Fenced, fence_untrusted, printed
from jurybox.records import POSITION_LETTERS, Item

if TYPE_CHECKING:
    from jurybox.config import PairwiseExample
    from jurybox.rubrics.criteria import Criterion
    from jurybox.rubrics.model import Rubric

_BLANK_LINES = re.compile(r"\n{3,}")


@dataclass(frozen=True, slots=True)
class PromptParts:
    """A rendered prompt and the JSON Schema of the answer it asks for."""

    system: str
    user: str
    schema: dict[str, Any]
    schema_name: str


@functools.cache
def _environment() -> SandboxedEnvironment:
    # Cached because compiling the templates dominates rendering time; the environment is
    # configured once here and never mutated afterwards.
    return SandboxedEnvironment(
        loader=PackageLoader("jurybox.prompts", "templates"), finalize=printed, **TEMPLATE_OPTIONS
    )


def render(template: str, **context: Any) -> str:
    """Render one packaged template; runs of blank lines are collapsed to one."""
    text = _environment().get_template(template).render(**context)
    return _BLANK_LINES.sub("\n\n", text).strip() + "\n"


def _compose(
    kind: str,
    context: dict[str, Any],
    responses: Sequence[tuple[str, Fenced]],
    *,
    schema: dict[str, Any],
    schema_name: str,
    sources: PromptSources | None,
) -> PromptParts:
    """The prompt of one call: the packaged ``<kind>`` templates, or the run's own template."""
    context = {**context, "instructions": _criteria(sources)}
    if sources is None or not sources.has_template:
        system = render(f"{kind}.system.j2", **context)
        shown = response_names([fenced for _, fenced in responses])
        return PromptParts(
            system, render(f"{kind}.user.j2", **context, **shown), schema, schema_name
        )
    rubric = context.get("rubric")
    extras = {
        "untrusted_notice": _block("_notice.j2", context),
        "answer_format": _block(f"_answer_{kind}.j2", context),
        "rubric_text": _block("_rubric.j2", context) if rubric is not None else None,
    }
    fields = _field_names(schema)
    system, user = render_custom(sources, {**context, **extras}, responses, fields)
    return PromptParts(system, user, schema, schema_name)


def _block(template: str, context: dict[str, Any]) -> Fenced:
    """A packaged part, rendered, for a custom template to print as it is."""
    return Fenced(render(template, **context).rstrip("\n"))


def _criteria(sources: PromptSources | None) -> Fenced | None:
    """``task.instructions`` as the labelled, fenced evaluation criteria (None without)."""
    if sources is None or sources.instructions is None:
        return None
    return _block("_evaluation_criteria.j2", {"criteria": sources.instructions})


def _field_names(schema: dict[str, Any]) -> list[str]:
    """Every property name in the answer's schema, outermost first."""
    names: list[str] = []
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop(0)
        if not isinstance(node, dict):
            continue
        for name, sub in (node.get("properties") or {}).items():
            if name not in names:
                names.append(name)
            pending.append(sub)
        pending.append(node.get("items"))
    return names


def _item_context(item: Item, reference_guided: bool) -> dict[str, Any]:
    return {
        "question": item.question,
        "reference_guided": reference_guided,
        "contexts": list(item.contexts),
        "expected_answer": item.expected_answer,
    }


def _rubric_context(rubric: Rubric) -> dict[str, Any]:
    """A rubric as the templates read it."""
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
    sources: PromptSources | None = None,
    examples: Sequence[PairwiseExample] = (),
) -> PromptParts:
    """Blind A/B comparison; with ``rubric``, both responses are scored per dimension first.

    ``order`` is (arm shown as A, arm shown as B). ``confidence_scale`` asks for a confidence
    per dimension score (with a rubric only). ``examples`` (``task.examples``) are shown in the
    system part, each response fenced; without them the prompt is what it always was.
    """
    if len(order) != 2:
        raise ValueError(f"pairwise needs exactly two arms, got {order}")
    scale = confidence_scale if rubric is not None else None
    context = {
        **_item_context(item, reference_guided),
        "request_confidence": request_confidence,
        "rubric": _rubric_context(rubric) if rubric is not None else None,
        "confidence_scale": scale,
        "examples": _pairwise_examples(examples),
    }
    if rubric is None:
        schema = schemas.pairwise_schema(request_confidence=request_confidence)
        name = "pairwise_verdict"
    else:
        schema = schemas.pairwise_rubric_schema(
            rubric, scale, request_confidence=request_confidence
        )
        name = "pairwise_rubric_verdict"
    shown = _shown(item, order)
    return _compose("pairwise", context, shown, schema=schema, schema_name=name, sources=sources)


def _pairwise_examples(examples: Sequence[PairwiseExample]) -> Fenced | None:
    """The worked examples as one block (None without): question neutralised, both responses
    fenced as untrusted text, the right answer in the answer format's JSON."""
    if not examples:
        return None
    shown = []
    for number, example in enumerate(examples, start=1):
        answer = {"reasoning": example.reasoning} if example.reasoning else {}
        answer["verdict"] = example.verdict
        shown.append(
            {
                "question": example.question,
                "response_a": Fenced(
                    fence_untrusted(example.response_a, f"Example {number}, Response A")
                ),
                "response_b": Fenced(
                    fence_untrusted(example.response_b, f"Example {number}, Response B")
                ),
                "answer_json": json.dumps(answer, ensure_ascii=False),
            }
        )
    return _block("_pairwise_examples.j2", {"examples": shown})


def _shown(item: Item, order: Sequence[str]) -> list[tuple[str, Fenced]]:
    """The item's responses in the order shown, fenced as Response A, Response B ..."""
    labels = [f"Response {letter}" for letter in POSITION_LETTERS[: len(order)]]
    return [(label, _response(item, arm, label)) for label, arm in zip(labels, order, strict=True)]


def batch_pairwise_prompt(
    pairs: Sequence[tuple[Item, tuple[str, str]]],
    *,
    reference_guided: bool,
    request_confidence: bool = True,
    sources: PromptSources | None = None,
) -> PromptParts:
    """Several A/B comparisons in one prompt, numbered 1..k in the order given (always the
    packaged templates: a custom template judges one pair per call)."""
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
        "instructions": _criteria(sources),
    }
    system = render("batch_pairwise.system.j2", **context)
    user = render("batch_pairwise.user.j2", **context, examples=examples)
    schema = schemas.batch_pairwise_schema(len(pairs), request_confidence=request_confidence)
    return PromptParts(system, user, schema, "batch_pairwise_verdicts")


def rubric_prompt(
    item: Item,
    arm: str,
    rubric: Rubric,
    *,
    reference_guided: bool,
    request_confidence: bool,
    confidence_scale: tuple[int, int] | None,
    sources: PromptSources | None = None,
) -> PromptParts:
    """Pointwise scoring of one response on every rubric dimension."""
    scale = confidence_scale if request_confidence else None
    context = {
        **_item_context(item, reference_guided),
        "rubric": _rubric_context(rubric),
        "confidence_scale": scale,
    }
    responses = [("Response", _response(item, arm, "Response"))]
    schema = schemas.rubric_schema(rubric, scale)
    return _compose(
        "rubric", context, responses, schema=schema, schema_name="rubric_judgment", sources=sources
    )


def ranking_prompt(
    item: Item,
    order: tuple[str, ...],
    rubric: Rubric,
    *,
    reference_guided: bool,
    sources: PromptSources | None = None,
) -> PromptParts:
    """Listwise: N anonymised responses ("Response A", ...) scored on the rubric, then ranked."""
    if not 2 <= len(order) <= len(POSITION_LETTERS):
        raise ValueError(f"ranking needs 2 to {len(POSITION_LETTERS)} arms, got {len(order)}")
    letters = list(POSITION_LETTERS[: len(order)])
    context = {
        **_item_context(item, reference_guided),
        "rubric": _rubric_context(rubric),
        "letters": letters,
        "count": len(order),
    }
    schema = schemas.ranking_schema(rubric, letters)
    return _compose(
        "ranking",
        context,
        _shown(item, order),
        schema=schema,
        schema_name="ranking_judgment",
        sources=sources,
    )


def criterion_prompt(
    criterion: Criterion, item: Item, arm: str, *, sources: PromptSources | None = None
) -> PromptParts:
    """Binary Pass/Fail on one atomic criterion, with the criterion's few-shot examples."""
    context = {
        **_item_context(item, reference_guided=False),
        "criterion": criterion.model_dump(),
        "criterion_name": criterion.name,
        "examples": _criterion_examples(criterion),
    }
    responses = [("Response", _response(item, arm, "Response"))]
    schema = schemas.criterion_schema()
    return _compose(
        "criterion",
        context,
        responses,
        schema=schema,
        schema_name="criterion_verdict",
        sources=sources,
    )


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
