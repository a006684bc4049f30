"""Synthetic Pass/Fail (criterion) judges of known quality, for validating the trust verdict.

Each item has one response (arm ``assistant``) with a human Pass/Fail label per criterion
(``human = {"verdict": {"assistant": ...}}``, the form of ``examples/labelled.jsonl``); each judge
answers every item once per criterion, as ``jurybox run`` writes criterion records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from jurybox.records import Item, JudgeRecord, Status

ARM = "assistant"
STAMP = "2026-01-01T00:00:00+00:00"

# How a judge answers, given the human label and a seeded RNG; None: the call failed.
PassFailPolicy = Callable[[str, np.random.Generator], str | None]

POLICIES: dict[str, PassFailPolicy] = {
    "always_right": lambda human, rng: human,
    "always_pass": lambda human, rng: "Pass",
    "always_fail": lambda human, rng: "Fail",
    "coin_flip": lambda human, rng: ("Pass", "Fail")[int(rng.integers(2))],
    "never_answers": lambda human, rng: None,
}


def items(n_pass: int, n_fail: int) -> list[Item]:
    """``n_pass`` items labelled Pass, then ``n_fail`` labelled Fail."""
    labels = ["Pass"] * n_pass + ["Fail"] * n_fail
    return [
        Item(
            id=f"i{index:03d}",
            question=f"question {index}",
            responses={ARM: f"response {index}"},
            human={"verdict": {ARM: label}},
        )
        for index, label in enumerate(labels)
    ]


def record(judge: str, item: Item, verdict: str | None, criterion: str) -> JudgeRecord:
    """One criterion judgment as ``jurybox run`` writes it; ``verdict`` None is a failed call."""
    ok = verdict is not None
    return JudgeRecord(
        key=f"{item.id}|{judge}|{ARM}|r0|c:{criterion}",
        run_id="synthetic-pass-fail",
        query_id=item.id,
        judge_name=judge,
        judge_model=judge,
        judge_vendor="synthetic",
        mode="criterion",
        presentation_order=ARM,
        positions={"A": ARM},
        status=Status.OK if ok else Status.PROVIDER_ERROR,
        parse_success=ok,
        raw_response=f'{{"answer": "{verdict}"}}' if ok else None,
        timestamp=STAMP,
        parse_method="synthetic" if ok else None,
        error=None if ok else "TransientError after 6 attempts: timed out (synthetic)",
        criterion=criterion,
        verdict=verdict,
    )


def judge_records(
    judge: str, labelled: Sequence[Item], *, criteria: Sequence[str] = ("c1",), seed: int = 3
) -> list[JudgeRecord]:
    """Every item once per criterion, answered by the named policy; seeded, so reproducible."""
    policy = POLICIES[judge]
    rng = np.random.default_rng([seed, list(POLICIES).index(judge)])
    return [
        record(judge, item, policy(str(item.human["verdict"][ARM]), rng), criterion)
        for item in labelled
        for criterion in criteria
    ]


def panel_records(labelled: Sequence[Item], *, seed: int = 3) -> list[JudgeRecord]:
    """The records of every synthetic Pass/Fail judge on ``labelled``."""
    return [r for judge in POLICIES for r in judge_records(judge, labelled, seed=seed)]
