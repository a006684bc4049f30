"""Each JudgeConfig setting declares whether it changes the judge's answer (``Affects``); the
response cache key, the manifest's resume check and the development loop's judge identity all
read that one declaration, so they agree on every field, and a new field joins all three."""

from __future__ import annotations

from typing import Annotated, Any

import pydantic
import pytest

from jurybox import config as config_module
from jurybox.config import Affects, JudgeConfig, RunConfig, affects, config_from_mapping
from jurybox.devloop.config import judge_identity
from jurybox.errors import ConfigError
from jurybox.pipeline.cache import cache_key
from jurybox.pipeline.manifest import check_resumable, config_snapshot
from jurybox.records import CompletionRequest

BASE: dict[str, Any] = {"provider": "openai", "model": "gpt-x", "api_key_env": "KEY_ENV"}
# base_urls belongs to openai_compatible alone: its change is tried from a one-replica fleet.
FLEET: dict[str, Any] = {
    "provider": "openai_compatible",
    "model": "m",
    "api_key_env": "KEY_ENV",
    "base_urls": ("http://127.0.0.1:8/v1",),
}
REQUEST = CompletionRequest(system="rules", user="question", max_tokens=100, seed=1)
# One other value per JudgeConfig field; the first test keeps this table complete.
OTHER: dict[str, Any] = {
    "provider": "anthropic",
    "model": "gpt-y",
    "api_key_env": "OTHER_ENV",
    "base_url": "http://127.0.0.1:9/v1",
    "base_urls": ("http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"),
    "temperature": 0.7,
    "max_tokens": 50,
    "max_tokens_param": "max_completion_tokens",
    "structured_output": False,
    "concurrency": 2,
    "rpm": 10.0,
    "tpm": 1000.0,
    "timeout_s": 5.0,
    "price_input_per_mtok": 1.0,
    "price_output_per_mtok": 2.0,
    "price_cached_input_per_mtok": 0.5,
    "batch_price_input_per_mtok": 0.4,
    "batch_price_output_per_mtok": 0.8,
    "family": "gpt",
    "model_path": "/models/other.gguf",
    "n_ctx": 2048,
    "extra_body": {"top_p": 0.5},
    "fake": {"behavior": "first"},
}


def _run_config(judge: JudgeConfig | dict[str, Any]) -> RunConfig:
    return config_from_mapping({"judges": {"j": judge}, "paths": {"dataset": "d.jsonl"}})


def _consumers_see(base: JudgeConfig, changed: JudgeConfig) -> dict[str, bool]:
    """Which of the three consumers tell ``base`` and ``changed`` apart."""
    manifest = {"config": config_snapshot(_run_config(base)), "dataset": {"hash": "h"}}
    try:
        check_resumable(manifest, _run_config(changed), "h")
        refused = False
    except ConfigError:
        refused = True
    return {
        "cache": cache_key("v", "m", base, REQUEST) != cache_key("v", "m", changed, REQUEST),
        "devloop": judge_identity(base, 512) != judge_identity(changed, 512),
        "resume": refused,
    }


def test_every_field_declares_one_effect_and_the_table_covers_them() -> None:
    assert set(OTHER) == set(JudgeConfig.model_fields)
    assert {name: affects(name) for name in OTHER}["n_ctx"] is Affects.ANSWER
    assert affects("max_tokens_param") is Affects.ANSWER
    assert affects("family") is Affects.RECORDS and affects("rpm") is Affects.NOTHING


@pytest.mark.parametrize("field", sorted(OTHER))
def test_the_three_consumers_agree_on_every_field(field: str) -> None:
    fields = FLEET if field == "base_urls" else BASE
    base = JudgeConfig(**fields)
    changed = JudgeConfig(**{**fields, field: OTHER[field]})
    seen = _consumers_see(base, changed)
    effect = affects(field)
    assert seen["cache"] is seen["devloop"] is (effect is Affects.ANSWER)
    # A resumed run also keeps what every record copies (the family), not only the answer.
    assert seen["resume"] is (effect in (Affects.ANSWER, Affects.RECORDS))


def test_a_new_field_with_the_marker_enters_all_three(monkeypatch: pytest.MonkeyPatch) -> None:
    # A JudgeConfig with one more setting, declared once as answer-changing.
    extended = pydantic.create_model(
        "JudgeConfig",
        __base__=JudgeConfig,
        top_k=(Annotated[int, Affects.ANSWER], 0),
    )
    run_config = pydantic.create_model(
        "RunConfig", __base__=RunConfig, judges=(dict[str, extended], ...)
    )
    monkeypatch.setattr(config_module, "JudgeConfig", extended)
    monkeypatch.setattr(config_module, "RunConfig", run_config)
    base, changed = extended(**BASE), extended(**BASE, top_k=40)
    assert config_module.answer_identity(changed)["top_k"] == 40
    assert _consumers_see(base, changed) == {"cache": True, "devloop": True, "resume": True}


def test_an_unmarked_field_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    unmarked = pydantic.create_model("JudgeConfig", __base__=JudgeConfig, top_p=(float, 1.0))
    monkeypatch.setattr(config_module, "JudgeConfig", unmarked)
    with pytest.raises(TypeError, match="top_p must carry exactly one Affects marker"):
        config_module.answer_fields()


def test_schema_lists_the_registered_provider_names() -> None:
    schema = config_module.config_json_schema()
    provider = schema["$defs"]["JudgeConfig"]["properties"]["provider"]
    assert provider["enum"] == [
        "anthropic",
        "openai",
        "openai_compatible",
        "google",
        "local",
        "fake",
    ]
