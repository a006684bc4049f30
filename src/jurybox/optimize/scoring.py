"""A candidate's per-item score against the gold labels, read from its run's records.

The item is the unit: an item's score is the share of its judgments (every presentation order
and repeat; retests left out) that agree with the gold label, a failed judgment (no verdict)
counting as wrong, as in the trust verdict's headline accuracy. What "agree" means by mode:

* pairwise: the preferred arm (or ``tie``) is the gold preference;
* ranking: the arm ranked first is the gold preference;
* rubric: per repeat, the arm with the higher overall score is the gold preference (equal
  overall scores: a tie); a repeat where an arm has no score counts as wrong;
* criterion: the verdict is the arm's gold Pass/Fail.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from jurybox.records import JudgeRecord, Status


def _agrees(record: JudgeRecord, gold: Any, mode: str) -> bool:
    if record.status != Status.OK:
        return False
    if mode == "criterion":
        arm = record.presentation_order
        return isinstance(gold, Mapping) and record.verdict == gold.get(arm)
    if mode == "ranking":
        return record.ranking is not None and len(record.ranking) > 0 and record.ranking[0] == gold
    return record.preferred_arm is not None and record.preferred_arm == gold


def _rubric_shares(records: Sequence[JudgeRecord], gold: str) -> list[bool]:
    """One outcome per repeat: the arm scored higher overall against the gold preference."""
    by_repeat: dict[int, dict[str, float | None]] = defaultdict(dict)
    for record in records:
        arm = record.presentation_order  # rubric mode judges one arm per record
        ok = record.status == Status.OK and record.overall is not None
        by_repeat[record.repeat][arm] = record.overall.get(arm) if ok and record.overall else None
    outcomes = []
    for scores in by_repeat.values():
        values = [v for v in scores.values() if v is not None]
        if len(values) < 2 or len(values) != len(scores):
            outcomes.append(False)
            continue
        best = max(values)
        winners = [arm for arm, v in scores.items() if v == best]
        outcomes.append((winners[0] if len(winners) == 1 else "tie") == gold)
    return outcomes


def item_scores(
    records: Iterable[JudgeRecord],
    gold: Mapping[str, Any],
    ids: Sequence[str],
    *,
    mode: str,
    judge: str,
) -> list[float]:
    """The score of each item of ``ids``, in that order.

    Raises:
        ValueError: an item of ``ids`` has no record of ``judge`` (its run is not done).
    """
    mine: dict[str, list[JudgeRecord]] = defaultdict(list)
    wanted = set(ids)
    for record in records:
        if record.judge_name == judge and not record.retest and record.query_id in wanted:
            mine[record.query_id].append(record)
    missing = [qid for qid in ids if not mine.get(qid)]
    if missing:
        raise ValueError(f"{len(missing)} items have no judgment yet (first: {missing[0]})")
    scores = []
    for qid in ids:
        if mode == "rubric":
            outcomes = _rubric_shares(mine[qid], gold[qid])
        else:
            outcomes = [_agrees(record, gold[qid], mode) for record in mine[qid]]
        scores.append(sum(outcomes) / len(outcomes))
    return scores
