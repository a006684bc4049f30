"""Finding a batch whose creation was never answered, on a vendor that keeps no label with it
(Anthropic): through the real SDK against the loopback wire server."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.providers.batch.anthropic import CLOCK_SKEW, AnthropicBatches
from jurybox.providers.batch.base import BatchIntent
from jurybox.providers.registry import create_provider

from .conftest import judge
from .wire_batch import BatchWire


def _backend(wire: BatchWire) -> AnthropicBatches:
    provider: Any = create_provider("j", JudgeConfig(**judge(wire, "anthropic")))
    return AnthropicBatches(provider)


def _made(wire: BatchWire, requests: int, minutes_ago: float = 0) -> str:
    """A batch of ``requests`` requests, created ``minutes_ago``; its id."""
    body = {"model": "claude-wire", "max_tokens": 8, "messages": []}
    batch = wire._new_batch("anthropic", "", [(f"r{i}", body) for i in range(requests)])
    batch.created -= minutes_ago * 60
    return batch.id


def _find(wire: BatchWire, requests: int, taken: frozenset[str] = frozenset()) -> str | None:
    intent = BatchIntent("jurybox-00000-j", requests, datetime.now(UTC), taken)

    async def find() -> str | None:
        backend = _backend(wire)
        try:
            return await backend.find(intent)
        finally:
            await backend.aclose()

    return asyncio.run(find())


def test_the_one_batch_of_that_size_made_since_the_intent_is_ours(batch_wire: Any) -> None:
    wire: BatchWire = batch_wire()
    _made(wire, 4)
    ours = _made(wire, 5)
    _made(wire, 6)
    assert _find(wire, 5) == ours


def test_batches_made_before_the_intent_less_the_clock_skew_are_not_ours(
    batch_wire: Any,
) -> None:
    wire: BatchWire = batch_wire()
    skew = CLOCK_SKEW / timedelta(minutes=1)
    _made(wire, 5, minutes_ago=skew + 1)
    assert _find(wire, 5) is None
    within = _made(wire, 5, minutes_ago=skew - 1)  # the vendor's clock may run behind ours
    assert _find(wire, 5) == within


def test_two_candidates_leave_it_unknown_and_logged_ids_are_never_taken(
    batch_wire: Any,
) -> None:
    wire: BatchWire = batch_wire()
    first, second = _made(wire, 5), _made(wire, 5)
    assert _find(wire, 5) is None
    assert _find(wire, 5, taken=frozenset({first})) == second


def test_the_search_pages_through_the_newest_batches(batch_wire: Any) -> None:
    """Listed 100 a page, newest first: ours is found on the third page."""
    wire: BatchWire = batch_wire()
    ours = _made(wire, 7)
    for _ in range(250):
        _made(wire, 3)
    assert _find(wire, 7) == ours
