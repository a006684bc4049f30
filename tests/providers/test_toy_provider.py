"""A provider from outside jurybox: one ``register_provider`` call, then a pairwise run through it.

No jurybox source is edited: the registration makes ``provider: toy`` a valid config value, with
the settings it needs, and the runner builds it like any built-in adapter.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from jurybox.config import JudgeConfig, config_from_mapping
from jurybox.errors import ConfigError, ProviderError
from jurybox.io.judgments import read_records
from jurybox.pipeline import run_async
from jurybox.providers import registry
from jurybox.providers._common import classify_vendor_error, estimate_tokens
from jurybox.records import Completion, CompletionRequest, Status


class ToyProvider:
    """Always prefers the response shown first, with a reason."""

    vendor = "toy"
    is_local = False

    def __init__(self, judge_name: str, judge: JudgeConfig) -> None:
        self.model = judge.model or "toy"
        self.calls = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        answer = {"verdict": "A", "confidence": "high", "reasoning": "the toy prefers A"}
        return Completion(
            text=json.dumps(answer),
            model=self.model,
            input_tokens=estimate_tokens(request.system + request.user),
            output_tokens=12,
        )

    def classify_error(self, exc: BaseException) -> ProviderError:
        return classify_vendor_error(exc, self.vendor, lambda _: None)

    async def aclose(self) -> None:
        return None


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    # The registration below must not outlive this test.
    monkeypatch.setattr(registry, "_PROVIDERS", dict(registry._PROVIDERS))
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))


def _dataset(path: Path, n: int) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "responses": {"control": "c", "treatment": "t"},
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _config(dataset: Path, judge: dict[str, object]) -> dict[str, object]:
    return {
        "judges": {"toy_judge": judge},
        "task": {"mode": "pairwise"},
        "pipeline": {"test_retest_count": 0, "cache": False},
        "paths": {"dataset": str(dataset)},
    }


@pytest.mark.usefixtures("clean_registry")
def test_a_registered_toy_provider_runs_a_pairwise_job(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "data.jsonl", 3)
    with pytest.raises(ConfigError, match="unknown provider 'toy'"):
        config_from_mapping(_config(dataset, {"provider": "toy", "model": "toy-1"}))

    registry.register_provider("toy", ToyProvider, requires={"model": ""})

    with pytest.raises(ConfigError, match="provider 'toy' needs a `model`"):
        config_from_mapping(_config(dataset, {"provider": "toy"}))
    config = config_from_mapping(_config(dataset, {"provider": "toy", "model": "toy-1"}))
    out = tmp_path / "run"
    summary = asyncio.run(run_async(config, output_dir=out, console=Console(file=io.StringIO())))
    records = list(read_records(out / "judgments.jsonl"))
    assert summary.provider_calls == len(records) == 6  # 3 items in both orders
    assert {(r.judge_vendor, r.judge_model, r.status) for r in records} == {
        ("toy", "toy-1", Status.OK)
    }
    # The toy always picks position A, so the preferred arm is whichever was shown first.
    for r in records:
        assert (r.preference, r.preference_reasoning) == ("A", "the toy prefers A")
        assert r.positions is not None and r.preferred_arm == r.positions["A"]
    assert {r.preferred_arm for r in records} == {"control", "treatment"}
    assert "toy" in registry.provider_names()
