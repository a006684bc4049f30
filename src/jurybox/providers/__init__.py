"""Judge backends. Only ``providers/<vendor>.py`` imports that vendor's SDK.

``jurybox.config`` reads the provider names from ``registry`` (a leaf module), so this package
must not import ``base`` (which imports the config) while it loads: ``Provider`` and
``read_api_key`` are resolved on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jurybox.providers.registry import create_provider, provider_names, register_provider

if TYPE_CHECKING:
    from jurybox.providers.base import Provider, read_api_key

__all__ = ["Provider", "create_provider", "provider_names", "read_api_key", "register_provider"]


def __getattr__(name: str) -> Any:
    if name in ("Provider", "read_api_key"):
        return getattr(importlib.import_module("jurybox.providers.base"), name)
    raise AttributeError(f"module 'jurybox.providers' has no attribute {name!r}")
