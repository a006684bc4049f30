"""Judging as a stage of a Ray Data pipeline (the ``ray`` extra): ``judge(ds, config)``.

``judge`` takes a Ray Dataset whose rows are items (columns named like a jurybox dataset:
``id``, ``question``, ``responses`` ..., or renamed with ``columns`` / ``response_columns``) and
returns a Ray Dataset with one row per judgment, computed as the rows stream through an actor
pool (``map_batches``) that runs jurybox's own providers, prompts, retries and parsing. A row
holds ``key``, ``query_id``, ``judge_name``, ``status`` and ``record``: the record's line of a
``judgments.jsonl`` (JSON text, errors redacted), so ``write_judgments`` gives a file that
``jurybox analyze`` reads as it reads a run's.

Rate limits hold for the whole pipeline: one ``_Limiter`` actor paces every attempt of every
worker (rpm/tpm) and hands out the judge's ``concurrency`` slots. Differences from ``jurybox
run`` (docs/engines.md): no response cache, no manifest or resume (Ray Data re-executes what it
loses), and retest units only for ``pipeline.test_retest_query_ids`` (a streamed dataset has no
"first N items"). Item ids must be unique across the dataset; only a batch is checked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import ray.data

from jurybox.config import RunConfig, load_config
from jurybox.io.datasets import items_from_rows
from jurybox.io.judgments import record_json
from jurybox.pipeline.engines.ray import UnitJudge, connect, new_limiter
from jurybox.pipeline.run_dir import new_run_id
from jurybox.pipeline.units import make_batches, plan_units
from jurybox.records import Item, JudgeRecord, WorkUnit

__all__ = ["judge", "read_records", "write_judgments"]

COLUMNS = ("key", "query_id", "judge_name", "status", "record")


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

    Bad rows raise DatasetError (naming the row) when the Dataset executes.
    """
    if not isinstance(config, RunConfig):
        config = load_config(config)
    renames: dict[str, Any] = {}
    if columns is not None:
        renames["columns"] = dict(columns)
    if response_columns is not None:
        renames["response_columns"] = dict(response_columns)
    config = config.model_copy(update={"dataset": config.dataset.model_copy(update=renames)})
    connect(None)  # a no-op inside a pipeline: the Dataset's process already joined Ray
    limiter = new_limiter(config, list(config.judges))
    return ds.map_batches(
        _JudgeBatches,
        fn_constructor_kwargs={
            "config": config,
            "run_id": run_id or new_run_id(),
            "limiter": limiter,
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
    with path.open("w", encoding="utf-8") as handle:
        for row in ds.iter_rows():
            handle.write(row["record"] + "\n")
    return path


class _JudgeBatches:
    """One actor of the pool: a ``UnitJudge`` and its own event loop, kept across batches (the
    providers' HTTP sessions belong to it)."""

    def __init__(self, config: RunConfig, run_id: str, limiter: Any) -> None:
        self._config = config
        self._limiter = limiter
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
        done = await asyncio.gather(*(self._call(call) for call in calls))
        return [record for records in done for record in records]

    async def _call(self, units: list[WorkUnit]) -> list[JudgeRecord]:
        name = units[0].judge
        await self._limiter.enter.remote(name)  # the judge's concurrency, pipeline-wide
        try:
            fresh = await self._judge.judge(name, units)
        finally:
            self._limiter.leave.remote(name)
        return fresh.records


def _with_retests_in(config: RunConfig, items: Sequence[Item]) -> RunConfig:
    """The config for one batch: retests only for the listed ids that are in it."""
    wanted = config.pipeline.test_retest_query_ids or ()
    here = {item.id for item in items}
    ids = [query_id for query_id in wanted if query_id in here]
    pipeline = config.pipeline.model_copy(update={"test_retest_query_ids": tuple(ids)})
    return config.model_copy(update={"pipeline": pipeline})
