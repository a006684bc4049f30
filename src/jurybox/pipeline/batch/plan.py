"""Split one judge's calls into provider batches under the vendor's limits.

A call is a group of work units answered by one request (one unit, or a batch-pairwise group).
Calls of the same item, repeat and retest pass (both presentation orders of a pair) form a
bundle that is never split over two batches, so a pair's two orders are answered by the same
batch and share its fate (an expired batch expires both orders, never just one).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jurybox.providers.batch.base import BatchLimits, line_bytes
from jurybox.records import WorkUnit

Call = list[WorkUnit]


@dataclass(frozen=True)
class PlannedBatch:
    """One batch to submit: its calls by ``custom_id``, and their vendor lines."""

    calls: dict[str, Call]
    lines: list[dict[str, Any]]
    size_bytes: int

    @property
    def requests(self) -> dict[str, list[str]]:
        return {cid: [unit.key for unit in call] for cid, call in self.calls.items()}


def bundles(calls: Sequence[Call]) -> list[list[Call]]:
    """Calls grouped by (item, repeat, retest), in first-seen order."""
    grouped: dict[tuple[str, int, bool], list[Call]] = {}
    for call in calls:
        first = call[0]
        grouped.setdefault((first.item_id, first.repeat, first.retest), []).append(call)
    return list(grouped.values())


def no_prefix() -> str:
    return ""


def random_prefix() -> str:
    """A custom-id prefix of a batch's own: no other batch's results carry its ids."""
    return f"{secrets.token_hex(4)}-"


def plan_batches(
    calls: Sequence[Call],
    line_for: Callable[[str, Call], dict[str, Any]],
    limits: BatchLimits,
    id_prefix: Callable[[], str] = no_prefix,
) -> list[PlannedBatch]:
    """Fill batches bundle by bundle; a bundle that would overflow one starts the next. Each
    batch's custom ids are ``id_prefix()`` (drawn once per batch) and a request number.

    Raises ValueError for a single bundle larger than a whole batch may be (one request over
    the vendor's byte limit cannot be sent as a batch at all).
    """
    planned: list[PlannedBatch] = []
    calls_now: dict[str, Call] = {}
    lines_now: list[dict[str, Any]] = []
    size_now = 0
    prefix = id_prefix()
    for bundle in bundles(calls):
        made = [(f"{prefix}r{len(calls_now) + i:06d}", call) for i, call in enumerate(bundle)]
        lines = [line_for(cid, call) for cid, call in made]
        size = sum(line_bytes(line) for line in lines)
        if size > limits.max_bytes or len(lines) > limits.max_requests:
            raise ValueError(f"one request of {size:,} bytes exceeds the batch limit")
        full = len(lines_now) + len(lines) > limits.max_requests
        if lines_now and (full or size_now + size > limits.max_bytes):
            planned.append(PlannedBatch(calls_now, lines_now, size_now))
            calls_now, lines_now, size_now = {}, [], 0
            prefix = id_prefix()
            made = [(f"{prefix}r{i:06d}", call) for i, call in enumerate(bundle)]
            lines = [line_for(cid, call) for cid, call in made]
        calls_now.update(made)
        lines_now.extend(lines)
        size_now += size
    if lines_now:
        planned.append(PlannedBatch(calls_now, lines_now, size_now))
    return planned
