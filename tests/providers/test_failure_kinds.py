"""Failures named by kind, end to end: the real ``openai_compatible`` adapter against a loopback
server that answers 500, 429 (retries spent), too late, or with text no parser reads, and a
port where nothing listens. Each kind is the same in the records, the run's summary and the
report's failure tables; a judge with no server is stopped within seconds with a hint, and the
next step printed is the command that redoes the failed calls (issue #34)."""

from __future__ import annotations

import json
import socket
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from werkzeug import Request, Response

from jurybox.cli import main
from jurybox.io.judgments import read_records
from jurybox.pipeline.failures import failure_kind

ANSWER = {"verdict": "A", "confidence": "high", "reasoning": "A is right."}
PATHS = {
    "e500": "HTTP 500",
    "e429": "HTTP 429",
    "slow": "timeout",
    "garbled": "parse",
    "dead": "connection refused",
}


def _chat(content: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": content}
    return {"id": "x", "model": "m", "choices": [{"index": 0, "message": message}]}


def _judge(base_url: str, **extra: Any) -> dict[str, Any]:
    return {
        "provider": "openai_compatible",
        "model": "m",
        "base_url": base_url,
        "api_key_env": None,
        "concurrency": 2,
        "rpm": 6000,  # fixed limits: a 429 is a failure to retry, not a pace to learn
        **extra,
    }


def _dataset(path: Path, n: int) -> Path:
    rows = [
        {"id": f"q{i}", "question": f"Question {i}?", "responses": {"a": "yes", "b": "no"}}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _config(tmp_path: Path, judges: dict[str, Any], n: int = 2) -> Path:
    config = {
        "judges": judges,
        "task": {"mode": "pairwise", "arms": ["a", "b"]},
        "pipeline": {"test_retest_count": 0, "max_retries": 1, "retry_base_s": 0.01},
        "paths": {"dataset": str(_dataset(tmp_path / "d.jsonl", n)), "output_dir": "out"},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture
def serve(wire: Any, release: threading.Event) -> Any:
    """Each failing behaviour under its own path of the one loopback server."""

    def late(_request: Request) -> Response:
        release.wait(5)  # past the judge's timeout_s; freed at teardown
        return wire.json(_chat(json.dumps(ANSWER)))

    server = wire.server
    server.expect_request("/e500/v1/chat/completions").respond_with_json(
        {"error": {"message": "boom"}}, status=500
    )
    server.expect_request("/e429/v1/chat/completions").respond_with_json(
        {"error": {"message": "slow down"}}, status=429
    )
    server.expect_request("/slow/v1/chat/completions").respond_with_handler(late)
    server.expect_request("/garbled/v1/chat/completions").respond_with_json(
        _chat("I would rather not say which one is better.")
    )
    server.expect_request("/good/v1/chat/completions").respond_with_json(_chat(json.dumps(ANSWER)))
    return wire


def test_each_kind_is_named_alike_in_records_summary_and_report(
    tmp_path: Path, serve: Any, dead_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    judges = {name: _judge(serve.url(f"/{name}/v1")) for name in PATHS if name != "dead"}
    judges["slow"]["timeout_s"] = 0.3
    judges["dead"] = _judge(f"http://127.0.0.1:{dead_port}/v1")
    judges["good"] = _judge(serve.url("/good/v1"))
    config = _config(tmp_path, judges)
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["run", str(config)])
    assert run.exit_code == 1, run.output  # every call of five judges failed
    records = list(read_records(tmp_path / "out" / "judgments.jsonl"))
    kinds = {(r.judge_name, failure_kind(r)) for r in records}
    assert kinds == {*PATHS.items(), ("good", None)}
    text = " ".join(run.output.split())
    for name, kind in PATHS.items():
        assert f"judge '{name}': 4 of 4 calls failed ({kind} 4)" in text
    for record in records:
        if record.status.value == "provider_error":
            assert record.error is not None and record.error.startswith(
                f"[{PATHS[record.judge_name]}]"
            )
    # the next step: redo the provider errors (the parse failures are answers: not redone)
    assert "Next: 16 provider_error records are redone by:" in text
    assert f"jurybox run {config} --resume {tmp_path / 'out'}" in text
    assert "jurybox analyze" not in text
    report = CliRunner().invoke(main, ["analyze", "out", "--out", "out/report"])
    assert report.exit_code == 0, report.output
    page = (tmp_path / "out" / "report" / "report.html").read_text(encoding="utf-8")
    for kind in PATHS.values():
        assert f"by kind: {kind} 4)" in page
        assert f"kind <b>{kind}</b>" in page


def test_a_server_that_is_not_there_stops_its_judge_in_seconds(
    tmp_path: Path, serve: Any, dead_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    judges = {
        "dead": _judge(f"http://127.0.0.1:{dead_port}/v1"),
        "good": _judge(serve.url("/good/v1")),
    }
    config = _config(tmp_path, judges, n=30)
    # the default retry policy (5 retries, 1 s backoff): the fail-fast is what keeps it short
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    data["pipeline"] = {"test_retest_count": 0}
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    started = datetime.now(UTC)
    run = CliRunner().invoke(main, ["run", str(config)])
    assert run.exit_code == 1, run.output
    records = list(read_records(tmp_path / "out" / "judgments.jsonl"))
    dead = [r for r in records if r.judge_name == "dead"]
    good = [r for r in records if r.judge_name == "good"]
    # every record of the dead judge written (stamped) within 5 s of the run's start
    stopped = max(datetime.fromisoformat(r.timestamp) for r in dead) - started
    assert stopped.total_seconds() < 5.0, f"a dead endpoint took {stopped} to stop its judge"
    assert len(dead) == len(good) == 60
    assert all(r.status.value == "ok" for r in good)  # the other judge carried on
    assert all(failure_kind(r) == "connection refused" for r in dead)
    hint = f"is the server at http://127.0.0.1:{dead_port} up?"
    assert all(hint in (r.error or "") for r in dead)
    assert sum(r.attempts for r in dead) <= 3 * 2  # a few attempts, not 6 per item
    assert hint in " ".join(run.output.split())


def test_an_unknown_host_is_a_dns_failure_and_stops_its_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = time.monotonic()
    try:
        socket.getaddrinfo("judge.invalid", 80)
    except socket.gaierror:
        pass
    else:  # pragma: no cover - a resolver that answers for .invalid (RFC 6761 says none does)
        pytest.skip("this machine's resolver answers for .invalid")
    if time.monotonic() - started > 1.0:  # pragma: no cover - no resolver at all: slow to say
        pytest.skip("this machine's resolver is slow to refuse a name")
    config = _config(tmp_path, {"gone": _judge("http://judge.invalid/v1")})
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(main, ["run", str(config)])
    assert run.exit_code == 1, run.output
    records = list(read_records(tmp_path / "out" / "judgments.jsonl"))
    assert {failure_kind(r) for r in records} == {"DNS failure"}
    assert "is the host name right, and the server at http://judge.invalid up?" in (
        records[0].error or ""
    )
