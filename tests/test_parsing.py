"""Parser tests: the labelled corpus of judge outputs through ``interpret``, and the extractor."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from judging_helpers import interpret
from jurybox.config import ScoringConfig, TaskConfig
from jurybox.errors import ParseError
from jurybox.modes import JudgingContext
from jurybox.parsing import (
    JudgeRefusal,
    extract_json,
    parse_batch_pairwise,
    parse_criterion,
    parse_pairwise,
    parse_ranking,
    parse_rubric,
)
from jurybox.records import Completion, Item, JudgeRecord, Status, WorkUnit
from jurybox.rubrics import Criterion, SafetySettings, load_rubric

DATA = Path(__file__).parent / "data" / "judge_outputs"
CORPUS = yaml.safe_load((DATA / "corpus.yaml").read_text(encoding="utf-8"))
MINI = load_rubric(str(DATA / "mini_rubric.yaml"), env={})
CONCISE = Criterion(
    name="concise",
    definition="The response pads its answer with filler.",
    pass_definition="No filler.",
    fail_definition="Any filler sentence.",
)
ITEMS = {
    "q1": Item("q1", "Q1?", {"control": "c1", "treatment": "t1"}),
    "q2": Item("q2", "Q2?", {"control": "c2", "treatment": "t2"}),
    "q3": Item("q3", "Q3?", {"alpha": "a", "beta": "b", "gamma": "g"}),
}
_RECORD_FIELDS = {f.name for f in dataclasses.fields(JudgeRecord)}


def _setup(mode: str) -> tuple[JudgingContext, list[WorkUnit]]:
    def ctx(task: TaskConfig, rubric: Any = None, criteria: Any = None) -> JudgingContext:
        return JudgingContext(task, ScoringConfig(), rubric, criteria or {}, SafetySettings())

    pair = WorkUnit("q1", "j", "treatment_first", ("treatment", "control"))
    if mode == "pairwise":
        return ctx(TaskConfig(mode="pairwise")), [pair]
    if mode == "pairwise_rubric":
        return ctx(TaskConfig(mode="pairwise", pairwise_with_rubric=True), MINI), [pair]
    if mode == "batch":
        second = WorkUnit("q2", "j", "control_first", ("control", "treatment"))
        return ctx(TaskConfig(mode="pairwise", batch_size=2)), [pair, second]
    if mode == "rubric":
        return ctx(TaskConfig(mode="rubric"), MINI), [WorkUnit("q1", "j", "control", ("control",))]
    if mode == "ranking":
        unit = WorkUnit("q3", "j", "gamma>alpha>beta", ("gamma", "alpha", "beta"))
        return ctx(TaskConfig(mode="ranking"), MINI), [unit]
    unit = WorkUnit("q1", "j", "control", ("control",), criterion="concise")
    return ctx(TaskConfig(mode="criterion"), criteria={"concise": CONCISE}), [unit]


def _completion(case: dict[str, Any]) -> Completion:
    return Completion(
        text=case["text"],
        model="m",
        finish_reason=case.get("finish_reason", "stop"),
        structured=case.get("structured"),
        refusal=case.get("refusal"),
    )


def _same(got: Any, want: Any) -> bool:
    """Equality with float tolerance, through nested dicts and lists."""
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and got.keys() == want.keys()
            and all(_same(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(_same(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, float):
        return isinstance(got, float) and got == pytest.approx(want)
    return bool(got == want) and type(got) is type(want)


def _assert_fields(actual: dict[str, Any], expected: dict[str, Any], case_id: str) -> None:
    for name, want in expected.items():
        got = actual.get(name)
        assert _same(got, want), f"{case_id}: {name} = {got!r}, expected {want!r}"


def test_corpus_is_large_and_covers_every_mode() -> None:
    assert len(CORPUS) >= 40
    assert {case["mode"] for case in CORPUS} == {
        "pairwise",
        "pairwise_rubric",
        "batch",
        "rubric",
        "ranking",
        "criterion",
    }
    ids = [case["id"] for case in CORPUS]
    assert len(ids) == len(set(ids))
    outcomes = {e["parse_success"] for case in CORPUS for e in _expectations(case)}
    assert outcomes == {True, False}


def _expectations(case: dict[str, Any]) -> list[dict[str, Any]]:
    expect = case["expect"]
    return expect if isinstance(expect, list) else [expect]


@pytest.mark.parametrize("case", CORPUS, ids=[case["id"] for case in CORPUS])
def test_corpus_case(case: dict[str, Any]) -> None:
    ctx, units = _setup(case["mode"])
    results = interpret(ctx, units, ITEMS, _completion(case))
    expectations = _expectations(case)
    assert len(results) == len(units) == len(expectations)
    for result, expected in zip(results, expectations, strict=True):
        assert set(result) <= _RECORD_FIELDS, set(result) - _RECORD_FIELDS
        assert result["parse_success"] is expected["parse_success"], result.get("error")
        assert result["status"] == Status(expected["status"]), result.get("error")
        if expected["parse_success"]:
            assert result["error"] is None
            assert result["parse_method"] in ("native", "json", "fenced", "last_object")
        else:
            assert result["error"], "a failure must say why"
            assert result.get("preference") is None and result.get("scores") is None
        if "parse_method" in expected:
            assert result["parse_method"] == expected["parse_method"]
        _assert_fields(result, expected.get("fields", {}), case["id"])


# --- extract_json -----------------------------------------------------------------------------


def test_extract_prefers_native_structured_output() -> None:
    obj, method = extract_json('{"verdict": "A"}', {"verdict": "B"})
    assert (obj, method) == ({"verdict": "B"}, "native")


@pytest.mark.parametrize(
    ("text", "expected", "method"),
    [
        ('{"a": 1}', {"a": 1}, "json"),
        ('  \n{"a": [1, 2,],}\n', {"a": [1, 2]}, "json"),
        ('x ```json\n{"a": 1}\n``` y', {"a": 1}, "fenced"),
        ('x ```JSON\n{"a": 1}\n```', {"a": 1}, "fenced"),
        ('```{"a": 1}```', {"a": 1}, "fenced"),
        ('say {"a": "}"} then {"b": "{"}', {"b": "{"}, "last_object"),
        ('{"a": "esc \\" }"} tail', {"a": 'esc " }'}, "last_object"),
        ('outer {"a": {"b": {"c": 1}}} end', {"a": {"b": {"c": 1}}}, "last_object"),
        ('keep commas in strings {"a": ",}"}', {"a": ",}"}, "last_object"),
    ],
)
def test_extract_json_methods(text: str, expected: dict[str, Any], method: str) -> None:
    assert extract_json(text) == (expected, method)


def test_trailing_comma_repair_leaves_strings_alone() -> None:
    obj, _ = extract_json('{"a": "x,}", "b": [1,],}')
    assert obj == {"a": "x,}", "b": [1]}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("no json here", "no JSON object"),
        ('{"a": 1', "truncated"),
        ('{"a": 1, "a": 2}', "duplicate key"),
        ('{"a": Infinity}', "not a valid JSON number"),
        ("[1, 2]", "expected a JSON object"),
        ('prose {"a": 1} then {"b": oops}', "not valid JSON"),
    ],
)
def test_extract_json_failures(text: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason):
        extract_json(text)


def test_refusal_is_its_own_error_type() -> None:
    with pytest.raises(JudgeRefusal):
        extract_json("I won't be able to... I cannot judge this.")
    with pytest.raises(ParseError) as excinfo:
        extract_json("The answer is A.")
    assert not isinstance(excinfo.value, JudgeRefusal)


_json_text = st.text(alphabet=st.sampled_from('ab{}[]",:\\ \n'), max_size=12)
_json_objects = st.dictionaries(
    st.text(max_size=6), st.one_of(_json_text, st.integers(), st.lists(_json_text, max_size=3))
)


@settings(max_examples=200, deadline=None)
@given(obj=_json_objects, before=st.text(alphabet="abc .\n", max_size=20))
def test_extract_finds_any_object_after_prose(obj: dict[str, Any], before: str) -> None:
    # Strings full of braces, quotes and backslashes must not confuse the scanner.
    text = f"{before}{json.dumps(obj)} trailing words"
    assert extract_json(text)[0] == obj


_MODES = ["pairwise", "pairwise_rubric", "batch", "rubric", "ranking", "criterion"]
_judge_text = st.one_of(
    st.text(max_size=200),
    st.text(alphabet=st.sampled_from('{}[]",:\\ 0123456789.-eEaAbBtrufnl`\n'), max_size=200),
    st.builds(
        json.dumps,
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
            lambda c: (
                st.lists(c, max_size=3)
                | st.dictionaries(
                    st.sampled_from(
                        [
                            "verdict",
                            "scores",
                            "accuracy",
                            "clarity",
                            "score",
                            "evaluations",
                            "ranking",
                            "A",
                            "answer",
                            "example",
                        ]
                    ),
                    c,
                    max_size=4,
                )
            ),
            max_leaves=12,
        ),
    ),
)


@settings(max_examples=300, deadline=None)
@given(text=_judge_text, mode=st.sampled_from(_MODES))
def test_interpret_never_raises_on_any_text(text: str, mode: str) -> None:
    ctx, units = _setup(mode)
    for result in interpret(ctx, units, ITEMS, Completion(text, "m")):
        assert result["status"] in (Status.OK, Status.UNPARSED, Status.REFUSED)
        assert result["parse_success"] is (result["status"] == Status.OK)


def test_deeply_nested_json_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="nested too deeply"):
        extract_json("[" * 100_000 + "]" * 100_000)


# --- per-mode parsers -------------------------------------------------------------------------


def test_parse_pairwise_normalises_case_but_not_prose() -> None:
    assert parse_pairwise('{"Verdict": " response b "}').verdict == "B"
    with pytest.raises(ParseError, match="unknown verdict"):
        parse_pairwise('{"verdict": "A is better"}')


def test_parse_rubric_holistic_fallback_is_flagged_not_spread() -> None:
    judged = parse_rubric('{"overall": 8}', None, MINI, confidence_scale=(1, 5))
    assert judged.holistic_fallback is True
    assert judged.holistic_score == 8.0
    assert judged.scores == ()


def test_parse_rubric_partial_dimensions_is_an_error_not_a_fallback() -> None:
    with pytest.raises(ParseError, match="missing dimension 'clarity'"):
        parse_rubric('{"accuracy": 8, "overall": 8}', None, MINI, confidence_scale=None)


def test_parse_ranking_returns_judge_order_and_scores() -> None:
    text = json.dumps(
        {
            "evaluations": {"a": {"accuracy": 3, "clarity": 4}, "b": {"accuracy": 9, "clarity": 9}},
            "ranking": ["b", "a"],
        }
    )
    judged = parse_ranking(text, None, ["A", "B"], MINI)
    assert judged.ranking == ("B", "A")
    assert [d.score for d in judged.evaluations["A"]] == [3.0, 4.0]


def test_parse_batch_attributes_errors_to_single_examples() -> None:
    text = json.dumps({"evaluations": [{"example": 2, "verdict": "B"}, {"example": 9}]})
    first, second, third = parse_batch_pairwise(text, None, 3)
    assert isinstance(first, ParseError) and "no evaluation for example 1" in str(first)
    assert not isinstance(second, ParseError) and second.verdict == "B"
    assert isinstance(third, ParseError)


def test_parse_criterion_reasoning_is_kept() -> None:
    judged = parse_criterion('{"reasoning": "short", "answer": "PASS"}')
    assert (judged.answer, judged.reasoning, judged.method) == ("Pass", "short", "json")


def test_keys_and_labels_are_normalised() -> None:
    from jurybox import parsing

    assert parsing._label("response a", parsing.VERDICTS, "verdict") == "A"
    with pytest.raises(ParseError, match="unknown verdict 'C'"):
        parsing._label("C", parsing.VERDICTS, "verdict")
    assert parsing._normalise_keys({"Key 5": 1, 3: 2}) == {"key_5": 1, "3": 2}
