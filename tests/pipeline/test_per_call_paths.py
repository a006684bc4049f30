"""The per-call shortcuts of a run (issue 19, CPU per judgment) give what the general code they
stand for gives: the record timestamp, the unit key, the limiter's path when nothing waits, a
record's JSON."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pickle
from datetime import UTC, datetime
from typing import Any

from jurybox.pipeline import recording
from jurybox.pipeline.ratelimit import AdaptiveLimits
from jurybox.records import Completion, JudgeRecord, Status, WorkUnit, unit_key


def test_utc_now_is_the_isoformat_stamp() -> None:
    for _ in range(2000):
        before = datetime.now(UTC).isoformat(timespec="milliseconds")
        stamp = recording.utc_now()
        after = datetime.now(UTC).isoformat(timespec="milliseconds")
        assert before <= stamp <= after
        assert datetime.fromisoformat(stamp).isoformat(timespec="milliseconds") == stamp
    # A stamp of a second other than the kept one is worked out afresh.
    recording._STAMP[:] = [0, "1970-01-01T00:00:00"]
    assert recording.utc_now() > datetime.now(UTC).replace(microsecond=0).isoformat()[:19]


def test_a_units_key_is_worked_out_once_and_is_unit_key() -> None:
    parts = ("q|1", "judge\\x", "control_first", ("control", "treatment"), 2, True, "c")
    unit = WorkUnit(*parts)
    expected = unit_key("q|1", "judge\\x", "control_first", 2, criterion="c", retest=True)
    assert unit.key == expected
    assert unit.__dict__["key"] is unit.key  # kept
    assert unit == WorkUnit(*parts)  # the kept key is no field: equality is as before


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def _state(limits: AdaptiveLimits) -> tuple[object, ...]:
    return (
        limits.in_flight,
        limits.waiting,
        limits.window,
        limits._estimate,
        limits._first_start,
        tuple(limits._starts),
        tuple(limits._admitted),
        limits.best_rate,
    )


def test_the_limiters_short_path_keeps_the_general_paths_state() -> None:
    """Calls that find nothing to wait for (the short path) leave the limits as calls through
    the general path do: the same starts, window growth and estimate."""

    async def calls(limits: AdaptiveLimits, clock: _Clock) -> list[object]:
        states = []
        for index in range(40):
            async with limits.attempt(100 + index, lambda exc: exc) as turn:  # type: ignore[arg-type, return-value]
                states.append(_state(limits))
                clock.now += 0.01
                turn.done(Completion("x", "m", input_tokens=10, output_tokens=2))
            states.append(_state(limits))
        return states

    # A window at the judge's concurrency from the start: no slow-start pace either.
    fast_clock, slow_clock = _Clock(), _Clock()
    fast = AdaptiveLimits(16, clock=fast_clock, sleep=fast_clock.sleep)
    slow = AdaptiveLimits(16, clock=slow_clock, sleep=slow_clock.sleep)
    general = {id(fast): 0, id(slow): 0}
    for limits in (fast, slow):
        paced_turn = limits._paced_turn

        async def counted(limits: AdaptiveLimits = limits, paced_turn=paced_turn) -> None:  # type: ignore[no-untyped-def]
            general[id(limits)] += 1
            await paced_turn()

        limits._paced_turn = counted  # type: ignore[method-assign]
    # A token window no call can fill sends every call down the general path.
    slow._learn_tokens(1e12)
    fast_states = asyncio.run(calls(fast, fast_clock))
    slow_states = asyncio.run(calls(slow, slow_clock))
    assert general == {id(fast): 0, id(slow): 40}
    assert fast_states == slow_states


def _records() -> list[JudgeRecord]:
    fields: dict[str, Any] = {
        "key": "q1|j|control_first|r0",
        "run_id": "run",
        "query_id": "q1",
        "judge_name": "j",
        "judge_model": "m",
        "judge_vendor": "fake",
        "mode": "pairwise",
        "presentation_order": "control_first",
        "positions": {"A": "control", "B": "treatment"},
        "status": Status.OK,
        "parse_success": True,
        "raw_response": 'say "A" — ünïcode \ud800',
        "timestamp": "2026-11-25T20:00:00.000+00:00",
    }
    built = JudgeRecord(**{**fields, "preference": "A", "latency_ms": 12.5})
    return [
        built,
        JudgeRecord(**fields),  # the generated __init__
        dataclasses.replace(built, error="boom", status=Status.PROVIDER_ERROR),
        JudgeRecord.from_dict(json.loads(built.to_json().replace("\\ud800", ""))),
        pickle.loads(pickle.dumps(built)),
    ]


def test_a_records_json_is_its_dicts_json() -> None:
    for record in _records():
        assert list(record.__dict__) == [f.name for f in dataclasses.fields(JudgeRecord)]
        assert record.to_json() == json.dumps(record.to_dict(), ensure_ascii=False)
    # An attribute beyond the fields (never set by jurybox) takes the general path.
    odd = _records()[0]
    odd.__dict__["extra"] = 1
    assert odd.to_json() == json.dumps(odd.to_dict(), ensure_ascii=False)


def test_unit_keys_without_separators_are_the_escaped_join() -> None:
    import itertools

    from jurybox.records import _escape_part

    pieces = ["q1", "a|b", "back\\slash", "|", "\\", "", "x\\|y", "ok"]
    for item_id, judge, ordering in itertools.product(pieces, repeat=3):
        for criterion, retest in [(None, False), ("c|1", True), ("plain", False)]:
            parts = [item_id, judge, ordering, "r0"]
            parts += [f"c:{criterion}"] if criterion is not None else []
            parts += ["retest"] if retest else []
            expected = "|".join(_escape_part(part) for part in parts)
            key = unit_key(item_id, judge, ordering, 0, criterion=criterion, retest=retest)
            assert key == expected


def test_an_answer_is_cut_only_past_the_cap() -> None:
    from jurybox.pipeline.answer_cap import cap_answer

    for text in ["a" * 10, "é" * 10, "\U0001f642" * 10, "\ud800" * 10]:
        size = len(text.encode("utf-8", "surrogatepass"))
        for cap in (size - 1, size, size + 1, 4 * len(text), 4 * len(text) - 1):
            completion = Completion(text, "m")
            cut, original = cap_answer(completion, cap)
            if size <= cap:
                assert cut is completion and original is None
            else:
                assert original == size and len(cut.text.encode("utf-8", "surrogatepass")) <= cap


def test_a_prompts_token_estimate_is_that_of_its_joined_text() -> None:
    from jurybox.providers._common import estimate_tokens, estimate_tokens_of

    for parts in [("", ""), ("a", ""), ("abc", "de"), ("x" * 4001, "y" * 7)]:
        assert estimate_tokens_of(*parts) == estimate_tokens("".join(parts))
