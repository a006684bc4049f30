"""The chaos/benchmark wire server itself: valid, deterministic answers; limits; faults."""

from __future__ import annotations

import http.client
import json
import time
from collections import Counter
from typing import Any

import jsonschema
import pytest
from wire_server import WireConfig, judge_answer, spawn_server

from jurybox.prompts import schemas
from jurybox.rubrics import load_rubric

from .conftest import StartServer


def _post(
    port: int, body: dict[str, Any], timeout: float = 10.0
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(
            "POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"}
        )
        reply = connection.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        connection.close()


def _body(schema: dict[str, Any] | None, user: str = "Which is better?") -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": user}]}
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "j", "schema": schema},
        }
    return body


def _schemas() -> dict[str, dict[str, Any]]:
    rubric = load_rubric("general")
    return {
        "pairwise": schemas.pairwise_schema(request_confidence=True),
        "rubric": schemas.rubric_schema(rubric, (1, 5)),
        "pairwise_rubric": schemas.pairwise_rubric_schema(rubric, None, request_confidence=True),
        "batch": schemas.batch_pairwise_schema(4, request_confidence=False),
        "ranking": schemas.ranking_schema(rubric, ("A", "B", "C")),
        "criterion": schemas.criterion_schema(),
    }


@pytest.mark.parametrize("name", sorted(_schemas()))
def test_answers_validate_against_the_request_schema(name: str) -> None:
    schema = _schemas()[name]
    for index in range(20):
        answer = json.loads(judge_answer(_body(schema, f"q{index}"), f"digest{index}", seed=0))
        jsonschema.validate(answer, schema)
        if name == "ranking":
            assert sorted(answer["ranking"]) == ["A", "B", "C"]
        if name == "batch":
            assert [e["example"] for e in answer["evaluations"]] == [1, 2, 3, 4]


def test_without_a_schema_the_answer_is_a_pairwise_verdict() -> None:
    answer = json.loads(judge_answer(_body(None), "d", seed=0))
    assert answer["verdict"] in {"A", "B", "TIE"}


def test_answers_are_a_function_of_body_and_seed(wire_server: StartServer) -> None:
    server = wire_server()
    body = _body(schemas.pairwise_schema(request_confidence=True))
    first = json.loads(_post(server.server.port, body)[2])
    again = json.loads(_post(server.server.port, body)[2])
    assert first["choices"][0]["message"] == again["choices"][0]["message"]
    assert first["usage"]["prompt_tokens"] > 0


def test_rate_limit_answers_429_with_retry_after(wire_server: StartServer) -> None:
    server = wire_server(rpm=10)  # 10 in any 60-second window: no timing luck involved
    statuses = []
    for index in range(14):
        status, headers, _ = _post(server.server.port, _body(None, f"u{index}"))
        statuses.append(status)
        if status == 429:
            assert 0 < int(headers["retry-after-ms"]) <= 60_000
            assert 1 <= int(headers["retry-after"]) <= 60
    assert statuses == [200] * 10 + [429] * 4
    assert server.stats()["rate_limited"] == 4


def test_faults_follow_their_rates_and_replay(wire_server: StartServer) -> None:
    config = {"rate_5xx": 0.2, "rate_malformed": 0.1, "rate_unparsable": 0.1, "seed": 9}
    outcomes = []
    for _ in range(2):
        server = wire_server(**config)
        outcomes.append([_post(server.server.port, _body(None, f"u{i}"))[0] for i in range(200)])
    assert outcomes[0] == outcomes[1], "faults depend on (seed, body, attempt), not on timing"
    counts = Counter(outcomes[0])
    assert 20 <= sum(n for s, n in counts.items() if s >= 500) <= 60
    assert server.stats()["rate_malformed"] >= 8 and server.stats()["rate_unparsable"] >= 8


def test_timeouts_hold_then_drop_the_connection(wire_server: StartServer) -> None:
    server = wire_server(rate_timeout=1.0, hang_s=0.3)
    started = time.monotonic()
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        _post(server.server.port, _body(None))
    assert time.monotonic() - started >= 0.25


def test_spawned_server_runs_in_its_own_process() -> None:
    with spawn_server(WireConfig(latency_s=0.0, seed=1), max_lifetime_s=60) as server:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        assert _post(port, _body(None))[0] == 200
        assert server.stats()["ok"] == 1
        server.reset()
        assert server.stats()["requests"] == 0
        process = server.process
    assert process.poll() is not None
