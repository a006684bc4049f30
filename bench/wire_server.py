"""A local OpenAI-compatible Chat Completions server for benchmarks and chaos tests.

It listens on 127.0.0.1 only and answers ``POST .../chat/completions`` with a valid judge answer:
a JSON object drawn from the request's ``response_format`` JSON Schema (enums, bounded integers,
required properties, fixed-length arrays, rankings as permutations), or a pairwise verdict when
the request has no schema. The answer is a pure function of the request body and the seed, so a
run repeated (or killed and resumed) against it gets the same verdicts.

Knobs (``WireConfig``): a fixed latency (plus jitter), a requests-per-window limit answered with
429 and ``Retry-After`` / ``retry-after-ms`` beyond it (``retry_after: false`` leaves them out),
optionally announced on every response in OpenAI's rate-limit headers (``rate_headers``:
``x-ratelimit-limit-requests`` = rpm, ``-remaining-requests`` = what is left in the current
window (or, with ``remaining_per_minute``, that scaled to a minute), ``-reset-requests`` = until
the window is empty again, as "1s" / "20ms"), and seeded
fault rates: random 429s,
5xx, timeouts (the server holds the request ``hang_s`` and then drops the connection), malformed
bodies (truncated JSON, HTML, an envelope without ``choices``) and unparsable judge text (a valid
envelope whose content is not JSON: the pipeline must record it as ``unparsed``). Whether a
request gets a fault depends on (seed, body, how many times that body was seen), not on arrival
order, so a faulty run replays exactly.

Built on asyncio streams (HTTP/1.1 with keep-alive): a few hundred requests per second on one
core, which a threaded ``http.server`` does not reach on 2 cores. Three ways to run it:

* ``WireServer(config)``: ``await server.start()`` inside a running loop.
* ``ThreadedWireServer(config)``: a context manager that runs it on a daemon thread (tests).
* ``spawn_server(config)``: a context manager that starts ``python wire_server.py`` in its own
  process (benchmarks, so that the server's CPU is not counted as the client's). The child exits
  by itself when its stdin closes (its parent died) or after ``--max-lifetime-s``.

``GET /stats`` returns the counters (requests, ok, each fault, rate-limited, CPU seconds, the
Unix times of the first and last chat request) and ``POST /reset`` zeroes them and the rate
window.

Scripted pairwise judges (``pick``): ``"first"`` always prefers the response shown first (a judge
with pure position bias); ``"marked"`` prefers the response whose text holds ``mark``, right with
probability ``pick_accuracy`` per request (seeded by the body, so a resumed run gets the same
answers), and on a prompt holding ``unsure_mark`` prefers the first shown with ``low``
confidence (its two orders then disagree: a judge unsure of that item).

A rule judge (``rule_word``): a pairwise verdict that is right only when the prompt holds the
word: it then picks the response (fenced as Response A or B) that holds ``rule_marker``, and
otherwise the first response shown, as a judge that was not told what "better" means might.
``record_bodies`` keeps every chat request's body, byte for byte, in ``bodies`` (tests compare
what a client sent with what it says it sent).

Requests without a ``response_format`` schema whose prompt is another tool's default grading
prompt get the format that prompt asks for: Inspect AI's ``model_graded_qa`` ("GRADE: C" / "GRADE:
I") and promptfoo's ``llm-rubric`` (``{"reason", "pass", "score"}``); see ``_free_text_grade``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

HOST = "127.0.0.1"
FAULTS = ("rate_429", "rate_5xx", "rate_timeout", "rate_malformed", "rate_unparsable")
_REASONS = {
    200: "OK",
    404: "Not Found",
    400: "Bad Request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}
_MAX_BODY = 16 * 1024 * 1024
_READY = "WIRE_SERVER_URL "


@dataclass(frozen=True)
class WireConfig:
    """Behaviour of the server. Rates are probabilities per request (their sum must be <= 1)."""

    latency_s: float = 0.0
    latency_jitter_s: float = 0.0  # uniform extra latency in [0, jitter], seeded per request
    rpm: float | None = None  # requests admitted per minute; None: unlimited
    rate_window_s: float = 60.0  # the limit is rpm * window / 60 in any window of this length
    rate_429: float = 0.0
    rate_5xx: float = 0.0
    rate_timeout: float = 0.0
    rate_malformed: float = 0.0
    rate_unparsable: float = 0.0
    hang_s: float = 5.0  # a "timeout" holds the request this long, then drops the connection
    retry_after_s: float = 0.2  # Retry-After of the random 429s
    rate_headers: bool = False  # send x-ratelimit-* headers (OpenAI style) on every response
    retry_after: bool = True  # the rate limit's 429s say when to come back
    # x-ratelimit-remaining-requests in the limit's units (per minute: what is left in the window
    # x 60 / window) rather than as requests left in the window. With a window shorter than a
    # minute the latter is a tiny share of x-ratelimit-limit-requests, which a client that
    # throttles on remaining / limit (promptfoo) reads as a budget nearly spent.
    remaining_per_minute: bool = False
    seed: int = 0
    model: str = "wire-judge"
    pick: str | None = None  # scripted pairwise verdicts: "first" or "marked" (module docstring)
    mark: str = "[GOOD]"
    pick_accuracy: float = 1.0
    unsure_mark: str | None = None
    rule_word: str | None = None  # a rule judge: right only when its prompt holds this word
    rule_marker: str = "[checked]"  # what the right response holds, for the rule judge
    record_bodies: bool = False  # keep each chat request's raw body in ``WireServer.bodies``

    def __post_init__(self) -> None:
        rates = [getattr(self, name) for name in FAULTS]
        if any(rate < 0 for rate in rates) or sum(rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be >= 0 and sum to <= 1, got {rates}")
        if self.rpm is not None and self.rpm <= 0:
            raise ValueError(f"rpm must be positive, got {self.rpm}")
        if self.rate_window_s <= 0 or self.latency_s < 0 or self.hang_s < 0:
            raise ValueError("rate_window_s must be > 0; latency_s and hang_s >= 0")
        if self.pick not in (None, "first", "marked") or not 0 <= self.pick_accuracy <= 1:
            raise ValueError("pick must be None, 'first' or 'marked'; pick_accuracy in [0, 1]")

    @property
    def window_limit(self) -> int | None:
        """Requests admitted in any ``rate_window_s`` window."""
        if self.rpm is None:
            return None
        return max(1, math.floor(self.rpm * self.rate_window_s / 60.0))


def _unit_float(*parts: object) -> float:
    """A deterministic float in [0, 1) from ``parts`` (no RNG state shared between requests)."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


def _kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        return "object"
    return str(kind) if kind is not None else "string"


class SchemaAnswer:
    """A JSON value valid under a (small) JSON Schema, drawn from a seeded RNG."""

    def __init__(self, root: Mapping[str, Any], rng: random.Random) -> None:
        self.root = root
        self.rng = rng

    def value(self, schema: Mapping[str, Any], index: int = 0) -> Any:
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(list(schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.value(schema[key][0], index)
        builders: dict[str, Callable[[Mapping[str, Any], int], Any]] = {
            "object": self._object,
            "array": self._array,
            "integer": self._number,
            "number": self._number,
            "boolean": lambda _schema, _index: self.rng.random() < 0.5,
            "null": lambda _schema, _index: None,
        }
        build = builders.get(_kind(schema))
        return build(schema, index) if build is not None else "Judged by the local wire server."

    def _number(self, schema: Mapping[str, Any], index: int) -> float | int:
        low = schema.get("minimum", 0)
        high = schema.get("maximum", low + 10)
        if _kind(schema) == "integer":
            return self.rng.randint(math.ceil(low), math.floor(high))
        return round(self.rng.uniform(low, high), 3)

    def _resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        target: Any = self.root
        for part in ref[2:].split("/"):
            target = target[part]
        return self._resolve(target)

    def _object(self, schema: Mapping[str, Any], index: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties", {})
        out = {}
        for name, sub in properties.items():
            # Batch answers number their examples 1..k in order.
            if name == "example" and self._resolve(sub).get("type") == "integer":
                out[name] = index + 1
            else:
                out[name] = self.value(sub, index)
        return out

    def _array(self, schema: Mapping[str, Any], index: int) -> list[Any]:
        items = self._resolve(schema.get("items", {}))
        low = int(schema.get("minItems", 1))
        high = int(schema.get("maxItems", low))
        choices = items.get("enum")
        if choices is not None and low == high == len(choices):
            ranking = list(choices)  # a ranking: a permutation of the letters
            self.rng.shuffle(ranking)
            return ranking
        return [self.value(items, i) for i in range(low)]


def _prompt_text(body: Mapping[str, Any]) -> str:
    """The text of the request's messages (string contents and text parts), joined."""
    texts = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(texts)


def _free_text_grade(body: Mapping[str, Any], rng: random.Random) -> str | None:
    """The answer to another tool's default grading prompt, in the format it asks for: Inspect
    AI's ``model_graded_qa`` ("... GRADE: C" or "GRADE: I") and promptfoo's ``llm-rubric`` (a
    JSON object with ``reason``, ``pass`` and ``score``). ``None`` for any other prompt."""
    text = _prompt_text(body)
    passed = rng.random() < 0.5
    if "GRADE: $LETTER" in text or "GRADE: C" in text:
        return f"The submission was compared with the criterion.\nGRADE: {'C' if passed else 'I'}"
    if '"pass"' in text and '"score"' in text and '"reason"' in text:
        reason = "Meets the rubric." if passed else "Does not meet the rubric."
        return json.dumps({"reason": reason, "pass": passed, "score": 1.0 if passed else 0.0})
    return None


def _shown_response(text: str, letter: str) -> str:
    """The text fenced as Response <letter> in a prompt ("" when there is none)."""
    start = text.find(f'label="Response {letter}">')
    end = text.find("</untrusted_response>", start)
    return text[start:end] if start != -1 and end != -1 else ""


def rule_verdict(body: Mapping[str, Any], word: str, marker: str) -> str:
    """The rule judge's verdict: the response holding ``marker`` when the prompt holds
    ``word``, else "A" (the first response shown)."""
    text = _prompt_text(body)
    if word not in text:
        return "A"
    return "A" if marker in _shown_response(text, "A") else "B"


def judge_answer(body: Mapping[str, Any], digest: str, seed: int) -> str:
    """The judge's answer text for a request body (deterministic in body and seed)."""
    rng = random.Random(f"{seed}:{digest}")
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    if not isinstance(schema, dict):
        graded = _free_text_grade(body, rng)
        if graded is not None:
            return graded
        schema = {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string"},
                "verdict": {"enum": ["A", "B", "TIE"]},
                "confidence": {"enum": ["high", "medium", "low"]},
            },
        }
    return json.dumps(SchemaAnswer(schema, rng).value(schema))


_SHOWN = re.compile(
    r'<untrusted_response label="Response ([AB])">\n(.*?)\n</untrusted_response>', re.S
)


def scripted_answer(body: Mapping[str, Any], digest: str, config: WireConfig) -> str | None:
    """The scripted pairwise verdict (``config.pick``) for a request showing Responses A and B;
    ``None`` when no script applies (not scripted, or not a pairwise prompt)."""
    text = _prompt_text(body)
    shown = dict(_SHOWN.findall(text))
    if config.pick is None or set(shown) != {"A", "B"}:
        return None
    verdict, confidence = "A", "high"
    if config.pick == "marked":
        if config.unsure_mark is not None and config.unsure_mark in text:
            confidence = "low"
        else:
            good = "A" if config.mark in shown["A"] else "B"
            right = _unit_float("pick", config.seed, digest) < config.pick_accuracy
            verdict = good if right else {"A": "B", "B": "A"}[good]
    return json.dumps(
        {"reasoning": f"Scripted ({config.pick}).", "verdict": verdict, "confidence": confidence}
    )


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str] = dataclasses.field(default_factory=dict)
    content_type: str = "application/json"


def _json_response(status: int, data: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json.dumps(data).encode(), headers or {})


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> Response:
    return _json_response(status, {"error": {"message": message, "type": kind}}, headers)


class WireServer:
    """The server proper; must be started and used from one asyncio loop."""

    def __init__(self, config: WireConfig | None = None) -> None:
        self.config = config or WireConfig()
        self.stats: dict[str, float] = {}
        self._seen: dict[str, int] = {}
        self._admitted: deque[float] = deque()
        self.bodies: list[bytes] = []  # every chat request's body, with ``record_bodies``
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._cpu0 = time.process_time()
        self.port = 0
        self.reset()

    @property
    def url(self) -> str:
        """The base URL to give an OpenAI client (``.../v1``)."""
        return f"http://{HOST}:{self.port}/v1"

    def reset(self) -> None:
        self.stats = dict.fromkeys(
            ("requests", "ok", "rate_limited", *FAULTS, "connections", "bad_requests"), 0
        )
        # Unix times of the first and the last chat request's arrival (0: none yet), so that a
        # benchmark can tell how long a client took from its spawn to its first request.
        self.stats.update(first_request_unix=0.0, last_request_unix=0.0)
        self._seen.clear()
        self._admitted.clear()
        self.bodies.clear()
        self._cpu0 = time.process_time()

    def snapshot(self) -> dict[str, float]:
        """Counters plus the server's CPU seconds since the last reset."""
        return {**self.stats, "cpu_s": time.process_time() - self._cpu0}

    async def start(self, port: int = 0) -> None:
        self._server = await asyncio.start_server(
            self._connection, HOST, port, backlog=1024, limit=_MAX_BODY
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and end every open connection (held "timeouts" included)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stats["connections"] += 1
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            # Only ``close`` cancels these; ending normally keeps 3.11's stream callback quiet.
            pass
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Serve one request; False closes the connection."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        arrived = time.monotonic()  # the latency counts from here, processing included
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) < 2:
            return False
        method, path = parts[0], parts[1].split("?", 1)[0]
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
        response = await self._dispatch(method, path, body, arrived)
        if response is None:  # a simulated timeout: hold, then drop the connection
            return False
        keep = headers.get("connection", "").lower() != "close"
        writer.write(_encode(response, keep))
        await writer.drain()
        return keep

    async def _dispatch(
        self, method: str, path: str, body: bytes, arrived: float
    ) -> Response | None:
        if method == "GET" and path in ("/stats", "/v1/stats"):
            return _json_response(200, self.snapshot())
        if method == "POST" and path in ("/reset", "/v1/reset"):
            self.reset()
            return _json_response(200, {"reset": True})
        if method == "GET" and path in ("/health", "/v1/models"):
            return _json_response(200, {"object": "list", "data": [{"id": self.config.model}]})
        if method == "POST" and path.endswith("/chat/completions"):
            return await self._chat(body, arrived)
        return _error(404, f"no route for {method} {path}", "not_found")

    def _rate_limited(self) -> tuple[Response | None, dict[str, str]]:
        """The 429 when the window is full (else ``None``), and the rate-limit headers."""
        limit = self.config.window_limit
        if limit is None:
            return None, {}
        now = time.monotonic()
        window = self.config.rate_window_s
        while self._admitted and self._admitted[0] + window <= now:
            self._admitted.popleft()
        admitted = len(self._admitted) < limit
        if admitted:
            self._admitted.append(now)
        headers = self._rate_headers(limit, now) if self.config.rate_headers else {}
        if admitted:
            return None, headers
        wait = self._admitted[0] + window - now
        self.stats["rate_limited"] += 1
        if self.config.retry_after:
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
            headers["retry-after"] = str(max(1, math.ceil(wait)))
        message = "rate limit reached (requests per minute)"
        return _error(429, message, "rate_limit_exceeded", headers), headers

    def _rate_headers(self, limit: int, now: float) -> dict[str, str]:
        """OpenAI's request headers: the limit per minute, what is left in the window now, and
        how long until the window is empty again (its "initial state")."""
        reset = self._admitted[-1] + self.config.rate_window_s - now if self._admitted else 0.0
        remaining = max(0, limit - len(self._admitted))
        if self.config.remaining_per_minute:
            remaining = math.floor(remaining * 60.0 / self.config.rate_window_s)
        return {
            "x-ratelimit-limit-requests": str(round(self.config.rpm or 0)),
            "x-ratelimit-remaining-requests": str(remaining),
            "x-ratelimit-reset-requests": go_duration(reset),
        }

    def _fault(self, digest: str) -> str | None:
        seen = self._seen.get(digest, 0)
        self._seen[digest] = seen + 1
        draw = _unit_float(self.config.seed, digest, seen)
        for name in FAULTS:
            rate = getattr(self.config, name)
            if draw < rate:
                return name
            draw -= rate
        return None

    async def _chat(self, raw: bytes, arrived: float) -> Response | None:
        self.stats["requests"] += 1
        if self.config.record_bodies:
            self.bodies.append(raw)
        now = time.time()
        self.stats["first_request_unix"] = self.stats["first_request_unix"] or now
        self.stats["last_request_unix"] = now
        try:
            body = json.loads(raw)
        except ValueError:
            self.stats["bad_requests"] += 1
            return _error(400, "request body is not JSON", "invalid_request_error")
        limited, rate_headers = self._rate_limited()
        if limited is not None:
            return limited
        digest = hashlib.sha256(raw).hexdigest()
        fault = self._fault(digest)
        if fault is not None:
            self.stats[fault] += 1
        if fault == "rate_429":
            wait_ms = max(1, round(self.config.retry_after_s * 1000))
            return _error(
                429, "simulated rate limit", "rate_limit_exceeded", {"retry-after-ms": str(wait_ms)}
            )
        if fault == "rate_timeout":
            await asyncio.sleep(self.config.hang_s)
            return None
        response = self._answer(fault, body, raw, digest)
        response.headers.update(rate_headers)
        # Answer first, then wait out the rest of the latency: the server's own CPU must not
        # add to the latency the benchmark configured (it would, in bursts of 64 requests).
        await asyncio.sleep(max(0.0, arrived + self._latency(digest) - time.monotonic()))
        return response

    def _answer(
        self, fault: str | None, body: Mapping[str, Any], raw: bytes, digest: str
    ) -> Response:
        """The answer, or the (non-timeout) fault drawn for this request."""
        if fault == "rate_5xx":
            status = (500, 502, 503)[self._seen[digest] % 3]
            return _error(status, "simulated server error", "server_error")
        if fault == "rate_malformed":
            return _malformed(self._seen[digest])
        content = scripted_answer(body, digest, self.config) or judge_answer(
            body, digest, self.config.seed
        )
        if self.config.rule_word is not None:
            answer = json.loads(content)
            answer["verdict"] = rule_verdict(body, self.config.rule_word, self.config.rule_marker)
            content = json.dumps(answer)
        if fault == "rate_unparsable":
            content = "I think both responses have merit; " + content[: len(content) // 2]
        else:
            self.stats["ok"] += 1
        return _json_response(200, self._completion(body, raw, content, digest))

    def _latency(self, digest: str) -> float:
        jitter = self.config.latency_jitter_s
        extra = jitter * _unit_float("latency", self.config.seed, digest) if jitter else 0.0
        return self.config.latency_s + extra

    def _completion(
        self, body: Mapping[str, Any], raw: bytes, content: str, digest: str
    ) -> dict[str, Any]:
        prompt_tokens = max(1, len(raw) // 4)
        completion_tokens = max(1, len(content) // 4)
        return {
            "id": f"chatcmpl-{digest[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.config.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def go_duration(seconds: float) -> str:
    """A duration as OpenAI writes it: "6m0s", "1s", "20ms"."""
    if seconds < 1.0:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60.0)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    return f"{int(minutes)}m{text}" if minutes else text


def _malformed(variant: int) -> Response:
    """Three kinds of broken 200 answers a proxy or a buggy server sends."""
    kind = variant % 3
    if kind == 0:
        return Response(200, b'{"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"ind')
    if kind == 1:
        return Response(200, b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
    return _json_response(200, {"id": "chatcmpl-x", "object": "chat.completion", "model": "x"})


def _encode(response: Response, keep: bool) -> bytes:
    head = [
        f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'Status')}",
        f"Content-Type: {response.content_type}",
        f"Content-Length: {len(response.body)}",
        f"Connection: {'keep-alive' if keep else 'close'}",
    ]
    head.extend(f"{name}: {value}" for name, value in response.headers.items())
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body


class ThreadedWireServer:
    """Runs a ``WireServer`` on a daemon thread with its own loop (for tests)."""

    def __init__(self, config: WireConfig | None = None, port: int = 0) -> None:
        self.server = WireServer(config)
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> ThreadedWireServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(self._port), self._loop).result(10)
        return self

    def stats(self) -> dict[str, float]:
        snapshot: dict[str, float] = self._call(self.server.snapshot)
        return snapshot

    def bodies(self) -> list[bytes]:
        """The chat request bodies received so far (``record_bodies``), in arrival order."""
        received: list[bytes] = self._call(lambda: list(self.server.bodies))
        return received

    def reset(self) -> None:
        self._call(self.server.reset)

    def _call(self, func: Any) -> Any:
        async def run() -> Any:
            return func()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(10)

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self.server.close(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> ThreadedWireServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class SpawnedServer:
    """Handle on a server running in a child process."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url  # .../v1
        self.root = url.removesuffix("/v1")

    def stats(self) -> dict[str, float]:
        with urllib.request.urlopen(f"{self.root}/stats", timeout=10) as reply:
            data: dict[str, float] = json.loads(reply.read())
        return data

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.root}/reset", data=b"{}", method="POST")
        with urllib.request.urlopen(request, timeout=10) as reply:
            reply.read()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        if self.process.stdin is not None:
            self.process.stdin.close()
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextlib.contextmanager
def spawn_server(
    config: WireConfig | None = None,
    *,
    max_lifetime_s: float = 3600.0,
    python: str = sys.executable,
) -> Iterator[SpawnedServer]:
    """Start the server in its own process; yields a ``SpawnedServer`` (url, stats, reset)."""
    config = config or WireConfig()
    args = [
        python,
        os.path.abspath(__file__),
        "--config-json",
        json.dumps(dataclasses.asdict(config)),
        "--max-lifetime-s",
        str(max_lifetime_s),
    ]
    process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    handle: SpawnedServer | None = None
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith(_READY):
            raise RuntimeError(f"wire server failed to start: {line!r}")
        handle = SpawnedServer(process, line[len(_READY) :].strip())
        yield handle
    finally:
        if handle is not None:
            handle.close()
        elif process.poll() is None:
            process.kill()
            process.wait(5)


async def _serve_forever(config: WireConfig, port: int, max_lifetime_s: float) -> None:
    server = WireServer(config)
    await server.start(port)
    print(f"{_READY}{server.url}", flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def watch_stdin() -> None:  # the parent died or closed our stdin: stop by ourselves
        with contextlib.suppress(Exception):
            sys.stdin.read()
        loop.call_soon_threadsafe(stop.set)

    if not sys.stdin.isatty():
        threading.Thread(target=watch_stdin, daemon=True).start()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), max_lifetime_s)
    await server.close()


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--config-json", help="WireConfig fields as a JSON object.")
    parser.add_argument("--latency-s", type=float)
    parser.add_argument("--rpm", type=float)
    parser.add_argument("--rate-window-s", type=float)
    parser.add_argument("--seed", type=int)
    for name in FAULTS:
        parser.add_argument(f"--{name.replace('_', '-')}", type=float, dest=name)
    parser.add_argument("--max-lifetime-s", type=float, default=3600.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    fields = json.loads(args.config_json) if args.config_json else {}
    for name in ("latency_s", "rpm", "rate_window_s", "seed", *FAULTS):
        if getattr(args, name) is not None:
            fields[name] = getattr(args, name)
    asyncio.run(_serve_forever(WireConfig(**fields), args.port, args.max_lifetime_s))


if __name__ == "__main__":
    main()
