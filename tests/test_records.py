"""JudgeRecord serialisation: the shallow to_dict writes what dataclasses.asdict wrote."""

from __future__ import annotations

import dataclasses
import json

from jurybox.records import JudgeRecord, Status


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
