"""What ``jurybox.ray.judge``'s response cache costs: the cache actor's round trips, and a whole
pipeline with the cache off, filling it, and answered by it (needs the `ray` extra).

    python bench/ray_cache.py [--items 200] [--repeat 3]

The judge is a scripted fake (no network), so the pipeline figures are the cache's overhead on
top of Ray Data's, the worst case: with a real judge each call also waits on the vendor. Wall
times are best of ``--repeat``; the load average is printed beside them (the machine may be
shared).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
import ray.data

import jurybox.ray
from jurybox.config import config_from_mapping
from jurybox.records import Completion

CONFIG: dict[str, Any] = {
    "judges": {"long": {"provider": "fake", "fake": {"behavior": "longer"}, "concurrency": 8}},
    "task": {"mode": "pairwise", "arms": ["control", "treatment"]},
    "paths": {"dataset": "unused"},
}


def _best(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def actor_round_trips(folder: Path, repeat: int) -> None:
    """ms per put and per get_many of one batch's keys, awaited from an async caller."""
    owner = jurybox.ray._open_cache(folder / "actor.sqlite")
    answer = Completion(text="Answer A is better. " * 20, model="m", input_tokens=300)
    keys = [f"{i:064x}" for i in range(256)]

    async def puts() -> None:
        for key in keys:
            await owner.put_many.remote([(key, answer)])

    async def grouped() -> None:
        for start in range(0, len(keys), 32):
            await owner.put_many.remote([(key, answer) for key in keys[start : start + 32]])

    async def gets() -> None:
        for start in range(0, len(keys), 32):
            await owner.get_many.remote(keys[start : start + 32])

    put_s = _best(repeat, lambda: asyncio.run(puts()))
    grouped_s = _best(repeat, lambda: asyncio.run(grouped()))
    get_s = _best(repeat, lambda: asyncio.run(gets()))
    print(f"put_many (one answer, awaited):   {put_s / len(keys) * 1000:.2f} ms")
    print(f"put_many (32 answers, awaited):   {grouped_s / (len(keys) / 32) * 1000:.2f} ms")
    print(f"get_many (32 keys, all hits):     {get_s / (len(keys) / 32) * 1000:.2f} ms")
    ray.kill(owner)


def pipelines(folder: Path, items: int, repeat: int) -> None:
    config = config_from_mapping(CONFIG)
    rows = [
        {"id": f"q{i:05d}", "question": f"Q{i}?", "responses": {"control": "a", "treatment": "bb"}}
        for i in range(items)
    ]

    def run(**cache: Any) -> None:
        # A few large blocks, as a file source gives (one row per block would be all overhead).
        blocks = ray.data.from_items(rows, override_num_blocks=4)
        judged = jurybox.ray.judge(blocks, config, **cache)
        judged.materialize()

    off = _best(repeat, lambda: run(cache=False))
    fills = iter(range(repeat))
    fill = _best(repeat, lambda: run(cache_path=folder / f"fill{next(fills)}.sqlite"))
    warm = _best(repeat, lambda: run(cache_path=folder / "fill0.sqlite"))
    units = items * 2
    print(f"pipeline, {units} units, cache off:  {off:.2f} s")
    print(f"pipeline, {units} units, filling:    {fill:.2f} s")
    print(f"pipeline, {units} units, all hits:   {warm:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as folder:
        actor_round_trips(Path(folder), args.repeat)
        pipelines(Path(folder), args.items, args.repeat)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
