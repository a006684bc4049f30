"""OpenAI Chat Completions through the official SDK; with ``base_url`` the same adapter serves
vLLM, Ollama, llama.cpp server and LM Studio (``openai_compatible`` sends the same wire format
through a leaner client, for runs where the client's CPU matters).

The body and the reading of the reply are ``providers/_chat_format.py``'s, shared with
``openai_compatible``. SDK retries are off; ``jurybox.pipeline`` owns the retry policy. Each
response's ``x-ratelimit-*`` headers (answers and 429s) go to the pipeline's adaptive limiter.
"""

from __future__ import annotations

from typing import Any

from jurybox.config import JudgeConfig
from jurybox.errors import ProviderError, TransientError
from jurybox.providers._chat_format import chat_body, completion_from_chat
from jurybox.providers._common import (
    Dependency,
    Stopwatch,
    classify_vendor_error,
    connect_error,
    resolve_api_key,
    scrub_secrets,
)
from jurybox.providers._rate_headers import rate_limits_from_headers, status_error
from jurybox.records import Completion, CompletionRequest

_SDK = Dependency("openai", "the openai SDK", ("pip install openai",))
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the SDK's own default (named in hints)
# The SDK insists on a key even for servers that ignore it (Ollama, vLLM without --api-key).
PLACEHOLDER_KEY = "not-needed"
# What ``chat.completions.create`` passes as ``options`` (bearer auth), plus the header that
# ``with_raw_response`` sets: the SDK then returns the response, headers and all, unparsed.
_REQUEST_OPTIONS: dict[str, Any] = {
    "security": {"bearer_auth": True},
    "headers": {"X-Stainless-Raw-Response": "raw"},
}


def create(judge_name: str, judge: JudgeConfig) -> OpenAIProvider:
    """Build the OpenAI (or OpenAI-compatible server) judge. Raises MissingDependencyError or
    AuthError before any call."""
    sdk = _SDK.load("openai")
    key = resolve_api_key(judge, judge_name, vendor_env=DEFAULT_API_KEY_ENV)
    return OpenAIProvider(judge_name, judge, sdk, key=key)


class OpenAIProvider:
    """One judge behind the Chat Completions API."""

    vendor = "openai"
    is_local = False

    def __init__(self, judge_name: str, judge: JudgeConfig, sdk: Any, *, key: str | None) -> None:
        if not judge.model:
            raise ValueError(f"judge '{judge_name}': the openai provider needs a model")
        self._sdk = sdk
        self._judge_name = judge_name
        self._judge = judge
        self.model = judge.model
        self._key = key
        # Kept only to scrub error texts; never printed (see __repr__).
        self._secrets = (key,) if key else ()
        self._client: Any = None  # built by ``_connect`` on the first call; aclose drops it

    def __repr__(self) -> str:
        where = self._judge.base_url or "api.openai.com"
        return f"OpenAIProvider(judge={self._judge_name!r}, model={self.model!r}, at={where!r})"

    def _connect(self) -> Any:
        """The SDK client: the one place it is configured (no SDK retries, explicit key)."""
        if self._client is None:
            self._client = self._sdk.AsyncOpenAI(
                api_key=self._key or PLACEHOLDER_KEY,
                base_url=self._judge.base_url,
                max_retries=0,
                timeout=self._judge.timeout_s,
            )
        return self._client

    async def complete(self, request: CompletionRequest) -> Completion:
        client = self._connect()
        watch = Stopwatch()
        body = self.request_params(request)
        # ``chat.completions.create`` would walk the (multi-KB) messages through the SDK's
        # TypedDict transform and build pydantic models of the reply (~1.5 ms CPU a call) only
        # to carry the same plain JSON; ``post`` with ``cast_to=object`` sends ``body`` as is and
        # hands back the parsed JSON, with the same auth, timeout and (no) retries.
        raw = await client.post(
            "/chat/completions", body=body, cast_to=object, options=_REQUEST_OPTIONS
        )
        data = await raw.parse()
        return completion_from_chat(
            data,
            default_model=self.model,
            latency_ms=watch.elapsed_ms,
            native="response_format" in body,
            rate_limits=rate_limits_from_headers(raw.headers),
        )

    def request_params(self, request: CompletionRequest) -> dict[str, Any]:
        """The JSON body of the call (``extra_body`` merged in)."""
        return chat_body(self._judge, self.model, request)

    def classify_error(self, exc: BaseException) -> ProviderError:
        return classify_vendor_error(exc, "openai", self._classify_sdk_error, self._secrets)

    def _classify_sdk_error(self, exc: BaseException) -> ProviderError | None:
        sdk, secrets = self._sdk, self._secrets
        if isinstance(exc, sdk.APIStatusError):
            message = scrub_secrets(f"HTTP {exc.status_code}: {exc.message}", secrets)
            return status_error(exc.status_code, message, exc.response.headers)
        if isinstance(exc, sdk.APITimeoutError):
            return TransientError(f"timed out after {self._judge.timeout_s:g} s", kind="timeout")
        if isinstance(exc, sdk.APIConnectionError):
            detail = scrub_secrets(exc.message, secrets)
            return connect_error(exc, detail, self._judge.base_url or DEFAULT_BASE_URL)
        if isinstance(exc, sdk.APIResponseValidationError):
            message = scrub_secrets(f"malformed response body: {exc}", secrets)
            return TransientError(message, kind="bad response")
        return None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
