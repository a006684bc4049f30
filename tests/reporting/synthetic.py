"""Synthetic JudgeRecords for the reporting tests (seeded, no ../shared needed).

Two small worlds: ``rubric_world`` (two judges score control and treatment on two dimensions,
with a retest, stated confidences, human total scores and a few failures whose raw text holds
HTML) and ``pairwise_world`` (two judges see every pair in both orders, gold preferences);
``criterion_records`` adds Pass/Fail verdicts with human labels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jurybox.records import Item, JudgeRecord, Status

ARMS = ("control", "treatment")
DIMS = ("accuracy", "clarity")
STAMP = "2025-01-01T00:00:00+00:00"
HOSTILE = '<script>alert("x")</script><img src="http://evil.example/x.png"> & </pre>'
JUDGES = {"judge-openai": "openai", "judge-claude": "anthropic"}


@dataclass
class World:
    items: list[Item]
    records: list[JudgeRecord]
    human: dict[str, dict[str, Any]]


def _items(n: int, rng: np.random.Generator) -> list[Item]:
    items = []
    for i in range(n):
        lengths = rng.integers(80, 900, size=2)
        items.append(
            Item(
                id=f"q{i:02d}",
                question=f"Question {i} <b>bold?</b>",
                responses={
                    arm: "word " * int(k // 5) for arm, k in zip(ARMS, lengths, strict=True)
                },
                metadata={"category": "math" if i % 2 else "writing"},
                authors={"control": "openai-gpt", "treatment": "anthropic-claude"},
            )
        )
    return items


def _base(
    key: str,
    qid: str,
    judge: str,
    *,
    mode: str,
    order: str,
    positions: dict[str, str],
    **fields: Any,
) -> JudgeRecord:
    return JudgeRecord(
        key=key,
        run_id="synthetic",
        query_id=qid,
        judge_name=judge,
        judge_model=f"{judge}-model",
        judge_vendor=JUDGES[judge],
        mode=mode,
        presentation_order=order,
        positions=positions,
        status=fields.pop("status", Status.OK),
        parse_success=fields.pop("parse_success", True),
        raw_response=fields.pop("raw_response", '{"ok": true}'),
        timestamp=STAMP,
        **fields,
    )


def _rubric_record(
    qid: str,
    judge: str,
    arm: str,
    quality: float,
    rng: np.random.Generator,
    *,
    retest: bool = False,
) -> JudgeRecord:
    scores = {d: float(np.clip(round(quality + rng.normal(0, 0.8)), 1, 10)) for d in DIMS}
    key = f"{qid}|{judge}|{arm}|r0" + ("|retest" if retest else "")
    return _base(
        key,
        qid,
        judge,
        mode="rubric",
        order=arm,
        positions={"A": arm},
        retest=retest,
        scores={arm: scores},
        overall={arm: float(np.mean(list(scores.values())))},
        confidences={arm: {d: float(rng.integers(1, 6)) for d in DIMS}},
    )


def _failure(
    qid: str, judge: str, arm: str, status: Status, *, raw: str | None, error: str
) -> JudgeRecord:
    return _base(
        f"{qid}|{judge}|{arm}|r1",
        qid,
        judge,
        mode="rubric",
        order=arm,
        positions={"A": arm},
        status=status,
        parse_success=False,
        raw_response=raw,
        error=error,
        repeat=1,
    )


def _failures() -> list[JudgeRecord]:
    long_text = "The judge rambled. " * 200 + HOSTILE
    unparsed, failed = Status.UNPARSED, Status.PROVIDER_ERROR
    return [
        _failure("q00", "judge-openai", "control", unparsed, raw=HOSTILE, error="no JSON found"),
        _failure(
            "q01", "judge-claude", "treatment", unparsed, raw=long_text, error="score 11 > 10"
        ),
        _failure(
            "q02", "judge-claude", "control", failed, raw=None, error="HTTP 500 after 5 tries"
        ),
    ]


def rubric_world(n_items: int = 24, seed: int = 7) -> World:
    rng = np.random.default_rng(seed)
    items = _items(n_items, rng)
    records: list[JudgeRecord] = []
    human: dict[str, dict[str, Any]] = {}
    for item in items:
        base = rng.uniform(4, 7)
        quality = {"control": base, "treatment": base + 1.2}
        for judge in JUDGES:
            for arm in ARMS:
                records.append(_rubric_record(item.id, judge, arm, quality[arm], rng))
        human[item.id] = {"overall": {arm: float(round(quality[arm])) for arm in ARMS}}
    for item in items[:8]:
        for arm in ARMS:
            records.append(_rubric_record(item.id, "judge-openai", arm, 6.0, rng, retest=True))
    records.extend(_failures())
    return World(items, records, human)


def _pair_record(qid: str, judge: str, first: str, winner: str, confidence: str) -> JudgeRecord:
    second = ARMS[1] if first == ARMS[0] else ARMS[0]
    positions = {"A": first, "B": second}
    preference = "A" if winner == first else "B"
    return _base(
        f"{qid}|{judge}|{first}_first|r0",
        qid,
        judge,
        mode="pairwise",
        order=f"{first}_first",
        positions=positions,
        preference=preference,
        preferred_arm=winner,
        confidence=confidence,
        response_a_label=first,
        response_b_label=second,
        raw_response=f'{{"verdict": "{preference}"}}',
    )


def pairwise_world(n_items: int = 40, seed: int = 11) -> World:
    """Judge "judge-claude" is position-biased (picks A 60% of the time regardless)."""
    rng = np.random.default_rng(seed)
    items = _items(n_items, rng)
    records: list[JudgeRecord] = []
    human: dict[str, dict[str, Any]] = {}
    for item in items:
        gold = ARMS[int(rng.random() < 0.6)]
        human[item.id] = {"preferred_arm": gold}
        for judge in JUDGES:
            for first in ARMS:
                biased = judge == "judge-claude" and rng.random() < 0.6
                right = rng.random() < 0.8
                other = ARMS[1] if gold == ARMS[0] else ARMS[0]
                winner = first if biased else (gold if right else other)
                conf = "high" if right else str(rng.choice(["low", "medium"]))
                records.append(_pair_record(item.id, judge, first, winner, conf))
    return World(items, records, human)


def write_jsonl(records: list[JudgeRecord], path: Any) -> None:
    path.write_text("".join(r.to_json() + "\n" for r in records), encoding="utf-8")


def criterion_records(n_items: int = 60, seed: int = 9) -> tuple[list[JudgeRecord], dict[str, Any]]:
    """Two criterion judges (one accurate, one lenient) over two arms; humans label two thirds."""
    rng = np.random.default_rng(seed)
    records, human = [], {}
    rates = {"good": (0.9, 0.9), "lenient": (0.98, 0.3)}
    for i in range(n_items):
        truth = {arm: bool(rng.random() < p) for arm, p in zip(ARMS, (0.6, 0.8), strict=True)}
        if i < 2 * n_items // 3:
            human[f"q{i}"] = {"verdict": {arm: "Pass" if t else "Fail" for arm, t in truth.items()}}
        for judge, (tpr, tnr) in rates.items():
            for arm, passed in truth.items():
                says_pass = rng.random() < tpr if passed else rng.random() > tnr
                records.append(
                    JudgeRecord(
                        key=f"q{i}|{judge}|{arm}|r0|c:concise",
                        run_id="crit",
                        query_id=f"q{i}",
                        judge_name=judge,
                        judge_model=judge,
                        judge_vendor="",
                        mode="criterion",
                        presentation_order=arm,
                        positions={"A": arm},
                        status=Status.OK,
                        parse_success=True,
                        raw_response="{}",
                        timestamp=STAMP,
                        criterion="concise",
                        verdict="Pass" if says_pass else "Fail",
                    )
                )
    return records, human
