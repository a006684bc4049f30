"""Provider registry: name -> factory. Vendor modules are imported lazily so a missing SDK only
matters to a config that names it."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from jurybox.config import JudgeConfig
from jurybox.errors import ConfigError
from jurybox.providers.base import Provider

ProviderFactory = Callable[[str, JudgeConfig], Provider]

# provider name -> "module:factory"; each factory takes (judge_name, JudgeConfig).
_BUILTIN: dict[str, str] = {
    "fake": "jurybox.providers.fake:create",
    "local": "jurybox.providers.local:create",
    "openai": "jurybox.providers.openai:create",
    "openai_compatible": "jurybox.providers.openai_compatible:create",
    "anthropic": "jurybox.providers.anthropic:create",
    "google": "jurybox.providers.google:create",
}
_REGISTERED: dict[str, ProviderFactory] = {}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Register (or replace) a provider factory, e.g. a scripted fake in a test."""
    _REGISTERED[name] = factory


def create_provider(judge_name: str, judge: JudgeConfig) -> Provider:
    """Build the provider for one configured judge."""
    factory = _REGISTERED.get(judge.provider)
    if factory is None:
        target = _BUILTIN.get(judge.provider)
        if target is None:
            raise ConfigError(f"unknown provider '{judge.provider}'", field=f"judges.{judge_name}")
        module_name, attr = target.split(":")
        factory = getattr(importlib.import_module(module_name), attr)
    return factory(judge_name, judge)
