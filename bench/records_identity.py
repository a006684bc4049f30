"""Records of many runs, normalised, into one folder: diff two trees' folders to show that a
change to the per-call code (issue 19) leaves every record as it was.

Usage: ``PYTHONPATH=<a tree's src> python bench/records_identity.py OUT`` for each tree, then
``diff -r OUT_A OUT_B`` (empty: identical). Records lose ``timestamp``, ``latency_ms`` and
``run_id`` (they differ from run to run) and are sorted; ``prompt_hash`` stays, and the wire
server's answers are a function of the request body, so equal verdicts mean equal bodies.

Runs: the fake provider on ``examples/{pairwise,rubric,ranking,criterion}.yaml``;
``openai_compatible`` on the same four configs (a judge with and one without structured output)
against ``wire_server.py`` with 429s, 5xx, malformed and unparsable answers and rate-limit
headers; answers cut at 40 bytes; a run stopped after 15 items and resumed; a closed port.
Backoff sleeps are skipped (an injected sleep), so it takes seconds.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wire_server import ThreadedWireServer, WireConfig

from jurybox.config import RunConfig, config_from_mapping, load_config
from jurybox.pipeline import run_async
from jurybox.pipeline.runner import Runtime

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DROP = ("timestamp", "latency_ms", "run_id")
MODES = ("pairwise", "rubric", "ranking", "criterion")


def dump(out: Path, name: str, run_dir: Path) -> None:
    """The run's records (normalised, sorted) and the manifest's counts, into ``out``."""
    lines = []
    for line in (run_dir / "judgments.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for key in DROP:
            record.pop(key, None)
        lines.append(json.dumps(record))
    (out / f"{name}.jsonl").write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    kept = {key: manifest.get(key) for key in ("status", "status_counts", "records")}
    (out / f"{name}.manifest.json").write_text(json.dumps(kept, sort_keys=True, indent=1))


async def _no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def run(config: RunConfig, directory: Path, **options: Any) -> None:
    runtime = Runtime(sleep=_no_sleep)
    asyncio.run(run_async(config, output_dir=directory, runtime=runtime, **options))


def wire_config(mode: str, url: str, *, max_answer_bytes: int | None = None) -> RunConfig:
    """An example config with two ``openai_compatible`` judges at ``url``, cache off."""
    source = EXAMPLES / f"{mode}.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    judge = {
        "provider": "openai_compatible",
        "model": "wire-judge",
        "base_url": url,
        "api_key_env": None,
        "concurrency": 8,
        "timeout_s": 2.0,
    }
    data["judges"] = {"wire": judge, "wire_text": {**judge, "structured_output": False}}
    data["paths"].pop("human_labels", None)
    pipeline = data.setdefault("pipeline", {})
    pipeline.update(cache=False, max_retries=1)
    if max_answer_bytes is not None:
        pipeline["max_answer_bytes"] = max_answer_bytes
    return config_from_mapping(data, source=str(source))


def main(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="jurybox-identity-"))
    for mode in MODES:
        run(load_config(EXAMPLES / f"{mode}.yaml"), work / f"fake-{mode}")
        dump(out, f"fake-{mode}", work / f"fake-{mode}")
    faults = WireConfig(
        seed=3,
        rate_429=0.05,
        rate_5xx=0.08,
        rate_malformed=0.06,
        rate_unparsable=0.08,
        rate_headers=True,
        retry_after_s=0.001,
    )
    for mode in MODES:
        with ThreadedWireServer(faults) as server:
            run(wire_config(mode, server.url), work / f"wire-{mode}")
        dump(out, f"wire-{mode}", work / f"wire-{mode}")
    with ThreadedWireServer(WireConfig(seed=5)) as server:
        run(wire_config("pairwise", server.url, max_answer_bytes=40), work / "wire-cut")
    dump(out, "wire-cut", work / "wire-cut")
    with ThreadedWireServer(WireConfig(seed=7, rate_5xx=0.2)) as server:
        config = wire_config("pairwise", server.url)
        run(config, work / "wire-resume", limit=15)
        run(config, work / "wire-resume", resume=True)
    dump(out, "wire-resume", work / "wire-resume")
    run(wire_config("pairwise", "http://127.0.0.1:9/v1"), work / "wire-down", limit=3)
    dump(out, "wire-down", work / "wire-down")
    shutil.rmtree(work, ignore_errors=True)
    print(f"{len(list(out.glob('*.jsonl')))} runs' records in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
