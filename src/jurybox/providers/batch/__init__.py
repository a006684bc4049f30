"""Provider batch APIs (``jurybox run --batch``): one module per vendor that has one.

``batch_backend(provider)`` wraps a synchronous provider of the openai, anthropic or google
adapter (same SDK client, key and error classification) in its vendor's batch API; every other
provider (local, openai_compatible, fake, a registered one) has none and runs synchronously.
Vendor modules are imported only when a judge needs them, like the adapters' SDKs.
"""

from __future__ import annotations

import importlib
from typing import Any

from jurybox.providers.base import Provider
from jurybox.providers.batch.base import (
    BatchBackend,
    BatchIntent,
    BatchLimits,
    BatchOutcome,
    BatchState,
)

__all__ = [
    "BATCH_VENDORS",
    "BatchBackend",
    "BatchIntent",
    "BatchLimits",
    "BatchOutcome",
    "BatchState",
    "batch_backend",
]

# provider.vendor -> the class (in this package) that speaks its batch API
BATCH_VENDORS = {
    "openai": "openai:OpenAIBatches",
    "anthropic": "anthropic:AnthropicBatches",
    "google": "google:GoogleBatches",
}


def batch_backend(provider: Provider) -> BatchBackend | None:
    """The provider's batch API, or None when its vendor has none."""
    target = BATCH_VENDORS.get(provider.vendor)
    if target is None:
        return None
    module, name = target.split(":")
    backend: Any = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    built: BatchBackend = backend(provider)
    return built
