"""Provider registry: one entry per provider, the only list of provider names.

An entry names the factory (``"module:create"``, imported only when a judge uses it, so a missing
SDK matters only to a config that names it) and the ``JudgeConfig`` settings that provider needs.
``jurybox.config`` validates ``provider:`` and those needs against this table and ``jurybox
schema`` lists its names, so this module imports nothing of jurybox's but ``errors`` at run
time: the config layer can read it without a cycle.

Adding a built-in provider is one module exposing ``create(judge_name, judge) -> Provider`` plus
one line in ``_PROVIDERS``; a plugin or a test calls ``register_provider`` once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from jurybox.errors import ConfigError

if TYPE_CHECKING:
    from jurybox.config import JudgeConfig
    from jurybox.providers.base import Provider

ProviderFactory = Callable[[str, "JudgeConfig"], "Provider"]

# What a vendor judge must name, and the hint its error gives when it does not.
_MODEL = MappingProxyType({"model": ""})


@dataclass(frozen=True)
class ProviderEntry:
    """One provider: how to build it and which judge settings it cannot do without.

    ``requires`` maps a ``JudgeConfig`` field to the hint appended to the error raised when a
    judge leaves it unset (checked in order, so the most basic need is reported first).
    ``local``: the model runs on this machine's CPU (its providers say ``is_local``), so its
    calls are made one at a time unless the judge sets ``concurrency``.
    """

    factory: str | ProviderFactory
    requires: Mapping[str, str] = field(default_factory=dict)
    local: bool = False

    def build(self) -> ProviderFactory:
        if not isinstance(self.factory, str):
            return self.factory
        module_name, attr = self.factory.split(":")
        built: ProviderFactory = getattr(importlib.import_module(module_name), attr)
        return built


_PROVIDERS: dict[str, ProviderEntry] = {
    "anthropic": ProviderEntry("jurybox.providers.anthropic:create", _MODEL),
    "openai": ProviderEntry("jurybox.providers.openai:create", _MODEL),
    "openai_compatible": ProviderEntry(
        "jurybox.providers.openai_compatible:create",
        {
            "model": "",
            "base_url": " (e.g. http://127.0.0.1:8000/v1); use provider 'openai' for "
            "api.openai.com",
        },
    ),
    "google": ProviderEntry("jurybox.providers.google:create", _MODEL),
    "local": ProviderEntry("jurybox.providers.local:create", local=True),
    "fake": ProviderEntry("jurybox.providers.fake:create"),
}
# Factories registered at run time (plugins, tests); they win over an entry's own factory.
_REGISTERED: dict[str, ProviderFactory] = {}


def register_provider(
    name: str,
    factory: ProviderFactory,
    *,
    requires: Mapping[str, str] | None = None,
    local: bool | None = None,
) -> None:
    """Register (or replace) a provider, e.g. a scripted fake in a test.

    A new name becomes a valid ``provider:`` in configs at once; ``requires`` declares the judge
    settings it needs and ``local`` whether it runs on this machine (see ``ProviderEntry``).
    Replacing a provider keeps what it declared unless given.
    """
    known = _PROVIDERS.get(name)
    needs = requires if requires is not None else (known.requires if known else {})
    runs_here = local if local is not None else (known.local if known else False)
    _PROVIDERS[name] = ProviderEntry(factory, dict(needs), runs_here)
    _REGISTERED[name] = factory


def judge_concurrency(judge: JudgeConfig, default: int) -> int:
    """The calls in flight a judge gets, wherever the calls are made (this process or Ray): its
    own ``concurrency``, else 1 for a model on this machine's CPU (parallel calls would only
    fight over the cores), else ``default`` (``pipeline.concurrency``)."""
    if judge.concurrency:
        return judge.concurrency
    entry = _PROVIDERS.get(judge.provider)
    return 1 if entry is not None and entry.local else default


def provider_names() -> tuple[str, ...]:
    """Every provider a config may name, in registration order."""
    return tuple(_PROVIDERS)


def unknown_provider(name: str) -> str | None:
    """The error for a ``provider:`` no entry has (it lists the allowed names), or ``None``."""
    if name in _PROVIDERS:
        return None
    allowed = ", ".join(f"'{known}'" for known in _PROVIDERS)
    return f"unknown provider '{name}' (allowed: {allowed})"


def unmet_requirement(name: str, settings: Mapping[str, object]) -> str | None:
    """Why a judge of provider ``name`` with these ``settings`` cannot run, or ``None``."""
    entry = _PROVIDERS.get(name)
    if entry is None:
        return unknown_provider(name)
    for setting, hint in entry.requires.items():
        if not settings.get(setting):
            return f"provider '{name}' needs a `{setting}`{hint}"
    return None


def create_provider(judge_name: str, judge: JudgeConfig) -> Provider:
    """Build the provider for one configured judge."""
    factory = _REGISTERED.get(judge.provider)
    if factory is None:
        entry = _PROVIDERS.get(judge.provider)
        if entry is None:
            raise ConfigError(f"unknown provider '{judge.provider}'", field=f"judges.{judge_name}")
        factory = entry.build()
    return factory(judge_name, judge)
