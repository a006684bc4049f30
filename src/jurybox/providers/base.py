"""The provider contract: one async ``complete`` plus ``classify_error``.

SDK retries are switched off in every adapter (``max_retries=0`` or equivalent); the single retry
policy lives in ``jurybox.pipeline``. ``classify_error`` turns whatever the SDK raised into the
``ProviderError`` tree so that policy can treat all vendors alike.
"""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable

from jurybox.config import JudgeConfig
from jurybox.errors import AuthError, ProviderError
from jurybox.records import Completion, CompletionRequest
from jurybox.redaction import register_proxy_environment, register_secret, register_url


@runtime_checkable
class Provider(Protocol):
    """What the pipeline needs from a judge backend."""

    vendor: str  # recorded as judge_vendor: "anthropic", "openai", ..., or a registered provider's
    model: str  # the model name recorded in every JudgeRecord
    is_local: bool  # True for the bundled/local llama.cpp judge

    async def complete(self, request: CompletionRequest) -> Completion:
        """Make one call. Raises whatever the SDK raises; the pipeline calls classify_error."""
        ...

    def classify_error(self, exc: BaseException) -> ProviderError:
        """Map an exception raised by ``complete`` to AuthError / BadRequestError /
        RateLimitError(retry_after) / TransientError."""
        ...

    async def aclose(self) -> None:
        """Release connections and models."""
        ...


def register_judge_secrets(judge: JudgeConfig) -> None:
    """Register for redaction (``jurybox.redaction``) every secret the judge's calls carry: its
    key, the user info of its ``base_url`` / ``base_urls`` and of the proxy variables. Called
    when a provider reads its key and, for every judge, before a run writes anything."""
    if judge.api_key_env is not None:
        register_secret(os.environ.get(judge.api_key_env))
    for url in (judge.base_url, *(judge.base_urls or ())):
        register_url(url)
    register_proxy_environment()


def read_api_key(judge: JudgeConfig, judge_name: str) -> str | None:
    """Read the judge's key from its environment variable at call time, never storing it (it is
    registered for redaction, with the judge's other secrets: ``register_judge_secrets``).

    Raises AuthError before any call is made when the variable is named but unset.
    """
    register_judge_secrets(judge)
    if judge.api_key_env is None:
        return None
    value = os.environ.get(judge.api_key_env)
    if not value:
        raise AuthError(
            f"judge '{judge_name}': environment variable {judge.api_key_env} is not set "
            f"(set it, or set `api_key_env: null` for a server that needs no key)"
        )
    return value
