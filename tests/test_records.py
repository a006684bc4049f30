"""JudgeRecord serialisation: the shallow to_dict writes what dataclasses.asdict wrote."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest

from jurybox.records import CompletionRequest, JudgeRecord, RateLimits, Status


def _record() -> JudgeRecord:
    return JudgeRecord(
        key="q1|j|control_first|r0",
        run_id="run",
        query_id="q1",
        judge_name="j",
        judge_model="m",
        judge_vendor="openai",
        mode="rubric",
        presentation_order="control_first",
        positions={"A": "control", "B": "treatment"},
        status=Status.OK,
        parse_success=True,
        raw_response='{"scores": {}}',
        timestamp="2026-11-22T00:00:00+00:00",
        scores={"control": {"accuracy": 7.0}, "treatment": {"accuracy": 8.0}},
        overall={"control": 7.0, "treatment": 8.0},
        gate_failures={"control": [], "treatment": ["accuracy"]},
        ranking=["treatment", "control"],
        scores_response_a={"accuracy": 7.0},
    )


def test_to_json_matches_asdict_and_round_trips() -> None:
    record = _record()
    legacy = dataclasses.asdict(record)
    legacy["status"] = "ok"
    assert record.to_dict() == legacy
    assert record.to_json() == json.dumps(legacy, ensure_ascii=False)
    again = JudgeRecord.from_dict(json.loads(record.to_json()))
    assert again == record
    assert again.status is Status.OK


def test_from_dict_ignores_unknown_fields() -> None:
    data = {**_record().to_dict(), "added_in_a_later_schema": 1}
    assert JudgeRecord.from_dict(data) == _record()


def test_from_dict_builds_what_the_constructor_builds() -> None:
    """Reading a record back goes through the constructor: the same record as it
    gives from the same values, and a line missing a field is still a ``TypeError``."""
    data = json.loads(_record().to_json())
    read = JudgeRecord.from_dict(data)
    constructed = JudgeRecord(**{**data, "status": Status(data["status"])})
    assert read == constructed and repr(read) == repr(constructed)
    assert read.to_json() == constructed.to_json()
    del data["timestamp"]
    with pytest.raises(TypeError, match="timestamp"):
        JudgeRecord.from_dict(data)


@pytest.mark.parametrize(
    ("system", "user", "schema"),
    [
        ("rules", "question", None),
        ("règles ☃", 'a "quoted"\nuser\u2028text', {"type": "object", "b": [1, 2.5], "a": None}),
        ("", "", {"z": {"y": 1, "x": 2}}),
    ],
)
def test_prompt_hash_is_the_hash_of_the_sorted_json(
    system: str, user: str, schema: dict[str, Any] | None
) -> None:
    payload = json.dumps(
        {"system": system, "user": user, "schema": schema}, sort_keys=True, ensure_ascii=False
    )
    expected = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    for _ in range(2):  # the second time from the kept prefix
        request = CompletionRequest(system=system, user=user, max_tokens=1, response_schema=schema)
        assert request.prompt_hash() == expected


def test_rate_limits_are_true_when_any_is_said() -> None:
    assert not RateLimits()
    assert RateLimits(tokens_reset_s=0.0)
    assert RateLimits(retry_after_s=1.0)
