"""Adaptive rate control end to end: a judge with no ``rpm`` against a rate-limited server.

The loopback server (``bench/wire_server.py``) admits 1,200 requests a minute (40 in any 2 s)
and answers the rest 429 with Retry-After. With OpenAI's ``x-ratelimit-*`` headers on every
response, jurybox must learn the limit from the first answers and pace to it: at most 1 % of
requests refused and no judgment lost; without headers it must find the pace from the 429s
alone, still losing nothing. ``bench/adaptive_limits.py`` is the full-size version (1,000
judgments, BENCHMARKS.md).
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from jurybox.config import config_from_mapping
from jurybox.pipeline import run_async

from .conftest import StartServer
from .helpers import run_config, write_items

pytestmark = pytest.mark.slow

UNITS = 240  # pairwise, both orders: 120 items; 12 s at 1,200 a minute
SERVER = {"latency_s": 0.1, "rpm": 1200.0, "rate_window_s": 2.0, "seed": 3}


def _run(
    tmp_path: Path, url: str, provider: str, console: Console | None = None
) -> tuple[Any, float, dict[str, Any]]:
    dataset = write_items(tmp_path / "items.jsonl", UNITS // 2)
    mapping = run_config(
        dataset,
        tmp_path / "out",
        url,
        judge={"provider": provider},  # no rpm, no tpm: the limits are learned
        pipeline={"test_retest_count": 0, "position_bias_mode": "both", "concurrency": 64},
    )
    started = time.perf_counter()
    config = config_from_mapping(mapping)
    summary = asyncio.run(run_async(config, output_dir=tmp_path / "out", console=console))
    wall = time.perf_counter() - started
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    return summary, wall, manifest


def test_with_headers_the_limit_is_learned_and_kept(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(**SERVER, rate_headers=True)
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=240)  # draws the progress line
    summary, wall, manifest = _run(tmp_path, server.url, "openai", console)  # the openai SDK
    stats = server.stats()
    assert summary.units_run == UNITS
    assert summary.status_counts["ok"] == UNITS  # none lost
    assert stats["rate_limited"] <= 0.01 * stats["requests"], stats
    assert manifest["judges"]["wire"]["rate_limits"]["learned_rpm"] == 1200
    assert "wire: learned 1,200 rpm" in screen.getvalue()  # shown in the progress line
    bound = UNITS / 20.0
    assert wall < 1.6 * bound, (wall, bound)  # generous: a shared CI machine


def test_without_headers_the_pace_is_found_from_429s(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(**SERVER, rate_headers=False)
    summary, _, manifest = _run(tmp_path, server.url, "openai_compatible")
    stats = server.stats()
    assert summary.status_counts["ok"] == UNITS  # none lost, though some were refused
    assert stats["rate_limited"] <= 0.10 * stats["requests"], stats
    learned = manifest["judges"]["wire"]["rate_limits"]
    # The pace guessed from what the server admitted: never collapsed below half the limit, and
    # bounded above. The 2-second window admits 40 at once, so a burst reads as up to twice the
    # limit; the guess is 0.9 x that and grows 2 %/s until the next 429 episode: under 3 x.
    assert learned["learned_rpm"] is None and 600 <= learned["guessed_rpm"] <= 3600, learned
