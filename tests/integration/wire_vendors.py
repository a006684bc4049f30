"""Local wire servers for whole-pipeline runs: one per judge adapter in ``VENDORS``.

The three vendor adapters (Anthropic, OpenAI, Gemini, through their SDKs) and ``openai_compatible``
(the lean aiohttp client for self-hosted servers) each get their own server. Each speaks its
adapter's wire format on 127.0.0.1 (``openai_compatible`` gets a second OpenAI Chat Completions
server, with its own key), answers every judgment with valid native structured output (OpenAI
``message.content`` JSON, an Anthropic ``tool_use`` block, Gemini
``candidates[0].content.parts[0].text`` JSON) and can be told to fail:

* at random, ``fault_rate`` of requests answer 429 (tiny Retry-After) or 5xx. The draw hashes
  (seed, vendor, request body, how often that body was seen), so it does not depend on the order
  in which concurrent requests arrive;
* always, for a request whose body contains ``force_marker(status)``: ``FORCE-401`` and the like
  in an item's question. Forced errors echo the request headers back in the error body (and the
  bare key), as a misconfigured proxy would: the adapters must scrub them.

The server always votes for the response that contains ``WINNER_TEXT`` (the treatment arm in the
datasets built here), so a test can check that positions were mapped back to arms.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
import socket
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

# wire_anthropic / wire_google live in tests/providers, put on sys.path above.
import wire_anthropic as aw
import wire_google as gw

# One judge per adapter, by provider name (what records call ``judge_vendor``).
VENDORS = ("anthropic", "openai", "google", "openai_compatible")
# The wire format each adapter speaks (and its server answers in).
WIRE = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "google",
    "openai_compatible": "openai",
}
# Recognisable fake keys, one per judge so that a leak names its adapter: any file, log line or
# message that contains one is a leak. None is a substring of another. The self-hosted one is
# not key-shaped (vLLM's --api-key takes any string): where no "Bearer " precedes it, only
# scrubbing by the known key removes it, not scrub_secrets' sk-/AIza patterns.
KEYS = {
    "anthropic": "sk-ant-LEAKCHECK-7f3a",
    "openai": "sk-LEAKCHECK-9b2c",
    "google": "AIza-LEAKCHECK-51d0",
    "openai_compatible": "vllm-LEAKCHECK-c41e",
}
KEY_ENVS = {
    "anthropic": "JURYBOX_IT_ANTHROPIC_KEY",
    "openai": "JURYBOX_IT_OPENAI_KEY",
    "google": "JURYBOX_IT_GEMINI_KEY",
    "openai_compatible": "JURYBOX_IT_COMPAT_KEY",
}
MODELS = {
    "anthropic": "claude-test-1",
    "openai": "gpt-test-1",
    "google": "gemini-test",
    "openai_compatible": "compat-test-1",
}
JUDGE_NAMES = {
    "anthropic": "claude",
    "openai": "gpt",
    "google": "gemini",
    "openai_compatible": "selfhosted",
}
# The header each adapter carries the key in, and the value it must hold (anthropic 2.x sends
# the key as a bearer token, not in x-api-key; see tests/providers/test_anthropic.py).
KEY_HEADERS = {
    "anthropic": "authorization",
    "openai": "authorization",
    "google": "x-goog-api-key",
    "openai_compatible": "authorization",
}
SECRET_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")
WINNER_TEXT = "treatment answer"
LOSER_TEXT = "control answer"
_FORCE = re.compile(rb"FORCE-(\d{3})")
_PATHS = {
    "anthropic": aw.MESSAGES_PATH,
    "openai": "/v1/chat/completions",
    "google": gw.generate_path(MODELS["google"]),
    "openai_compatible": "/v1/chat/completions",
}


def force_marker(status: int) -> str:
    """Text that, anywhere in a request, makes every server answer ``status`` (headers echoed)."""
    return f"FORCE-{status}"


def expected_key_header(vendor: str) -> str:
    key = KEYS[vendor]
    return f"Bearer {key}" if KEY_HEADERS[vendor] == "authorization" else key


@dataclass
class Seen:
    """One request as the server saw it and what it answered."""

    path: str
    headers: dict[str, str]
    body: bytes
    status: int


@dataclass
class VendorServer:
    """One judge's wire server; thread-safe counters of what it saw and answered."""

    vendor: str
    server: HTTPServer
    fault_rate: float = 0.0
    seed: int = 0
    # Echo every credential seen (headers, decoded Basic tokens, URL-encoded forms) in every
    # answer, a 200's verdict reasoning included, and answer whatever credentials came.
    echo: bool = False
    seen: list[Seen] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _bodies: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.server.expect_request(re.compile(r"^/.*")).respond_with_handler(self.handle)

    # --- what the tests read -------------------------------------------------------------
    @property
    def wire(self) -> str:
        return WIRE[self.vendor]

    @property
    def base_url(self) -> str:
        root = f"http://127.0.0.1:{self.server.port}"
        return f"{root}/v1" if self.wire == "openai" else root

    def statuses(self) -> Counter[int]:
        with self._lock:
            return Counter(seen.status for seen in self.seen)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.seen)

    # --- the handler -----------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        body = request.get_data()
        headers = {name.lower(): value for name, value in request.headers.items()}
        with self._lock:
            digest = hashlib.sha256(body).hexdigest()
            occurrence = self._bodies[digest]
            self._bodies[digest] += 1
        problem = self._check(request.path, headers if not self.echo else None, body)
        if problem is not None:
            response = self._error(400, f"test server: {problem}", headers=None)
            with self._lock:
                self.violations.append(problem)
        else:
            response = self._answer(body, headers, digest, occurrence)
        with self._lock:
            self.seen.append(Seen(request.path, headers, body, response.status_code))
        return response

    def _answer(
        self, body: bytes, headers: dict[str, str], digest: str, occurrence: int
    ) -> Response:
        forced = _FORCE.search(body)
        if forced is not None:
            return self._error(int(forced.group(1)), "forced failure", headers=headers)
        draw = hashlib.sha256(f"{self.seed}|{self.vendor}|{digest}|{occurrence}".encode()).digest()
        if int.from_bytes(draw[:8], "big") / 2**64 < self.fault_rate:
            return self._error(self._fault_status(draw[8]), "injected failure", headers=None)
        verdict = _verdict_for(body)
        if self.echo:
            verdict["reasoning"] += f" I was sent {echo_credentials(headers)}"
        return self._ok(verdict)

    def _fault_status(self, byte: int) -> int:
        overload = 529 if self.vendor == "anthropic" else 503
        return (429, 429, 500, overload)[byte % 4]

    def _check(self, path: str, headers: dict[str, str] | None, body: bytes) -> str | None:
        """What is wrong with a request in this judge's wire format (None when all is right;
        ``headers`` None: any credentials will do)."""
        if path != _PATHS[self.vendor]:
            return f"unexpected path {path}"
        problem = None if headers is None else self._check_headers(headers)
        if problem is not None:
            return problem
        try:
            data = json.loads(body)
        except ValueError:
            return "body is not JSON"
        if not _asks_structured(self.wire, data):
            return "request does not ask for native structured output"
        return None

    def _check_headers(self, headers: dict[str, str]) -> str | None:
        header = KEY_HEADERS[self.vendor]
        if headers.get(header) != expected_key_header(self.vendor):
            return f"{header} header missing or wrong"
        others = [name for name in SECRET_HEADERS if name != header and name in headers]
        if others:
            return f"unexpected credential headers {others}"
        if self.vendor == "openai_compatible" and any(
            name.startswith("x-stainless") for name in headers
        ):
            # The openai SDK's own headers: this request did not come from the aiohttp client.
            return "openai SDK headers on a request to the openai_compatible judge"
        return None

    # --- wire bodies -----------------------------------------------------------------------
    def _ok(self, verdict: dict[str, str]) -> Response:
        text = json.dumps(verdict)
        if self.wire == "anthropic":
            block = aw.tool_use_block("pairwise_verdict", verdict)
            body = aw.message([block], stop_reason="tool_use")
        elif self.wire == "openai":
            body = _openai_completion(text, MODELS[self.vendor])
        else:
            body = gw.response([gw.text_part(text)])
        return _json(body, 200)

    def _error(self, status: int, note: str, *, headers: dict[str, str] | None) -> Response:
        message = note
        if headers is not None:
            message = f"{note}: {_echo(headers)}"
            if self.echo:
                message = f"{note}: {echo_credentials(headers)} {_echo(headers)}"
        extra: dict[str, str] = {}
        if status == 429:
            extra = {"anthropic": {"retry-after": "0"}, "openai": {"retry-after-ms": "10"}}.get(
                self.wire, {}
            )
        if self.wire == "anthropic":
            body: dict[str, Any] = aw.error(_ANTHROPIC_TYPES.get(status, "api_error"), message)
        elif self.wire == "openai":
            body = {"error": {"message": message, "type": "api_error", "param": None, "code": None}}
        else:
            details = [gw.retry_info("0.01s")] if status == 429 else None
            body = gw.error(status, _GOOGLE_STATUS.get(status, "INTERNAL"), message, details)
        if headers is not None:
            body["request_headers"] = headers  # the whole echo, as a debugging proxy would
        return _json(body, status, extra)


_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _echo(headers: dict[str, str]) -> str:
    # Credentials first: the adapters cap messages at a few hundred characters, and an echo cut
    # off before the key would make the scrubbing check pass without testing anything.
    secrets = ", ".join(f"{name}={headers[name]}" for name in SECRET_HEADERS if name in headers)
    # The bare token too, as "invalid API key <token>" errors show it: with no "Bearer" or
    # "api_key=" in front, and for keys without an sk-/AIza shape (openai_compatible's, Gemini's
    # fake one), only scrubbing by the known key removes it.
    tokens = [
        headers[name].removeprefix("Bearer ").strip() for name in SECRET_HEADERS if name in headers
    ]
    return (
        f"credentials [{secrets}] tokens [{' '.join(tokens)}] request headers {json.dumps(headers)}"
    )


def echo_credentials(headers: dict[str, str]) -> str:
    """Every credential in ``headers`` as a careless server or proxy repeats it: each value,
    and for a Basic token the decoded ``user:password``, the password alone and URL-encoded."""
    parts = []
    for name in (*SECRET_HEADERS, "proxy-authorization"):
        value = headers.get(name)
        if value is None:
            continue
        parts.append(f"{name}: {value}")
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "basic":
            login = base64.b64decode(token).decode("utf-8", "replace")
            password = login.partition(":")[2]
            parts.append(f"login {login} password {password} encoded {quote(password, safe='')}")
        else:
            parts.append(f"token {token or value}")
    return "; ".join(parts)


def _asks_structured(wire: str, data: dict[str, Any]) -> bool:
    if wire == "anthropic":
        return bool(data.get("tools")) and (data.get("tool_choice") or {}).get("type") == "tool"
    if wire == "openai":
        return (data.get("response_format") or {}).get("type") == "json_schema"
    generation = data.get("generationConfig") or {}
    return (
        generation.get("responseMimeType") == "application/json"
        and "responseJsonSchema" in generation
    )


def _verdict_for(body: bytes) -> dict[str, str]:
    """Vote for the response holding WINNER_TEXT: "A" when it is shown first."""
    text = body.decode("utf-8")
    winner, loser = text.find(WINNER_TEXT), text.find(LOSER_TEXT)
    if winner < 0 or loser < 0:
        return {"reasoning": "cannot tell them apart", "verdict": "TIE", "confidence": "low"}
    verdict = "A" if winner < loser else "B"
    return {"reasoning": f"Response {verdict} is better.", "verdict": verdict, "confidence": "high"}


def _openai_completion(text: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-TEST",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
    }


def _json(body: Any, status: int, headers: dict[str, str] | None = None) -> Response:
    return Response(json.dumps(body), status=status, headers=headers, mimetype="application/json")


# --- environment and servers -----------------------------------------------------------------
# Variables the vendor SDKs read by themselves: none may point a run elsewhere or add a real key.
SDK_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def set_vendor_env(monkeypatch: Any) -> None:
    """Put the fake keys in the variables the judges name; clear the SDKs' own variables."""
    for name in SDK_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for vendor in VENDORS:
        monkeypatch.setenv(KEY_ENVS[vendor], KEYS[vendor])


@contextmanager
def running_servers() -> Iterator[dict[str, VendorServer]]:
    """One threaded wire server per judge on 127.0.0.1 (no faults until a test sets them)."""
    servers: dict[str, VendorServer] = {}
    try:
        for vendor in VENDORS:
            http = HTTPServer(host="127.0.0.1", port=0, threaded=True)
            http.start()
            servers[vendor] = VendorServer(vendor, http)
        yield servers
    finally:
        for server in servers.values():
            server.server.clear()
            if server.server.is_running():
                server.server.stop()


@contextmanager
def loopback_only(monkeypatch: Any) -> Iterator[None]:
    """Refuse connections beyond 127.0.0.1, for module-scoped runs that precede the suite's
    function-scoped offline guard (tests/conftest.py)."""
    real_connect = socket.socket.connect

    def guarded(sock: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) and address else "127.0.0.1"
        try:
            loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise RuntimeError(f"network access outside loopback attempted: {address!r}")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    yield


# --- datasets, configs and leak scanning ---------------------------------------------------------
def write_pairwise_dataset(path: Path, n: int, markers: dict[int, str] | None = None) -> Path:
    """``n`` control/treatment items; ``markers`` adds text (a force marker) to some questions."""
    markers = markers or {}
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n):
            question = f"Question number {i}: what is {i} plus {i}? {markers.get(i, '')}".strip()
            row = {
                "id": f"q{i:03d}",
                "question": question,
                "responses": {
                    "control": f"{LOSER_TEXT} to question {i}: maybe {i}.",
                    "treatment": f"{WINNER_TEXT} to question {i}: {2 * i}.",
                },
            }
            handle.write(json.dumps(row) + "\n")
    return path


def judges_config(servers: dict[str, VendorServer], **common: Any) -> dict[str, Any]:
    """One judge per adapter, each pointed at its own server and reading its key's variable."""
    return {
        JUDGE_NAMES[vendor]: {
            "provider": vendor,
            "model": MODELS[vendor],
            "api_key_env": KEY_ENVS[vendor],
            "base_url": servers[vendor].base_url,
            "timeout_s": 20.0,
            "price_input_per_mtok": 1.0,
            "price_output_per_mtok": 2.0,
            **common,
        }
        for vendor in VENDORS
    }


def leak_needles() -> dict[str, bytes]:
    """Byte strings whose presence anywhere is a leak: every key and every header value."""
    needles: dict[str, bytes] = {"LEAKCHECK": b"LEAKCHECK"}
    for vendor in VENDORS:
        needles[f"{vendor} key"] = KEYS[vendor].encode()
        needles[f"{vendor} header value"] = expected_key_header(vendor).encode()
        # UTF-16 (SQLite can store text that way) and base64 (basic-auth style) spellings.
        needles[f"{vendor} key utf-16"] = KEYS[vendor].encode("utf-16-le")
        needles[f"{vendor} key base64"] = _b64(KEYS[vendor])
    return needles


def _b64(text: str) -> bytes:
    return base64.b64encode(text.encode())


# Terminal styling (rich colours digits) could split a key in coloured console output.
_ANSI = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]")


def find_leaks(label: str, data: bytes) -> list[str]:
    """``label: needle ... context`` for every needle found in ``data`` (ANSI codes ignored)."""
    found = []
    for variant, text in (("", data), (" (without ANSI codes)", _ANSI.sub(b"", data))):
        for name, needle in leak_needles().items():
            at = text.find(needle)
            if at >= 0:
                context = text[max(0, at - 80) : at + len(needle) + 40]
                found.append(f"{label}{variant}: {name} at byte {at}: {context!r}")
        if found:
            break
    return found


def scan_tree(root: Path) -> tuple[list[str], list[Path]]:
    """Leaks in every file under ``root`` (read as bytes), and the files scanned."""
    leaks: list[str] = []
    files = sorted(path for path in root.rglob("*") if path.is_file())
    for path in files:
        leaks.extend(find_leaks(str(path.relative_to(root)), path.read_bytes()))
    return leaks, files
