"""The provider registry: the only list of provider names and of what each provider needs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import jurybox.providers.registry as registry_module
from jurybox.config import JudgeConfig, config_from_mapping
from jurybox.errors import ConfigError
from jurybox.providers import registry
from jurybox.providers.fake import FakeProvider

BUILTIN = ("anthropic", "openai", "openai_compatible", "google", "local", "fake")


@pytest.fixture(autouse=True)
def _restore(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_PROVIDERS", dict(registry._PROVIDERS))
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))


def _judge_error(judge: dict[str, object]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        config_from_mapping({"judges": {"j": judge}, "paths": {"dataset": "d.jsonl"}})
    return caught.value


def test_names_come_from_the_registry_and_errors_list_them() -> None:
    assert registry.provider_names() == BUILTIN
    error = _judge_error({"provider": "mistral", "model": "m"})
    assert error.field == "judges.j.provider"
    assert all(f"'{name}'" in str(error) for name in BUILTIN)


def test_each_entry_declares_what_its_judges_need() -> None:
    for vendor in ("anthropic", "openai", "google", "openai_compatible"):
        assert "needs a `model`" in str(_judge_error({"provider": vendor}))
    error = _judge_error({"provider": "openai_compatible", "model": "m"})
    assert "needs a `base_url` (e.g. http://127.0.0.1:8000/v1)" in str(error)
    assert JudgeConfig(provider="local").model is None  # local and fake need nothing
    assert JudgeConfig(provider="fake").model is None


def test_replacing_a_provider_keeps_its_needs_unless_given() -> None:
    registry.register_provider("openai", lambda name, judge: FakeProvider())
    assert "needs a `model`" in str(_judge_error({"provider": "openai"}))
    provider = registry.create_provider("j", JudgeConfig(provider="openai", model="m"))
    assert isinstance(provider, FakeProvider)
    registry.register_provider("openai", lambda name, judge: FakeProvider(), requires={})
    assert JudgeConfig(provider="openai").model is None


def test_a_new_provider_is_in_the_schema() -> None:
    from jurybox.config import config_json_schema

    registry.register_provider("toy", lambda name, judge: FakeProvider())
    provider = config_json_schema()["$defs"]["JudgeConfig"]["properties"]["provider"]
    assert provider["enum"] == [*BUILTIN, "toy"]


def test_the_registry_is_a_leaf_the_config_layer_may_read() -> None:
    # config.py validates names against the registry, so at run time the registry may import
    # nothing of jurybox's but errors (the rest only for type checking).
    tree = ast.parse(Path(registry_module.__file__).read_text(encoding="utf-8"))
    runtime_imports = {
        node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("jurybox")
    }
    assert runtime_imports == {"jurybox.errors"}
