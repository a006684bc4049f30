"""Code-based evaluators: each check, user callables, and records like any judge's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import TypeAdapter

from jurybox.config import config_from_mapping
from jurybox.errors import BadRequestError, ConfigError
from jurybox.evaluators import CodeEvaluator, check_fingerprint, user_verdict
from jurybox.io.judgments import read_records
from jurybox.modes.code import CheckRequest, CodeProvider, code_request
from jurybox.pipeline.runner import Runtime, run_async
from jurybox.records import Item
from jurybox.rubrics.criteria import CodeCheck, Criterion, load_criterion

CHECK: TypeAdapter[CodeCheck] = TypeAdapter(CodeCheck)


def _item(response: str, question: str = "q?") -> Item:
    return Item(id="i1", question=question, responses={"a": response}, metadata={"lang": "en"})


def _run(spec: dict[str, Any], response: str, base_dir: Path | None = None) -> tuple[str, str]:
    verdict = CodeEvaluator().evaluate(CHECK.validate_python(spec), _item(response), "a", base_dir)
    return verdict.answer, verdict.reasoning


@pytest.mark.parametrize(
    ("spec", "response", "answer"),
    [
        ({"type": "regex", "pattern": r"\d{3}"}, "call 555 now", "Pass"),
        ({"type": "regex", "pattern": r"\d{3}"}, "call now", "Fail"),
        ({"type": "regex", "pattern": "SORRY", "ignore_case": True}, "sorry!", "Pass"),
        ({"type": "regex", "pattern": "as an AI", "expect": "absent"}, "Sure.", "Pass"),
        ({"type": "regex", "pattern": "as an AI", "expect": "absent"}, "As an AI...", "Pass"),
        ({"type": "regex", "pattern": "(?i)as an AI", "expect": "absent"}, "As an AI", "Fail"),
        ({"type": "keywords", "keywords": ["refund", "14 days"]}, "Refund within 14 days", "Pass"),
        ({"type": "keywords", "keywords": ["refund", "14 days"]}, "A refund is possible", "Fail"),
        ({"type": "keywords", "keywords": ["api"]}, "rapid", "Fail"),  # word boundaries
        ({"type": "keywords", "keywords": ["C++"]}, "I like C++.", "Pass"),
        ({"type": "keywords", "keywords": ["x", "y"], "require": "any"}, "only y", "Pass"),
        ({"type": "keywords", "keywords": ["Refund"], "case_sensitive": True}, "refund", "Fail"),
        ({"type": "keywords", "keywords": ["guarantee"], "require": "none"}, "ok", "Pass"),
        ({"type": "keywords", "keywords": ["guarantee"], "require": "none"}, "Guarantee!", "Fail"),
        ({"type": "length", "max": 3}, "one two three", "Pass"),
        ({"type": "length", "max": 3}, "one two three four", "Fail"),
        ({"type": "length", "min": 5, "unit": "chars"}, "abcd", "Fail"),
        ({"type": "length", "min": 0, "max": 0, "unit": "chars"}, "", "Pass"),
        ({"type": "json"}, '{"a": 1}', "Pass"),
        ({"type": "json"}, "{'a': 1}", "Fail"),
        ({"type": "json"}, '```json\n{"a": 1}\n```', "Fail"),
        ({"type": "json", "allow_fenced": True}, '```json\n{"a": 1}\n```', "Pass"),
    ],
)
def test_builtin_checks(spec: dict[str, Any], response: str, answer: str) -> None:
    assert _run(spec, response)[0] == answer


SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}


def test_json_schema_inline_and_from_file(tmp_path: Path) -> None:
    spec = {"type": "json", "json_schema": SCHEMA}
    assert _run(spec, '{"name": "Ada", "age": 36}')[0] == "Pass"
    answer, reason = _run(spec, '{"name": "Ada", "age": "old"}')
    assert answer == "Fail" and "$.age" in reason and "integer" in reason
    (tmp_path / "person.json").write_text(json.dumps(SCHEMA))
    from_file = {"type": "json", "json_schema_file": "person.json"}
    assert _run(from_file, '{"age": 3}', tmp_path)[0] == "Fail"
    with pytest.raises(ConfigError, match="invalid JSON Schema"):
        _run({"type": "json", "json_schema": {"type": "nonsense"}}, "{}")


def test_invalid_check_specs_are_config_errors(tmp_path: Path) -> None:
    bad = [
        {"type": "regex", "pattern": "("},
        {"type": "length"},
        {"type": "length", "min": 5, "max": 2},
        {"type": "keywords", "keywords": []},
        {"type": "python", "function": "no_colon"},
        {"type": "sql"},
    ]
    for spec in bad:
        data = {
            "name": "c",
            "kind": "code",
            "definition": "d",
            "pass_definition": "p",
            "fail_definition": "f",
            "check": spec,
        }
        path = tmp_path / "c.yaml"
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ConfigError):
            load_criterion(path)


def test_kind_and_check_must_agree() -> None:
    base = {"name": "c", "definition": "d", "pass_definition": "p", "fail_definition": "f"}
    with pytest.raises(ValueError, match="needs a `check`"):
        Criterion.model_validate({**base, "kind": "code"})
    with pytest.raises(ValueError, match="only for criteria of kind 'code'"):
        Criterion.model_validate({**base, "check": {"type": "json"}})


USER_CHECKS = """
def short(response):
    return len(response) < 10

def labelled(response, question):
    return ("Pass" if question.endswith("?") else "Fail", "question mark: " + question[-1])

def everything(**kwargs):
    return {"answer": "pass", "reasoning": sorted(kwargs)}

def meta(metadata):
    return metadata["lang"] == "en"

def wrong(response):
    return 3

def strange(answer):
    return True
"""


@pytest.fixture
def checks_dir(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mine.py").write_text(USER_CHECKS)
    (tmp_path / "checks.py").write_text(USER_CHECKS)
    return tmp_path


def test_python_callables_from_the_criterion_folder(checks_dir: Path) -> None:
    def run(function: str, response: str = "short") -> tuple[str, str]:
        return _run({"type": "python", "function": function}, response, checks_dir)

    assert run("checks:short")[0] == "Pass"
    assert run("checks:short", "a much longer answer")[0] == "Fail"
    assert run("pkg.mine:labelled") == ("Pass", "question mark: ?")
    assert run("checks:everything") == ("Pass", "['item', 'metadata', 'question', 'response']")
    assert run("checks:meta")[0] == "Pass"
    with pytest.raises(TypeError, match="returned 3"):
        run("checks:wrong")
    with pytest.raises(TypeError, match="unknown parameter"):
        run("checks:strange")
    with pytest.raises(ConfigError, match="no function 'missing'"):
        run("checks:missing")
    with pytest.raises(ConfigError, match="cannot import 'nowhere'"):
        run("nowhere:f")


def test_user_verdict_shapes() -> None:
    assert user_verdict(True).answer == "Pass"
    assert user_verdict(("FAIL", "why")).reasoning == "why"
    assert user_verdict({"verdict": False, "reasoning": "r"}).answer == "Fail"
    with pytest.raises(TypeError):
        user_verdict("maybe")


def test_fingerprint_follows_the_check_and_its_source(checks_dir: Path) -> None:
    check = CHECK.validate_python({"type": "python", "function": "checks:short"})
    before = check_fingerprint(check, checks_dir)
    assert before == check_fingerprint(check, checks_dir)
    (checks_dir / "checks.py").write_text(USER_CHECKS.replace("< 10", "< 11"))
    assert check_fingerprint(check, checks_dir) != before
    other = CHECK.validate_python({"type": "regex", "pattern": "a"})
    assert check_fingerprint(other, None) != check_fingerprint(
        CHECK.validate_python({"type": "regex", "pattern": "b"}), None
    )


def test_code_provider_answers_like_a_judge() -> None:
    criterion = Criterion.model_validate(
        {
            "name": "digits",
            "kind": "code",
            "definition": "d",
            "pass_definition": "p",
            "fail_definition": "f",
            "check": {"type": "regex", "pattern": r"\d"},
        }
    )
    request = code_request(criterion, _item("room 101"), "a", None)
    completion = asyncio.run(CodeProvider().complete(request))
    assert completion.structured == {
        "reasoning": "pattern found: '1' at character 5",
        "answer": "Pass",
    }
    assert json.loads(completion.text)["answer"] == "Pass"


def test_code_request_carries_the_typed_check_and_hashes_its_text(tmp_path: Path) -> None:
    criterion = Criterion.model_validate(
        {
            "name": "digits",
            "kind": "code",
            "definition": "d",
            "pass_definition": "p",
            "fail_definition": "f",
            "check": {"type": "regex", "pattern": r"\d"},
        }
    )
    request = code_request(criterion, _item("room 101"), "a", tmp_path)
    assert isinstance(request, CheckRequest)
    assert request.check is criterion.check and request.arm == "a"
    assert request.base_dir == tmp_path
    # The JSON texts exist for the prompt hash and the cache key: editing the check changes them.
    edited = criterion.model_copy(
        update={"check": CHECK.validate_python({"type": "regex", "pattern": r"\d\d"})}
    )
    assert code_request(edited, _item("room 101"), "a", tmp_path).prompt_hash() != (
        request.prompt_hash()
    )


def test_code_provider_refuses_a_model_prompt() -> None:
    from jurybox.records import CompletionRequest

    with pytest.raises(BadRequestError, match="code-criterion"):
        asyncio.run(CodeProvider().complete(CompletionRequest("s", "u", 10)))


def test_code_criterion_through_the_pipeline_writes_judge_records(tmp_path: Path) -> None:
    criterion = tmp_path / "has_digit.yaml"
    criterion.write_text(
        yaml.safe_dump(
            {
                "name": "has_digit",
                "kind": "code",
                "definition": "d",
                "pass_definition": "p",
                "fail_definition": "f",
                "check": {"type": "regex", "pattern": r"\d"},
            }
        )
    )
    dataset = tmp_path / "data.jsonl"
    rows = [
        {"id": f"q{i}", "question": "q?", "responses": {"a": f"answer {'7' * (i % 2)}"}}
        for i in range(4)
    ]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = config_from_mapping(
        {
            "judges": {"code": {"provider": "fake"}},
            "task": {"mode": "criterion", "criteria": [str(criterion)]},
            "pipeline": {"test_retest_count": 0},
            "paths": {"dataset": str(dataset), "output_dir": str(tmp_path / "out")},
        }
    )
    # the judge is a fake model: the criterion mode has code criteria answered by their check
    summary = asyncio.run(run_async(config, output_dir=tmp_path / "out", runtime=Runtime()))
    records = sorted(read_records(summary.judgments_path), key=lambda r: r.query_id)
    assert [r.verdict for r in records] == ["Fail", "Pass", "Fail", "Pass"]
    assert {r.judge_vendor for r in records} == {"code"}
    assert {r.criterion for r in records} == {"has_digit"}
    assert all(r.status.value == "ok" and r.prompt_hash for r in records)


def test_plain_run_mixes_code_and_llm_criteria(tmp_path: Path) -> None:
    """`jurybox run` in criterion mode: code criteria are answered by their check, LLM
    criteria by the judge, in one judgments file."""
    from jurybox.app.run import run_from_config

    code = {
        "name": "short",
        "kind": "code",
        "definition": "d",
        "pass_definition": "p",
        "fail_definition": "f",
        "check": {"type": "length", "max": 3},
    }
    llm = {"name": "polite", "definition": "d", "pass_definition": "p", "fail_definition": "f"}
    (tmp_path / "short.yaml").write_text(yaml.safe_dump(code))
    (tmp_path / "polite.yaml").write_text(yaml.safe_dump(llm))
    rows = [
        {"id": f"q{i}", "question": "q?", "responses": {"a": "word " * (i + 2)}} for i in range(3)
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "judges": {"model": {"provider": "fake"}},
        "task": {"mode": "criterion", "criteria": ["short.yaml", "polite.yaml"]},
        "pipeline": {"test_retest_count": 0},
        "paths": {"dataset": "data.jsonl", "output_dir": "out"},
    }
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
    summary = run_from_config(tmp_path / "run.yaml")
    records = list(read_records(summary.judgments_path))
    by_criterion: dict[str, list[Any]] = {}
    for record in records:
        by_criterion.setdefault(record.criterion or "", []).append(record)
    short = sorted(by_criterion["short"], key=lambda r: r.query_id)
    assert [r.verdict for r in short] == ["Pass", "Pass", "Fail"]
    assert {r.judge_vendor for r in short} == {"code"} and short[0].judge_name == "model"
    assert {r.judge_vendor for r in by_criterion["polite"]} == {"fake"}
    assert all(r.status.value == "ok" for r in records)
