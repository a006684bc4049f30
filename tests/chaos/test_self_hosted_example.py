"""``examples/self_hosted.yaml`` runs as written against an OpenAI-compatible server: only the
placeholders a user edits (model names, base URLs) are swapped for the local wire server."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import yaml

from jurybox.config import config_from_mapping
from jurybox.pipeline import run_async

from .conftest import StartServer
from .helpers import planned_keys, split_jsonl

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "self_hosted.yaml"


def test_self_hosted_example_runs_against_a_compatible_server(
    tmp_path: Path, wire_server: StartServer
) -> None:
    server = wire_server(latency_s=0.01, seed=3)
    mapping = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    for name, judge in mapping["judges"].items():
        assert judge["provider"] == "openai_compatible" and "EDIT-ME" in judge["model"]
        judge.update(model=f"served-{name}", base_url=server.url)
    mapping["paths"]["dataset"] = str(EXAMPLE.parent / mapping["paths"]["dataset"])
    mapping["paths"]["human_labels"] = str(EXAMPLE.parent / mapping["paths"]["human_labels"])
    mapping["pipeline"]["cache"] = False
    config = config_from_mapping(mapping)
    out = tmp_path / "run"

    summary = asyncio.run(run_async(config, output_dir=out))

    rows, torn = split_jsonl(out / "judgments.jsonl")
    assert torn == b""
    assert sorted(row["key"] for row in rows) == sorted(planned_keys(config))
    assert Counter(row["status"] for row in rows) == {"ok": len(rows)}
    assert {row["judge_vendor"] for row in rows} == {"openai_compatible"}
    assert server.stats()["requests"] == len(rows) == summary.units_run
