"""One rate limit across the cluster: two Ray workers pacing through the shared limiter start
requests at the judge's rpm together, not each."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from jurybox.config import config_from_mapping

ray = pytest.importorskip(
    "ray", reason="the `ray` extra is not installed (pip install 'jurybox[ray]')"
)

from jurybox.pipeline.engines.ray import SharedLimits, new_limiter  # noqa: E402

pytestmark = pytest.mark.slow
RPM = 1200  # 20 per second, paced one every 3.12 s / 60 (with the 4 % margin)
PER_WORKER = 30


def _grants(limiter: object, count: int) -> list[float]:
    """A worker's side: wait for ``count`` request slots; when each was granted."""

    async def take() -> list[float]:
        limits = SharedLimits(limiter, "j")
        times = []
        for _ in range(count):
            settle = await limits.acquire(100)
            times.append(time.time())
            settle(80)
        return times

    return asyncio.run(take())  # Ray tasks are synchronous functions


def test_two_workers_share_one_rpm(ray_address: str) -> None:
    del ray_address
    # tests/ is not on the workers' path: send this module's code along.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    config = config_from_mapping(
        {
            "judges": {"j": {"provider": "fake", "rpm": RPM, "tpm": 10_000_000}},
            "task": {"mode": "pairwise"},
            "paths": {"dataset": "unused.jsonl"},
        }
    )
    limiter = new_limiter(config, ["j"])
    worker = ray.remote(num_cpus=0.5)(_grants)
    parts = ray.get([worker.remote(limiter, PER_WORKER) for _ in range(2)])
    times = sorted(t for part in parts for t in part)
    ray.kill(limiter)
    assert len(times) == 2 * PER_WORKER
    in_any_second = max(sum(1 for t in times if start <= t < start + 1.0) for start in times)
    # Per worker the pair would start 40 a second; shared, at most rpm/60 (+1 for the edges).
    assert in_any_second <= RPM // 60 + 1
    assert times[-1] - times[0] >= (2 * PER_WORKER - 1) * 60 / RPM
