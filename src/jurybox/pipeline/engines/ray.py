"""The Ray engine: a run's provider calls spread over Ray worker actors.

Each worker (``UnitJudge``) runs jurybox's own providers, retries and parsing and returns the
records of one call; the driver keeps everything that makes a run a run (planning, the cache,
the one writer, the manifest, ``--resume``), so a Ray run's files are those of a local run.

One rate limit across the cluster: every attempt of every worker (retries included) first asks
one ``_Limiter`` actor, which holds the judge's ``JudgeLimits`` (the same pacing and token window
as a local run). ``concurrency`` holds because the driver dispatches at most ``concurrency``
calls of a judge at a time (``jurybox.ray.judge`` takes slots from the limiter instead).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ray

from jurybox.config import MAX_CONCURRENCY, RunConfig
from jurybox.modes import build_mode
from jurybox.pipeline.cache import cache_key
from jurybox.pipeline.ratelimit import FixedLimits, JudgeLimits
from jurybox.pipeline.runner import (
    Fresh,
    RunInputs,
    Runtime,
    _Judge,
    _Session,
    build_judge,
    request_for,
)
from jurybox.prompts import PromptSources
from jurybox.providers.registry import judge_concurrency
from jurybox.records import Completion, CompletionRequest, Item, JudgeRecord, WorkUnit

# Calls answered at once by one actor: past the largest concurrency a judge may have.
_ACTOR_CALLS = MAX_CONCURRENCY * 4


def connect(address: str | None) -> bool:
    """Join the cluster at ``address``, or start a local Ray; True when this call started it.

    A process that already joined one (a Ray Data pipeline, a test) keeps it.
    """
    if ray.is_initialized():
        return False
    ray.init(
        address=address,
        include_dashboard=False,
        logging_level=logging.WARNING,
    )
    return True


class _LimiterState:
    """Every judge's rate limits and concurrency slots for the whole run (a Ray actor)."""

    def __init__(self, limits: Mapping[str, tuple[float | None, float | None, int]]) -> None:
        self._limits = {name: JudgeLimits(rpm, tpm) for name, (rpm, tpm, _) in limits.items()}
        self._slots = {name: asyncio.Semaphore(slots) for name, (_, _, slots) in limits.items()}
        self._settles: dict[int, Callable[[int | None], None]] = {}
        self._next_charge = 0

    async def acquire(self, judge: str, estimated_tokens: int) -> int | None:
        """Wait for the judge's next request slot and tokens; the id to settle them by."""
        limits = self._limits[judge]
        settle = await limits.acquire(estimated_tokens)
        if limits.tokens is None:
            return None
        self._next_charge += 1
        self._settles[self._next_charge] = settle
        return self._next_charge

    def settle(self, charge: int, actual_tokens: int | None) -> None:
        settle = self._settles.pop(charge, None)
        if settle is not None:
            settle(actual_tokens)

    async def enter(self, judge: str) -> None:
        """Take one of the judge's ``concurrency`` slots (``jurybox.ray.judge``)."""
        await self._slots[judge].acquire()

    def leave(self, judge: str) -> None:
        self._slots[judge].release()


def judge_limits(
    config: RunConfig, judges: Sequence[str]
) -> dict[str, tuple[float | None, float | None, int]]:
    """Each judge's (rpm, tpm, calls in flight), as the ``_Limiter`` actor holds them."""
    return {
        name: (
            config.judges[name].rpm,
            config.judges[name].tpm,
            judge_concurrency(config.judges[name], config.pipeline.concurrency),
        )
        for name in judges
    }


def new_limiter(config: RunConfig, judges: Sequence[str]) -> Any:
    """The run's ``_Limiter`` actor. It takes no CPU: it must never wait for one."""
    limits = judge_limits(config, judges)
    actor = ray.remote(_LimiterState).options(num_cpus=0, max_concurrency=_ACTOR_CALLS * 4)
    return actor.remote(limits)


class SharedLimits(FixedLimits):
    """A judge's configured rate limits held by the cluster's ``_Limiter`` actor (the
    ``ratelimit.Limiter`` protocol). Limits learned from response headers are not shared: a
    judge without ``rpm``/``tpm`` runs unpaced on Ray (docs/engines.md)."""

    def __init__(self, limiter: Any, judge: str) -> None:
        self._limiter = limiter
        self._judge = judge

    async def acquire(self, estimated_tokens: int) -> Callable[[int | None], None]:
        charge = await self._limiter.acquire.remote(self._judge, estimated_tokens)

        def settle(actual_tokens: int | None) -> None:
            if charge is not None:  # fire and forget: the next acquire queues behind it
                self._limiter.settle.remote(charge, actual_tokens)

        return settle


class UnitJudge:
    """jurybox's own judging in a worker: one call (with retries) -> the records of its units.

    ``items`` may be filled in later (``jurybox.ray.judge`` adds each batch's items).
    """

    def __init__(
        self,
        config: RunConfig,
        items: dict[str, Item],
        run_id: str,
        limiter: Any,
        prompt: PromptSources | None = None,
    ) -> None:
        self.items = items
        # ``prompt``: the run's instructions / template as the driver read them (a worker on
        # another machine may not see the files).
        mode = build_mode(config, prompt=prompt)
        self.inputs = RunInputs(config, items, (), mode, Path("."))
        self._session = _Session(self.inputs, Runtime())
        self._run_id = run_id
        self._limiter = limiter
        self._judges: dict[str, _Judge] = {}

    def _judge(self, name: str) -> _Judge:
        judge = self._judges.get(name)
        if judge is None:  # built on first use, in the worker's own event loop
            limits = SharedLimits(self._limiter, name)
            judge = build_judge(self.inputs, name, self._run_id, Runtime(), limits)
            self._judges[name] = judge
        return judge

    async def judge(
        self, name: str, units: list[WorkUnit], request: CompletionRequest | None = None
    ) -> Fresh:
        judge = self._session.answered_by(self._judge(name), units)
        request = request or request_for(self.inputs, units)
        return await self._session.call_and_record(judge, units, request)

    def keyed(self, name: str, units: list[WorkUnit]) -> tuple[str, CompletionRequest]:
        """The call's request and the key ``jurybox run`` caches its answer under (the same
        judge, or the mode's own answerer, as ``jurybox run`` keys it)."""
        judge = self._session.answered_by(self._judge(name), units)
        request = request_for(self.inputs, units)
        key = cache_key(judge.provider.vendor, judge.provider.model, judge.config, request)
        return key, request

    def from_cache(
        self, name: str, units: list[WorkUnit], request: CompletionRequest, cached: Completion
    ) -> list[JudgeRecord]:
        """The records ``jurybox run`` writes for a cache hit (no attempt, no cost)."""
        judge = self._session.answered_by(self._judge(name), units)
        return self._session._records(
            judge, units, cached, request.prompt_hash(), attempts=0, hit=True
        )

    async def close(self) -> None:
        for judge in self._judges.values():
            await judge.provider.aclose()
        self._judges.clear()


class RayEngine:
    """``runner.Engine`` on Ray: calls go to the least busy of ``workers`` actors."""

    def __init__(self, *, address: str | None = None, workers: int | None = None) -> None:
        self.address = address
        self.workers = workers
        self._started_ray = False
        self._limiter: Any = None
        self._actors: list[Any] = []
        self._in_flight: list[int] = []

    async def start(self, inputs: RunInputs, run_id: str, judges: Sequence[str]) -> None:
        self._started_ray = connect(self.address)
        self._limiter = new_limiter(inputs.config, judges)
        items = ray.put(dict(inputs.items))  # once in the object store, not once per actor
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        count = self.workers or max(1, int(cpus))
        actor = ray.remote(UnitJudge).options(
            num_cpus=0,  # I/O-bound: a busy cluster must not leave the run with no worker
            max_concurrency=_ACTOR_CALLS,
            scheduling_strategy="SPREAD",
        )  # no restarts: a lost worker fails the run, and --resume redoes its calls
        self._actors = [
            actor.remote(inputs.config, items, run_id, self._limiter, inputs.mode.ctx.prompt)
            for _ in range(count)
        ]
        self._in_flight = [0] * count

    async def judge(self, judge: str, units: list[WorkUnit]) -> Fresh:
        index = min(range(len(self._actors)), key=self._in_flight.__getitem__)
        self._in_flight[index] += 1
        try:
            fresh: Fresh = await self._actors[index].judge.remote(judge, units)
        finally:
            self._in_flight[index] -= 1
        return fresh

    async def close(self) -> None:
        actors, self._actors = self._actors, []
        await asyncio.gather(*(actor.close.remote() for actor in actors), return_exceptions=True)
        for handle in [*actors, self._limiter]:
            if handle is not None:
                ray.kill(handle)
        self._limiter = None
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False
