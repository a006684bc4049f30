"""One concurrency rule wherever the calls are made: the slots Ray's shared limiter hands out
(``jurybox.ray.judge``) are the workers a local run gives the same judge, for every provider
kind; a model on this machine's CPU (``local``) gets one unless the judge says otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurybox.config import config_from_mapping
from jurybox.pipeline.runner import Runtime, build_judge, load_inputs
from jurybox.providers.fake import FakeProvider
from jurybox.providers.registry import provider_names

ray = pytest.importorskip(
    "ray", reason="the `ray` extra is not installed (pip install 'jurybox[ray]')"
)

from jurybox.pipeline.engines.ray import judge_limits  # noqa: E402

# What each built-in provider needs to be a valid judge.
NEEDS: dict[str, dict[str, Any]] = {
    "openai_compatible": {"model": "m", "base_url": "http://127.0.0.1:9/v1"},
    "local": {},
    "fake": {"model": "fake"},
}


def _config(tmp_path: Path, provider: str, concurrency: int | None) -> Any:
    dataset = tmp_path / "items.jsonl"
    dataset.write_text(
        '{"id": "q1", "question": "Q?", "responses": {"control": "a", "treatment": "b"}}\n',
        encoding="utf-8",
    )
    judge = {"provider": provider, **NEEDS.get(provider, {"model": "m"})}
    if concurrency is not None:
        judge["concurrency"] = concurrency
    return config_from_mapping(
        {
            "judges": {"j": judge},
            "task": {"mode": "pairwise"},
            "pipeline": {"concurrency": 16, "test_retest_count": 0},
            "paths": {"dataset": str(dataset), "output_dir": str(tmp_path / "out")},
        }
    )


@pytest.mark.parametrize("concurrency", [None, 3])
@pytest.mark.parametrize("provider", provider_names())
def test_ray_gives_a_judge_the_slots_a_local_run_gives_it(
    tmp_path: Path, provider: str, concurrency: int | None
) -> None:
    config = _config(tmp_path, provider, concurrency)
    # The provider object is not what decides (a Ray driver has none): the judge's config is.
    runtime = Runtime(providers={"j": FakeProvider()})
    local = build_judge(load_inputs(config), "j", "run", runtime).workers
    on_ray = judge_limits(config, ["j"])["j"][2]
    assert on_ray == local
    expected = concurrency or (1 if provider == "local" else 16)
    assert local == expected
