"""A loopback server speaking the batch wire formats of OpenAI (files + batches), Anthropic
(message batches + ``results_url`` JSONL) and Gemini (``batchGenerateContent`` with inline
requests, ``batches/{id}``), for tests through the real SDKs.

Answers are deterministic in the request (``bench/wire_server.judge_answer``). The server counts
every request it is sent inside a batch by content, so a test can assert that nothing was
submitted twice, and can be told to misbehave: error a share of requests the first time it sees
them, expire the first batches, fail status reads, or hold a results download until released.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

from wire_server import judge_answer  # noqa: E402  (bench/, shared with the benchmarks)

OPENAI, ANTHROPIC, GOOGLE = "/openai", "/anthropic", "/google"


@dataclass
class Behaviour:
    polls_to_end: int = 1  # status reads that still see the batch running
    error_share: float = 0.0  # share of requests errored (5xx) the first time they are seen
    expire_first: int = 0  # the first N batches expire with every other request unanswered
    status_faults: int = 0  # the first N status reads answer 429 / 503
    hold_results: bool = False  # block results downloads until ``release`` is set
    garbage_share: float = 0.0  # OpenAI answers that are prose instead of the asked-for JSON
    hold_create: bool = False  # create the batch, then hold the answer until ``release``
    create_late_s: float = 0.0  # create the batch, then answer this late (past a client timeout)
    list_faults: int = 0  # the first N list calls (the look-up of a lost batch) answer 500
    release: threading.Event = field(default_factory=threading.Event)


@dataclass
class _Batch:
    vendor: str
    id: str
    label: str
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, request body)
    created: float
    reads: int = 0
    expire: bool = False
    cancelled: bool = False
    model: str = ""
    errored: set[int] = field(default_factory=set)  # indices that fail (5xx) in this batch


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _unit(*parts: object) -> float:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2.0**64


class BatchWire:
    """The three vendors' batch endpoints on one pytest-httpserver."""

    def __init__(self, server: HTTPServer, behaviour: Behaviour | None = None) -> None:
        self.server = server
        self.behaviour = behaviour or Behaviour()
        self.lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, _Batch] = {}
        self.submitted: Counter[str] = Counter()  # request content digest -> times submitted
        self.status_reads = 0
        self.list_calls = 0
        self.requests = 0
        self.sync_calls = 0
        self.held = 0  # results downloads held (``hold_results``)
        server.expect_request(re.compile(".*")).respond_with_handler(self._handle)

    # --- what tests read -----------------------------------------------------------------------
    def url(self, prefix: str) -> str:
        return self.server.url_for(prefix).rstrip("/")

    @property
    def duplicates(self) -> int:
        return sum(count - 1 for count in self.submitted.values() if count > 1)

    @property
    def batch_count(self) -> int:
        return len(self.batches)

    def add_stranger(self, like: str) -> str:
        """Another client's batch on the same key, created now: ``like``'s requests under ids of
        its own (a second run of the same dataset); its id."""
        with self.lock:
            source = self.batches[like]
            batch_id = f"batch_other_{len(self.batches):04d}"
            requests = [(f"other-{cid}", body) for cid, body in source.requests]
            self.batches[batch_id] = _Batch(source.vendor, batch_id, "", requests, time.time())
        return batch_id

    # --- dispatch ------------------------------------------------------------------------------
    def _handle(self, request: Request) -> Response:
        with self.lock:
            self.requests += 1
        path = request.path
        for prefix, handler in (
            (OPENAI, self._openai),
            (ANTHROPIC, self._anthropic),
            (GOOGLE, self._google),
        ):
            if path.startswith(prefix):
                return handler(request, path[len(prefix) :])
        return _json({"error": "no such route"}, 404)

    def _status_fault(self) -> Response | None:
        with self.lock:
            self.status_reads += 1
            if self.status_reads > self.behaviour.status_faults:
                return None
            status = 429 if self.status_reads % 2 else 503
        return _json({"error": {"message": "slow down", "type": "rate_limit_error"}}, status)

    def _listed(self, listing: Callable[[], Any]) -> Response:
        """A list call's answer: ``listing()``, or a 500 while ``list_faults`` last."""
        with self.lock:
            self.list_calls += 1
            failing = self.list_calls <= self.behaviour.list_faults
        if failing:
            return _json({"error": {"message": "list failed", "type": "api_error"}}, 500)
        return _json(listing())

    def _created(self) -> None:
        """After a batch is made: its answer held (``hold_create``) or late (``create_late_s``)."""
        self._hold(self.behaviour.hold_create)  # created, but the answer is lost in a kill
        if self.behaviour.create_late_s:
            time.sleep(self.behaviour.create_late_s)

    def _new_batch(
        self, vendor: str, label: str, requests: list[tuple[str, dict[str, Any]]], model: str = ""
    ) -> _Batch:
        with self.lock:
            number = len(self.batches)
            batch = _Batch(
                vendor,
                f"batch_{number:04d}",
                label,
                requests,
                time.time(),
                expire=number < self.behaviour.expire_first,
                model=model,
            )
            self.batches[batch.id] = batch
            share = self.behaviour.error_share
            for index, (_cid, body) in enumerate(requests):
                digest = _digest(body)
                # Errored only the first time its content is sent: a resubmission succeeds.
                if share > 0 and not self.submitted[digest] and _unit(digest) < share:
                    batch.errored.add(index)
                self.submitted[digest] += 1
        return batch

    def _ended(self, batch: _Batch) -> bool:
        batch.reads += 1
        return batch.cancelled or batch.reads > self.behaviour.polls_to_end

    def _skipped(self, batch: _Batch, index: int) -> bool:
        """Expired or cancelled before this request was processed."""
        return (batch.expire and index % 2 == 1) or batch.cancelled

    def _hold(self, active: bool | None = None) -> None:
        if self.behaviour.hold_results if active is None else active:
            with self.lock:
                self.held += 1
            self.behaviour.release.wait(60)

    # --- OpenAI --------------------------------------------------------------------------------
    def _openai(self, request: Request, path: str) -> Response:
        if path == "/v1/chat/completions":  # the synchronous route (--batch-fallback sync)
            with self.lock:
                self.sync_calls += 1
            return _json(_chat_completion(request.get_json(), self.behaviour.garbage_share))
        if path.startswith("/v1/files"):
            return self._openai_file(request, path)
        return self._openai_batches(request, path)

    def _openai_file(self, request: Request, path: str) -> Response:
        if path == "/v1/files" and request.method == "POST":
            data = request.files["file"].read()
            file_id = f"file-{len(self.files):04d}"
            self.files[file_id] = data
            return _json(_file_object(file_id, len(data)))
        match = re.fullmatch(r"/v1/files/([^/]+)/content", path)
        if match:
            self._hold()
            return Response(self.files[match.group(1)], mimetype="application/octet-stream")
        return _json({"error": {"message": f"no route {path}"}}, 404)

    def _openai_batches(self, request: Request, path: str) -> Response:
        if path == "/v1/batches" and request.method == "POST":
            body = request.get_json()
            lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x]
            label = (body.get("metadata") or {}).get("jurybox_label", "")
            batch = self._new_batch("openai", label, [(x["custom_id"], x["body"]) for x in lines])
            batch.model = body["input_file_id"]  # kept to report it back
            self._created()
            return _json(self._openai_batch(batch, ended=False))
        if path == "/v1/batches" and request.method == "GET":
            return self._listed(self._openai_list)
        match = re.fullmatch(r"/v1/batches/([^/]+)(/cancel)?", path)
        if match:
            batch = self.batches[match.group(1)]
            if match.group(2):
                batch.cancelled = True
                return _json(self._openai_batch(batch, ended=False))
            fault = self._status_fault()
            if fault is not None:
                return fault
            return _json(self._openai_batch(batch, ended=self._ended(batch)))
        return _json({"error": {"message": f"no route {path}"}}, 404)

    def _openai_list(self) -> dict[str, Any]:
        data = [self._openai_batch(b, ended=False) for b in self.batches.values()]
        data = [b for b in reversed(data) if b["id"].startswith("batch_")]
        return {"object": "list", "data": data, "has_more": False}

    def _openai_batch(self, batch: _Batch, *, ended: bool) -> dict[str, Any]:
        total = len(batch.requests)
        data: dict[str, Any] = {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.model,
            "completion_window": "24h",
            "created_at": int(batch.created),
            "status": "in_progress",
            "metadata": {"jurybox_label": batch.label},
            "request_counts": {"total": total, "completed": 0, "failed": 0},
        }
        if not ended:
            return data
        ok, bad = self._openai_files(batch)
        status = "cancelled" if batch.cancelled else "expired" if batch.expire else "completed"
        data.update(status=status, output_file_id=ok, error_file_id=bad)
        data["request_counts"] = {"total": total, "completed": total, "failed": 0}
        return data

    def _openai_files(self, batch: _Batch) -> tuple[str | None, str | None]:
        key_ok, key_bad = f"file-out-{batch.id}", f"file-err-{batch.id}"
        if key_ok not in self.files:
            good, bad = [], []
            for index, (custom_id, body) in enumerate(batch.requests):
                if self._skipped(batch, index):
                    code = "batch_cancelled" if batch.cancelled else "batch_expired"
                    error = {"code": code, "message": "This request could not be executed."}
                    bad.append({"custom_id": custom_id, "response": None, "error": error})
                elif index in batch.errored:
                    response = {"status_code": 500, "body": {"error": {"message": "boom"}}}
                    bad.append({"custom_id": custom_id, "response": response, "error": None})
                else:
                    answer = _chat_completion(body, self.behaviour.garbage_share)
                    response = {"status_code": 200, "body": answer}
                    good.append({"custom_id": custom_id, "response": response, "error": None})
            self.files[key_ok] = _jsonl(good)
            self.files[key_bad] = _jsonl(bad)
        return key_ok, key_bad

    # --- Anthropic -----------------------------------------------------------------------------
    def _anthropic(self, request: Request, path: str) -> Response:
        if path == "/v1/messages/batches":
            return self._anthropic_batches(request)
        match = re.fullmatch(r"/v1/messages/batches/([^/]+)(/cancel|/results)?", path)
        if not match:
            return _json({"type": "error", "error": {"type": "not_found_error"}}, 404)
        batch = self.batches[match.group(1)]
        if match.group(2) == "/cancel":
            batch.cancelled = True
            return _json(self._anthropic_batch(batch, ended=False))
        if match.group(2) == "/results":
            self._hold()
            return Response(self._anthropic_results(batch), mimetype="application/binary")
        fault = self._status_fault()
        if fault is not None:
            return fault
        return _json(self._anthropic_batch(batch, ended=self._ended(batch)))

    def _anthropic_batches(self, request: Request) -> Response:
        if request.method == "GET":
            return self._listed(lambda: self._anthropic_list(request))
        lines = request.get_json()["requests"]
        batch = self._new_batch("anthropic", "", [(x["custom_id"], x["params"]) for x in lines])
        self._created()
        return _json(self._anthropic_batch(batch, False))

    def _anthropic_list(self, request: Request) -> dict[str, Any]:
        """Newest first, ``limit`` a page, ``after_id`` the cursor (the API's own paging)."""
        newest = [b for b in reversed(self.batches.values()) if b.vendor == "anthropic"]
        after = request.args.get("after_id")
        if after:
            newest = newest[[b.id for b in newest].index(after) + 1 :]
        page = newest[: int(request.args.get("limit", 20))]
        data = [self._anthropic_batch(b, ended=False) for b in page]
        return {
            "data": data,
            "has_more": len(newest) > len(page),
            "first_id": data[0]["id"] if data else None,
            "last_id": data[-1]["id"] if data else None,
        }

    def _anthropic_batch(self, batch: _Batch, ended: bool) -> dict[str, Any]:
        total = len(batch.requests)
        url = self.url(ANTHROPIC) + f"/v1/messages/batches/{batch.id}/results"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else total,
                "succeeded": total if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": _iso(batch.created),
            "expires_at": "2026-11-26T00:00:00Z",
            "ended_at": "2026-11-25T01:00:00Z" if ended else None,
            "results_url": url if ended else None,
        }

    def _anthropic_results(self, batch: _Batch) -> bytes:
        rows = []
        for index, (custom_id, params) in enumerate(batch.requests):
            if self._skipped(batch, index):
                result: dict[str, Any] = {"type": "canceled" if batch.cancelled else "expired"}
            elif index in batch.errored:
                error = {"type": "api_error", "message": "Internal server error"}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": "succeeded", "message": _anthropic_message(params)}
            rows.append({"custom_id": custom_id, "result": result})
        return _jsonl(rows)

    # --- Gemini --------------------------------------------------------------------------------
    def _google(self, request: Request, path: str) -> Response:
        match = re.fullmatch(r"/v1beta/models/([^:]+):batchGenerateContent", path)
        if match:
            spec = request.get_json()["batch"]
            items = spec["inputConfig"]["requests"]["requests"]
            reqs = [(x["metadata"]["custom_id"], x["request"]) for x in items]
            batch = self._new_batch("google", spec.get("displayName", ""), reqs, match.group(1))
            self._created()
            return _json(self._google_batch(batch, ended=False))
        if path == "/v1beta/batches" and request.method == "GET":
            return self._listed(
                lambda: {
                    "operations": [self._google_batch(b, False) for b in self.batches.values()]
                }
            )
        match = re.fullmatch(r"/v1beta/batches/([^/:]+)(:cancel)?", path)
        if not match:
            return _json(
                {"error": {"code": 404, "message": "no route", "status": "NOT_FOUND"}}, 404
            )
        batch = self.batches[match.group(1)]
        if match.group(2):
            batch.cancelled = True
            return _json({})
        fault = self._status_fault()
        if fault is not None:
            return fault
        ended = self._ended(batch)
        if ended:
            self._hold()
        return _json(self._google_batch(batch, ended=ended))

    def _google_batch(self, batch: _Batch, ended: bool) -> dict[str, Any]:
        state = "BATCH_STATE_RUNNING"
        if ended:
            state = (
                "BATCH_STATE_CANCELLED"
                if batch.cancelled
                else "BATCH_STATE_EXPIRED"
                if batch.expire
                else "BATCH_STATE_SUCCEEDED"
            )
        metadata: dict[str, Any] = {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": f"models/{batch.model}",
            "displayName": batch.label,
            "state": state,
        }
        if ended:
            responses = []
            for index, (custom_id, body) in enumerate(batch.requests):
                if self._skipped(batch, index):
                    continue  # an expired or cancelled job returns no response for it
                if index in batch.errored:
                    error = {"code": 503, "message": "The model is overloaded."}
                    responses.append({"error": error, "metadata": {"custom_id": custom_id}})
                    continue
                responses.append(
                    {"response": _gemini_response(body), "metadata": {"custom_id": custom_id}}
                )
            metadata["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
        return {"name": f"batches/{batch.id}", "metadata": metadata, "done": ended}


# --- answer bodies --------------------------------------------------------------------------------


def _answer_text(schema: Any, body: Any) -> str:
    wrapped = {"response_format": {"json_schema": {"schema": schema}}} if schema else {}
    return judge_answer(wrapped, _digest(body), 7)


def _tokens(body: Any, text: str) -> tuple[int, int]:
    return max(1, len(json.dumps(body)) // 4), max(1, len(text) // 4)


def _chat_completion(body: dict[str, Any], garbage_share: float = 0.0) -> dict[str, Any]:
    fmt = body.get("response_format") or {}
    text = _answer_text((fmt.get("json_schema") or {}).get("schema"), body)
    if _unit("garbage", _digest(body)) < garbage_share:
        text = "Both answers have merit; I cannot settle on a verdict {"
    prompt, completion = _tokens(body["messages"], text)
    return {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _anthropic_message(params: dict[str, Any]) -> dict[str, Any]:
    tools = params.get("tools") or []
    schema = tools[0]["input_schema"] if tools else None
    text = _answer_text(schema, params)
    prompt, completion = _tokens(params["messages"], text)
    content: dict[str, Any]
    if tools:
        content = {"type": "tool_use", "id": "toolu_1", "name": tools[0]["name"]}
        content["input"] = json.loads(text)
    else:
        content = {"type": "text", "text": text}
    return {
        "id": "msg_batch",
        "type": "message",
        "role": "assistant",
        "model": params["model"],
        "content": [content],
        "stop_reason": "tool_use" if tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def _gemini_response(body: dict[str, Any]) -> dict[str, Any]:
    schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
    text = _answer_text(schema, body)
    prompt, completion = _tokens(body.get("contents"), text)
    return {
        "candidates": [
            {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}
        ],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": prompt + completion,
        },
        "modelVersion": "gemini-wire",
    }


def _file_object(file_id: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": 0,
        "filename": "batch.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, mimetype="application/json")


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _iso(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat().replace("+00:00", "Z")
