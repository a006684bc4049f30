"""OpenAI Chat Completions through the official SDK; with ``base_url`` the same adapter serves
vLLM, Ollama, llama.cpp server and LM Studio (``openai_compatible`` sends the same wire format
through a leaner client, for runs where the client's CPU matters).

The body and the reading of the reply are ``providers/_chat_format.py``'s, shared with
``openai_compatible``. SDK retries are off; ``jurybox.pipeline`` owns the retry policy.
"""

from __future__ import annotations

from typing import Any

from jurybox.config import JudgeConfig
from jurybox.errors import ProviderError, TransientError
from jurybox.providers._chat_format import chat_body, completion_from_chat
from jurybox.providers._common import (
    Stopwatch,
    classify_common,
    classify_status,
    import_dependency,
    parse_retry_after,
    resolve_api_key,
    scrub_secrets,
)
from jurybox.records import Completion, CompletionRequest

# The SDK insists on a key even for servers that ignore it (Ollama, vLLM without --api-key).
PLACEHOLDER_KEY = "not-needed"
# What ``chat.completions.create`` passes as ``options``: bearer auth.
_REQUEST_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}


class OpenAIProvider:
    """One judge behind the Chat Completions API."""

    vendor = "openai"
    is_local = False

    def __init__(self, judge_name: str, judge: JudgeConfig) -> None:
        if not judge.model:
            raise ValueError(f"judge '{judge_name}': the openai provider needs a model")
        # Only this module uses the SDK, and only once a judge needs it.
        self._sdk = import_dependency("openai", "openai", "the openai SDK", "pip install openai")
        self._judge_name = judge_name
        self._judge = judge
        self.model = judge.model
        self._client: Any = None  # created on first call, so the key is read then

    def __repr__(self) -> str:
        where = self._judge.base_url or "api.openai.com"
        return f"OpenAIProvider(judge={self._judge_name!r}, model={self.model!r}, at={where!r})"

    def _get_client(self) -> Any:
        if self._client is None:
            key = resolve_api_key(self._judge, self._judge_name, vendor_env="OPENAI_API_KEY")
            self._client = self._sdk.AsyncOpenAI(
                api_key=key or PLACEHOLDER_KEY,
                base_url=self._judge.base_url,
                max_retries=0,
                timeout=self._judge.timeout_s,
            )
        return self._client

    async def complete(self, request: CompletionRequest) -> Completion:
        client = self._get_client()
        watch = Stopwatch()
        body = self.request_params(request)
        # ``chat.completions.create`` would walk the (multi-KB) messages through the SDK's
        # TypedDict transform and build pydantic models of the reply (~1.5 ms CPU a call) only
        # to carry the same plain JSON; ``post`` with ``cast_to=object`` sends ``body`` as is and
        # hands back the parsed JSON, with the same auth, timeout and (no) retries.
        data = await client.post(
            "/chat/completions", body=body, cast_to=object, options=_REQUEST_OPTIONS
        )
        return completion_from_chat(
            data,
            default_model=self.model,
            latency_ms=watch.elapsed_ms,
            native="response_format" in body,
        )

    def request_params(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body of the call (``extra_body`` merged in)."""
        return chat_body(self._judge, self.model, request)

    def classify_error(self, exc: BaseException) -> ProviderError:
        sdk = self._sdk
        secrets = self._secrets()
        if isinstance(exc, sdk.APIStatusError):
            message = scrub_secrets(f"HTTP {exc.status_code}: {exc.message}", secrets)
            headers = exc.response.headers
            return classify_status(exc.status_code, message, retry_after=parse_retry_after(headers))
        if isinstance(exc, sdk.APITimeoutError):
            return TransientError(f"timed out after {self._judge.timeout_s:g} s")
        if isinstance(exc, sdk.APIConnectionError):
            return TransientError(scrub_secrets(f"connection failed: {exc.message}", secrets))
        if isinstance(exc, sdk.APIResponseValidationError):
            return TransientError(scrub_secrets(f"malformed response body: {exc}", secrets))
        known = classify_common(exc, secrets)
        if known is not None:
            return known
        # Unknown failures are not retried: repeating a bug only burns budget.
        return ProviderError(scrub_secrets(f"unexpected {type(exc).__name__}: {exc}", secrets))

    def _secrets(self) -> list[str]:
        key = getattr(self._client, "api_key", None)
        return [key] if isinstance(key, str) and key != PLACEHOLDER_KEY else []

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


def create(judge_name: str, judge: JudgeConfig) -> OpenAIProvider:
    """Build the OpenAI (or OpenAI-compatible server) judge."""
    return OpenAIProvider(judge_name, judge)
