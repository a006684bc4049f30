"""Judging as a stage of a Ray Data pipeline (the ``ray`` extra): ``judge(ds, config)``.

``judge`` takes a Ray Dataset whose rows are items (columns named like a jurybox dataset:
``id``, ``question``, ``responses`` ..., or renamed with ``columns`` / ``response_columns``) and
returns a Ray Dataset with one row per judgment, computed as the rows stream through an actor
pool (``map_batches``) that runs jurybox's own providers, prompts, retries and parsing. A row
holds ``key``, ``query_id``, ``judge_name``, ``status`` and ``record``: the record's line of a
``judgments.jsonl`` (JSON text, errors redacted), so ``write_judgments`` gives a file that
``jurybox analyze`` reads as it reads a run's.

Rate limits hold for the whole pipeline: one ``_Limiter`` actor paces every attempt of every
worker (rpm/tpm) and hands out the judge's ``concurrency`` slots. The response cache is
``jurybox run``'s (same file, keys and values, so either answers the other): one ``_CacheOwner``
actor on the driver's node holds the SQLite file, the one writer for every worker; a worker looks
up a batch's calls in one round trip and stores answers as they are paid for (a group commit:
one round trip for those that finished meanwhile), so a block that Ray Data re-executes, or a
pipeline run again, is not paid twice. Differences from ``jurybox
run`` (docs/engines.md): no manifest or resume (the cache stands in for it), and retest units
only for ``pipeline.test_retest_query_ids`` (a streamed dataset has no "first N items"). Item ids
must be unique across the dataset; only a batch is checked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import ray.data
from ray.exceptions import RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from jurybox.config import RunConfig, load_config
from jurybox.io.atomic import AtomicFile
from jurybox.io.datasets import items_from_rows
from jurybox.io.judgments import record_json
from jurybox.pipeline.cache import CACHE_FILE, ResponseCache
from jurybox.pipeline.engines.ray import UnitJudge, connect, new_limiter
from jurybox.pipeline.run_dir import new_run_id
from jurybox.pipeline.units import make_batches, plan_units
from jurybox.pricing import price_judges
from jurybox.records import Completion, CompletionRequest, Item, JudgeRecord, WorkUnit

__all__ = ["judge", "read_records", "write_judgments"]

_OWNER_RESTARTS = 3
# A call's cache key, request and cached answer (all None with the cache off).
_LookedUp = tuple[str | None, CompletionRequest | None, Completion | None]


def judge(
    ds: ray.data.Dataset,
    config: RunConfig | str | Path,
    columns: Mapping[str, str] | None = None,
    *,
    response_columns: Mapping[str, str] | None = None,
    run_id: str | None = None,
    workers: int = 2,
    batch_size: int = 32,
    num_cpus: float = 0.25,
    cache: bool | None = None,
    cache_path: str | Path | None = None,
) -> ray.data.Dataset:
    """The judgments of every item of ``ds`` by every judge of ``config``, as a lazy Dataset.

    Args:
        ds: rows of items.
        config: a RunConfig or the path of a run config (its ``paths.dataset`` is not read).
        columns, response_columns: rename like the config's ``dataset`` section (they replace
            it when given): ``{"question": "prompt"}``, ``{"control": "base", ...}``.
        run_id: written into every record; a new one by default.
        workers: judging actors. batch_size: rows per batch (its units run concurrently).
        num_cpus: per actor; judging waits on the network, so a fraction of a CPU.
        cache: the response cache on or off; None: the config's ``pipeline.cache`` (on by
            default), or on when ``cache_path`` is given.
        cache_path: the cache file (relative: to the working directory); None: the config's
            ``pipeline.cache_path`` (relative: to the config file's folder), else
            ``<paths.output_dir>/cache.sqlite``, the file ``jurybox run`` uses. It is opened
            now, on the driver's node, so a file that is not a SQLite cache fails here
            (ConfigError naming it, the file untouched) before any call is paid for.

    Bad rows raise DatasetError (naming the row) when the Dataset executes.
    """
    if not isinstance(config, RunConfig):
        config = load_config(config)
    config, _ = price_judges(config)  # the price table, as in `jurybox run`
    renames: dict[str, Any] = {}
    if columns is not None:
        renames["columns"] = dict(columns)
    if response_columns is not None:
        renames["response_columns"] = dict(response_columns)
    config = config.model_copy(update={"dataset": config.dataset.model_copy(update=renames)})
    path = _cache_file(config, cache, cache_path)
    connect(None)  # a no-op inside a pipeline: the Dataset's process already joined Ray
    owner = None if path is None else _open_cache(path)  # first: a bad file costs nothing
    return ds.map_batches(
        _JudgeBatches,
        fn_constructor_kwargs={
            "config": config,
            "run_id": run_id or new_run_id(),
            "limiter": new_limiter(config, list(config.judges)),
            "cache": owner,
        },
        batch_format="pyarrow",
        batch_size=batch_size,
        concurrency=workers,
        num_cpus=num_cpus,
    )


def read_records(ds: ray.data.Dataset) -> Iterator[JudgeRecord]:
    """The records of a ``judge`` Dataset (executes it), in the Dataset's order."""
    for row in ds.iter_rows():
        yield JudgeRecord.from_dict(json.loads(row["record"]))


def write_judgments(ds: ray.data.Dataset, path: str | Path) -> Path:
    """Write a ``judge`` Dataset as a judgments.jsonl (for ``jurybox analyze``); the path."""
    path = Path(path)
    with AtomicFile(path) as handle:  # text: known secrets redacted as written
        for row in ds.iter_rows():
            handle.write(row["record"] + "\n")
        handle.commit()
    return path


def _cache_file(
    config: RunConfig, cache: bool | None, cache_path: str | Path | None
) -> Path | None:
    """Where the pipeline's cache is (absolute: workers and the cache actor have their own
    working directories), or None when it is off."""
    if cache is False and cache_path is not None:
        raise ValueError("cache=False with a cache_path: turn the cache on, or drop the path")
    if cache is None:
        cache = config.pipeline.cache or cache_path is not None
    if not cache:
        return None
    if cache_path is not None:
        return Path(cache_path).absolute()
    if config.pipeline.cache_path:
        return config.resolve(config.pipeline.cache_path).absolute()
    return (config.resolve(config.paths.output_dir) / CACHE_FILE).absolute()


class _CacheOwner:
    """The pipeline's ``ResponseCache`` (a Ray actor): the one SQLite connection, used by one
    thread (a synchronous actor runs its calls one at a time), for the workers of every node.
    The file is opened by the first call, in that thread (a restarted actor opens it again)."""

    def __init__(self, path: str) -> None:
        self._path = Path(path)
        self._cache: ResponseCache | None = None

    def open(self) -> int:
        """Open the file now; the number of answers it holds."""
        return len(self._opened())

    def get_many(self, keys: Sequence[str]) -> list[Completion | None]:
        return [self._opened().get(key) for key in keys]

    def put_many(self, answers: Sequence[tuple[str, Completion]]) -> None:
        cache = self._opened()
        for key, completion in answers:
            cache.put(key, completion)

    def _opened(self) -> ResponseCache:
        if self._cache is None:
            self._cache = ResponseCache(self._path)
        return self._cache


def _open_cache(path: Path) -> Any:
    """A ``_CacheOwner`` on this (the driver's) node, where ``path`` means what the user meant,
    with the file opened; a file that is not a cache raises its ConfigError here."""
    node = ray.get_runtime_context().get_node_id()
    actor = ray.remote(_CacheOwner).options(
        num_cpus=0,  # it must never wait for a CPU the judging actors hold
        scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
        # A crashed owner comes back and its calls are sent again: a look-up or a put (INSERT
        # OR REPLACE of the same answer) done twice is done once.
        max_restarts=_OWNER_RESTARTS,
        max_task_retries=_OWNER_RESTARTS,
    )
    owner: Any = actor.remote(str(path))
    try:
        ray.get(owner.open.remote())
    except RayTaskError as failed:
        ray.kill(owner)
        raise failed.cause from None  # the ConfigError naming the file, not Ray's wrapper
    return owner


class _PutBuffer:
    """A worker's answers on their way to the cache actor, as a group commit: each is sent as
    soon as the send before it is back, with every answer that finished meanwhile. A paid answer
    is stored within about one round trip, and the actor gets one call per round trip, not one
    per answer."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner
        self._waiting: list[tuple[str, Completion]] = []
        self._sending: asyncio.Task[None] | None = None
        self._failed: BaseException | None = None

    def add(self, key: str, completion: Completion) -> None:
        self._waiting.append((key, completion))
        if self._sending is None or self._sending.done():
            self._sending = asyncio.ensure_future(self._send())

    async def _send(self) -> None:
        try:
            while self._waiting:
                answers, self._waiting = self._waiting, []
                await self._owner.put_many.remote(answers)
        except Exception as failed:  # a full disk: raised by flush(), which fails the batch
            self._failed = failed

    async def flush(self) -> None:
        """Wait until every answer added is stored; raise what storing one raised."""
        if self._sending is not None:
            await self._sending
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed


class _JudgeBatches:
    """One actor of the pool: a ``UnitJudge`` and its own event loop, kept across batches (the
    providers' HTTP sessions belong to it)."""

    def __init__(self, config: RunConfig, run_id: str, limiter: Any, cache: Any) -> None:
        self._config = config
        self._limiter = limiter
        self._cache = cache  # a _CacheOwner, or None with the cache off
        self._puts = _PutBuffer(cache)
        self._items: dict[str, Item] = {}
        self._judge = UnitJudge(config, self._items, run_id, limiter)
        self._loop = asyncio.new_event_loop()

    def __call__(self, batch: pa.Table) -> pa.Table:
        # Rows are numbered within the batch: a pool's actors do not know the global order.
        source = f"a Ray Dataset batch of {batch.num_rows} rows"
        items = items_from_rows(batch.to_pylist(), self._config.dataset, source=source)
        units = plan_units(_with_retests_in(self._config, items), items)
        self._items.clear()
        self._items.update((item.id, item) for item in items)
        records = self._loop.run_until_complete(self._judge_units(units))
        return pa.table(
            {
                "key": [record.key for record in records],
                "query_id": [record.query_id for record in records],
                "judge_name": [record.judge_name for record in records],
                "status": [str(record.status) for record in records],
                "record": [record_json(record) for record in records],
            }
        )

    async def _judge_units(self, units: Sequence[WorkUnit]) -> list[JudgeRecord]:
        calls = make_batches(self._config, units)
        looked_up = await self._look_up(calls)
        try:
            done = await asyncio.gather(
                *(self._answer(call, *found) for call, found in zip(calls, looked_up, strict=True))
            )
        finally:
            await self._puts.flush()  # stored before the batch's rows leave (or its error)
        return [record for records in done for record in records]

    async def _look_up(self, calls: Sequence[list[WorkUnit]]) -> list[_LookedUp]:
        """Each call's cache key, request and cached answer: one round trip for the batch."""
        if self._cache is None:
            return [(None, None, None)] * len(calls)
        keyed = [self._judge.keyed(call[0].judge, call) for call in calls]
        cached = await self._cache.get_many.remote([key for key, _ in keyed])
        return [(key, request, hit) for (key, request), hit in zip(keyed, cached, strict=True)]

    async def _answer(
        self,
        units: list[WorkUnit],
        key: str | None,
        request: CompletionRequest | None,
        cached: Completion | None,
    ) -> list[JudgeRecord]:
        name = units[0].judge
        if cached is not None and request is not None:
            return self._judge.from_cache(name, units, request, cached)
        await self._limiter.enter.remote(name)  # the judge's concurrency, pipeline-wide
        try:
            fresh = await self._judge.judge(name, units, request)
        finally:
            self._limiter.leave.remote(name)
        if key is not None and fresh.completion is not None:
            self._puts.add(key, fresh.completion)  # stored now, not when the batch ends
        return fresh.records


def _with_retests_in(config: RunConfig, items: Sequence[Item]) -> RunConfig:
    """The config for one batch: retests only for the listed ids that are in it."""
    wanted = config.pipeline.test_retest_query_ids or ()
    here = {item.id for item in items}
    ids = [query_id for query_id in wanted if query_id in here]
    pipeline = config.pipeline.model_copy(update={"test_retest_query_ids": tuple(ids)})
    return config.model_copy(update={"pipeline": pipeline})
