"""``prompts.plain`` renders every bundled template as jinja2 does (issue #19: no jinja2 import or
compile on a run's way to its first request).

Each template is rendered by both over a matrix of contexts (texts with tag look-alikes, template
syntax, blank lines and unicode; every optional part present and absent) and the raw texts must
be equal; the variables each template reads must be those jinja2's ``meta`` finds.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from jinja2 import StrictUndefined, UndefinedError, meta

from jurybox.prompts import builders, plain
from jurybox.prompts.fencing import Fenced, fence_untrusted
from jurybox.rubrics import Criterion, load_rubric, rubric_from_mapping

BUNDLED = sorted(path.name for path in plain.TEMPLATES.glob("*.j2"))

QUESTIONS = (
    "What is 2 + 2?",
    "Multi\n\n\nline {{ 7*7 }} {% if x %}</question><untrusted_response> — é ✓\n",
)
CONTEXTS = ([], ["France's capital is Paris."], ["p1\n\np2", "</reference_context> {{ loop }}"])
EXPECTED = (None, "", "Paris </expected_answer>")
TERSE = rubric_from_mapping(
    {
        "name": "terse",
        "dimensions": [
            {
                "name": "accuracy",
                "description": "Is it right?",
                "scale": [0, 2],
                "weight": 1.0,
                "anchors": {"0": "wrong", "1-2": "right"},
            }
        ],
    },
    source="terse",
)
RUBRICS = (
    None,
    builders._rubric_context(load_rubric("general", env={})),
    builders._rubric_context(load_rubric("six_dimension", env={})),
    builders._rubric_context(TERSE),
)
CRITERIA = (
    {
        "name": "names_capital",
        "definition": "Fails to name the capital.",
        "pass_definition": "Names it.",
        "fail_definition": "Does not.",
        "decision_rules": ["A hedged answer passes.", "{{ rule }} stays literal"],
        "why_it_matters": "Users ask for capitals.",
        "examples": [
            {
                "id": "ex-1",
                "input": "Spain?",
                "response": "Madrid.",
                "answer": "Pass",
                "reasoning": "ok",
            },
            {
                "input": "Peru?",
                "response": "Hmm.",
                "answer": "Fail",
                "label": "hard",
                "reasoning": "no",
            },
        ],
    },
    {
        "name": "bare",
        "definition": "d",
        "pass_definition": "p",
        "fail_definition": "f",
        "examples": [],
    },
)


def _fenced(text: str, label: str) -> Fenced:
    return Fenced(fence_untrusted(text, label))


def _criterion_context(raw: dict[str, Any]) -> dict[str, Any]:
    criterion = Criterion.model_validate(raw)
    examples = [
        {
            "id": example.id or f"example-{number}",
            "label": example.label,
            "input": example.input,
            "response": example.response,
            "answer_json": json.dumps({"answer": example.answer}),
        }
        for number, example in enumerate(criterion.examples, start=1)
    ]
    return {
        "criterion": criterion.model_dump(),
        "criterion_name": criterion.name,
        "examples": examples,
    }


def _contexts(template: str) -> list[dict[str, Any]]:
    """Contexts for one template: every variable any bundled template reads, varied."""
    out = []
    items = itertools.product(QUESTIONS, (True, False), CONTEXTS, EXPECTED)
    for number, (question, guided, contexts, expected) in enumerate(items):
        base = {
            "question": question,
            "reference_guided": guided,
            "contexts": contexts,
            "expected_answer": expected,
            "response_a": _fenced(f"A {number} </untrusted_response>", "Response A"),
            "response_b": "plain text {{ 1 }} is neutralised </question>",
            "response": _fenced("R\n\n\nR", "Response"),
            "indent": "  ",
            "responses": [_fenced(f"r{n}", f"Response {n}") for n in range(2 + number % 4)],
        }
        base["count"] = len(base["responses"])
        base["letters"] = list("ABCDE"[: base["count"]])
        for rubric, confidence, scale in itertools.product(RUBRICS, (True, False), (None, (1, 5))):
            context = {**base, "rubric": rubric, "request_confidence": confidence}
            context["confidence_scale"] = scale
            if template.startswith("batch_pairwise"):
                context["examples"] = [dict(base, question=f"q{n}") for n in range(1 + number % 3)]
            elif template.startswith("criterion"):
                context.update(_criterion_context(CRITERIA[number % 2]))
            elif rubric is None and template.startswith(("ranking", "rubric", "_rubric", "_dim")):
                continue  # these always get a rubric
            out.append(context)
    return out


def _jinja(name: str, context: dict[str, Any]) -> str:
    return builders._template(name).render(**context)


@pytest.mark.parametrize("name", BUNDLED)
def test_plain_renders_what_jinja2_renders(name: str) -> None:
    template = builders._plain(name)
    assert template is not None, f"{name} fell back to jinja2"
    contexts = _contexts(name)
    assert len(contexts) >= 36
    for context in contexts:
        assert template.render(context) == _jinja(name, context), (name, context)


@pytest.mark.parametrize("name", BUNDLED)
def test_plain_reads_the_variables_jinja2_finds(name: str) -> None:
    template = builders._plain(name)
    assert template is not None
    environment = builders._environment()
    assert environment.loader is not None
    tree = environment.parse(environment.loader.get_source(environment, name)[0])
    assert template.free == meta.find_undeclared_variables(tree)
    assert list(template.includes) == list(meta.find_referenced_templates(tree))


def test_a_missing_variable_raises_jinja2_s_error() -> None:
    context = _contexts("pairwise.user.j2")[0]
    del context["question"]
    with pytest.raises(plain.Undefined):
        builders._plain("_item.j2").render(context)  # type: ignore[union-attr]
    with pytest.raises(UndefinedError, match="'question' is undefined"):
        builders.render("pairwise.user.j2", **context)
    assert builders._environment().undefined is StrictUndefined


@pytest.mark.parametrize(
    "source",
    [
        "{# a comment #}",
        "{%- if x %}{% endif %}",
        "{{ x -}}",
        "{{ x | upper }}",
        "{{ x == 1 }}",
        "{% set y = 1 %}",
        "{{ x._secret }}",
        "{% if x %}",
        "{{ x if y }}",
        '{{ "a\\"b" }}',
        "{% include name %}",
    ],
)
def test_other_syntax_goes_to_jinja2(tmp_path: Path, source: str) -> None:
    (tmp_path / "t.j2").write_text(source, encoding="utf-8")
    assert plain.parse("t.j2", str, lambda name: None, folder=tmp_path) is None


def test_whitespace_rules_match_jinja2(tmp_path: Path) -> None:
    """trim_blocks / lstrip_blocks at line starts, after inline tags and at the template's ends."""
    source = (
        "  {% if a %}\nx {% if a %}y{% endif %}\n\t{% for i in [1, 2] %}\n"
        "  {{ i }}{% if loop.last %}.{% endif %}\n  {% endfor %}  \nend  {% if a %}z\n{% endif %}"
        "\n {% endif %} \n\n"
    ).replace("[1, 2]", "items")
    (tmp_path / "t.j2").write_text(source, encoding="utf-8")
    template = plain.parse("t.j2", builders._finalize, lambda name: None, folder=tmp_path)
    assert template is not None
    expected = builders._environment().from_string(source)
    for a, items in itertools.product((True, False), ([], [1, 2], ["<question>"])):
        context = {"a": a, "items": items}
        assert template.render(context) == expected.render(**context)
