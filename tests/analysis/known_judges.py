"""Synthetic pairwise judges of known quality on LLMBar data, for validating the trust verdict.

Each judge answers every LLMBar item in both presentation orders, exactly as LLMBar's own
evaluations do (``swap = False`` shows output_1 first, ``swap = True`` output_2 first). The items
and records mirror what ``jurybox.io.verdicts.llmbar`` imports from ``dataset.json``: item ids
``<subset>/<index>``, arms ``output_1`` / ``output_2`` and the gold as
``human = {"preferred_arm": "output_<label>"}``, so the analysis reads them like a real import.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jurybox.analysis.trust import BiasTest, Estimate, JudgeEvidence
from jurybox.records import Item, JudgeRecord, Status
from jurybox.stats import (
    clustered_proportion,
    holm,
    length_preference_given_truth,
    position_preference_given_truth,
)

ARMS = ("output_1", "output_2")
ORDERS = (("output_1", "output_2"), ("output_2", "output_1"))
RUN_ID = "synthetic-known-judges"
STAMP = "2026-01-01T00:00:00+00:00"
RIGHT_RATE = 0.92  # the "good but imperfect" judge: right with this probability per order

# How a judge picks, given the item, its gold arm, the shown order and a seeded RNG; None means
# the call failed (no verdict).
Policy = Callable[[Item, str, tuple[str, str], np.random.Generator], str | None]


def _other(arm: str) -> str:
    return ARMS[1] if arm == ARMS[0] else ARMS[0]


def longer_arm(item: Item) -> str:
    """The arm with more characters; output_1 on a tie (rare: Natural/13 is one)."""
    first, second = (len(item.responses[arm]) for arm in ARMS)
    return ARMS[1] if second > first else ARMS[0]


POLICIES: dict[str, Policy] = {
    "always_right": lambda item, gold, shown, rng: gold,
    "right_92": lambda item, gold, shown, rng: gold if rng.random() < RIGHT_RATE else _other(gold),
    "always_first_shown": lambda item, gold, shown, rng: shown[0],
    "always_longer": lambda item, gold, shown, rng: longer_arm(item),
    "coin_flip": lambda item, gold, shown, rng: ARMS[int(rng.integers(2))],
    "always_wrong": lambda item, gold, shown, rng: _other(gold),
    "never_answers": lambda item, gold, shown, rng: None,
}
JUDGES = tuple(POLICIES)


def shared_subsets(root: Path) -> list[Path]:
    """Every LLMBar subset folder (one holding a dataset.json) under ``root``."""
    return sorted(p for p in root.iterdir() if (p / "dataset.json").is_file())


def load_items(folder: Path) -> list[Item]:
    """The subset's items with their gold arm, built as the LLMBar importer builds them."""
    entries = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
    items = []
    for index, entry in enumerate(entries):
        label = str(entry["label"])
        if label not in ("1", "2"):
            raise ValueError(f"{folder}/dataset.json entry {index}: label {label!r}")
        items.append(
            Item(
                id=f"{folder.name}/{index}",
                question=entry["input"],
                responses={arm: entry[arm] for arm in ARMS},
                metadata={"source": f"llmbar/{folder.name}"},
                human={"preferred_arm": f"output_{label}"},
            )
        )
    return items


def gold_arm(item: Item) -> str:
    return str(item.human["preferred_arm"])


def judge_record(judge: str, item: Item, shown: tuple[str, str], winner: str | None) -> JudgeRecord:
    """One judged pair as the importers write it; ``winner`` None is a failed call."""
    ordering = f"{shown[0]}_first"
    ok = winner is not None
    return JudgeRecord(
        key=f"{item.id}|{judge}|{ordering}|r0",
        run_id=RUN_ID,
        query_id=item.id,
        judge_name=judge,
        judge_model=judge,
        judge_vendor="synthetic",
        mode="pairwise",
        presentation_order=ordering,
        positions={"A": shown[0], "B": shown[1]},
        status=Status.OK if ok else Status.PROVIDER_ERROR,
        parse_success=ok,
        raw_response=None if not ok else f'{{"verdict": "{"A" if winner == shown[0] else "B"}"}}',
        timestamp=STAMP,
        parse_method="synthetic" if ok else None,
        error=None if ok else "TransientError after 6 attempts: timed out (synthetic)",
        response_a_label=shown[0],
        response_b_label=shown[1],
        preference=None if not ok else ("A" if winner == shown[0] else "B"),
        preferred_arm=winner,
    )


def judge_records(judge: str, items: Sequence[Item], *, seed: int = 12) -> list[JudgeRecord]:
    """Every item in both orders, judged by the named policy; seeded, so reproducible."""
    policy = POLICIES[judge]
    rng = np.random.default_rng([seed, JUDGES.index(judge)])
    return [
        judge_record(judge, item, shown, policy(item, gold_arm(item), shown, rng))
        for item in items
        for shown in ORDERS
    ]


def panel_records(items: Sequence[Item], *, seed: int = 12) -> list[JudgeRecord]:
    """The records of every synthetic judge on ``items``."""
    return [record for judge in JUDGES for record in judge_records(judge, items, seed=seed)]


def accuracy(records: Sequence[JudgeRecord], items: Sequence[Item]) -> float:
    """Share of records whose verdict is the gold arm; failures count as wrong."""
    gold = {item.id: gold_arm(item) for item in items}
    return sum(r.preferred_arm == gold[r.query_id] for r in records) / len(records)


# --- evidence for jurybox.analysis.trust straight from the records (a reference for wiring) ----


def _swap(records: Sequence[JudgeRecord]) -> tuple[float, float | None]:
    """Swap consistency: (failures counted as inconsistent, over pairs parsed in both orders)."""
    by_item: dict[str, list[str | None]] = {}
    for record in records:
        by_item.setdefault(record.query_id, []).append(record.preferred_arm)
    same = [
        len(arms) == 2 and arms[0] is not None and arms[0] == arms[1] for arms in by_item.values()
    ]
    parsed = [arms for arms in by_item.values() if len(arms) == 2 and None not in arms]
    share = sum(same) / len(by_item)
    return share, (sum(a[0] == a[1] for a in parsed) / len(parsed) if parsed else None)


def _bias(test: Callable[..., Any], picked: list[bool], gold: list[bool], items: list[str]) -> Any:
    try:
        return test(picked, gold, clusters=items)
    except ValueError:  # nothing decided, or the feature on one side only: not testable
        return None


def raw_evidence(
    judge: str, records: Sequence[JudgeRecord], items: Sequence[Item]
) -> dict[str, Any]:
    """Accuracy (both ways), swap consistency (both ways), failure rate, bias tests (raw p);
    every interval and test counts items (a record's item is its cluster)."""
    by_id = {item.id: item for item in items}
    ok = [r for r in records if r.status == Status.OK]
    right = [r.preferred_arm == gold_arm(by_id[r.query_id]) for r in records]
    right_ok = [r.preferred_arm == gold_arm(by_id[r.query_id]) for r in ok]
    ok_items = [r.query_id for r in ok]
    gold_first = [gold_arm(by_id[r.query_id]) == r.positions["A"] for r in ok]
    gold_longer = [gold_arm(by_id[r.query_id]) == longer_arm(by_id[r.query_id]) for r in ok]
    picked_first = [r.preferred_arm == r.positions["A"] for r in ok]
    picked_longer = [r.preferred_arm == longer_arm(by_id[r.query_id]) for r in ok]
    return {
        "judge": judge,
        "accuracy": clustered_proportion(right, [r.query_id for r in records]),
        "accuracy_parsed": clustered_proportion(right_ok, ok_items) if ok else None,
        "failure_rate": 1 - len(ok) / len(records),
        "swap": _swap(records),
        "position": _bias(position_preference_given_truth, picked_first, gold_first, ok_items),
        "length": _bias(length_preference_given_truth, picked_longer, gold_longer, ok_items),
        "n_items": len({r.query_id for r in records}),
        "n_judgments": len(records),
    }


def _estimate(interval: Any) -> Estimate | None:
    return (
        None if interval is None else Estimate(interval.estimate, interval.ci_low, interval.ci_high)
    )


def panel_evidence(records: Sequence[JudgeRecord], items: Sequence[Item]) -> list[JudgeEvidence]:
    """One ``JudgeEvidence`` per judge, bias p-values Holm-adjusted across the judges."""
    judges = list(dict.fromkeys(r.judge_name for r in records))
    raw = [raw_evidence(j, [r for r in records if r.judge_name == j], items) for j in judges]
    adjusted: dict[tuple[str, str], BiasTest] = {}
    for kind in ("position", "length"):
        tested = [(e["judge"], e[kind]) for e in raw if e[kind] is not None]
        if tested:
            p_adjusted = holm([t.p_value for _, t in tested]).adjusted
            for (judge, test), p in zip(tested, p_adjusted, strict=True):
                adjusted[(judge, kind)] = BiasTest(effect=test.difference, p_adjusted=p)
    return [
        JudgeEvidence(
            judge=e["judge"],
            n_items=e["n_items"],
            n_judgments=e["n_judgments"],
            failure_rate=e["failure_rate"],
            has_labels=True,
            accuracy=_estimate(e["accuracy"]),
            accuracy_parsed=_estimate(e["accuracy_parsed"]),
            swap_consistency=e["swap"][0],
            swap_consistency_parsed=e["swap"][1],
            position=adjusted.get((e["judge"], "position")),
            length=adjusted.get((e["judge"], "length")),
        )
        for e in raw
    ]
