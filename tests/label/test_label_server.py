"""The page's server over loopback: the token, the host, same-origin JSON posts, the CSP, clear
errors, and the command's own exits (issue 38)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .server import LabelServer

Run = tuple[Path, dict[str, str]]


@pytest.fixture
def server(run60: Run, tmp_path: Path) -> Iterator[LabelServer]:
    log = (tmp_path / "server.log").open("wb")
    started = LabelServer(run60[0], log, "--labels", str(tmp_path / "labels.jsonl"))
    yield started
    started.kill()
    log.close()


def test_every_request_needs_the_token_and_the_host(server: LabelServer) -> None:
    token = server.token
    assert server.request("GET", "/api/state")[0] == 403
    assert server.request("GET", "/api/state", X_Jurybox_Token="wrong")[0] == 403
    assert server.request("GET", f"/api/state?token={token}")[0] == 200
    host = server.request("GET", "/api/state", X_Jurybox_Token=token, Host="attacker.example")
    assert host[0] == 403  # a DNS-rebinding page reaches the port under another name
    status, headers, body = server.request("GET", f"/?token={token}")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp
    assert "connect-src 'self'" in csp and "unsafe" not in csp
    assert headers["Referrer-Policy"] == "no-referrer" and headers["Cache-Control"] == "no-store"
    assert b"<script>" in body and b"src=" not in body  # inline only: nothing to fetch


def test_posts_must_be_json_from_the_page_itself(server: LabelServer, tmp_path: Path) -> None:
    token, answer = server.token, json.dumps({"position": 1, "answer": {"prefer": 1}}).encode()
    evil = server.request(
        "POST",
        "/api/label",
        answer,
        X_Jurybox_Token=token,
        Content_Type="application/json",
        Origin="http://attacker.example",
    )
    assert evil[0] == 403
    form = server.request(
        "POST",
        "/api/label",
        answer,
        X_Jurybox_Token=token,
        Content_Type="application/x-www-form-urlencoded",
    )
    assert form[0] == 403
    bad = json.dumps({"position": 1, "answer": {"prefer": 7}}).encode()
    status, _, body = server.request(
        "POST", "/api/label", bad, X_Jurybox_Token=token, Content_Type="application/json"
    )
    assert status == 400 and "prefer" in json.loads(body)["error"]
    assert not (tmp_path / "labels.jsonl").read_bytes()  # nothing written for a bad answer
    status, _, body = server.request(
        "POST",
        "/api/label",
        answer,
        X_Jurybox_Token=token,
        Content_Type="application/json",
        Origin=server.origin,
    )
    assert status == 200 and json.loads(body)["labelled"] == 1
    assert server.request("GET", "/api/item/61", X_Jurybox_Token=token)[0] == 400
    summary = server.get("/api/summary")
    assert {v["judge"] for v in summary["verdicts"]} == {"first_pick", "long_pick"}


def test_sigterm_stops_cleanly_and_says_what_to_run_next(run60: Run, tmp_path: Path) -> None:
    with (tmp_path / "server.log").open("wb") as log:
        started = LabelServer(run60[0], log, "--labels", str(tmp_path / "labels.jsonl"))
        assert started.stop() == 0
    said = (tmp_path / "server.log").read_text()
    assert "0 of 60 items labelled by 'ann'" in said
    # analyze writes RUN/report by default; a labels file outside the run folder is named
    assert f"Next: jurybox analyze {run60[0]} --human {tmp_path / 'labels.jsonl'}\n" in said


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nowhere"], "judgments file not found"),
        (["RUN", "--labels", "labels.csv"], "must be a .jsonl file"),
        (["RUN", "--oversample", "0.5"], "--oversample"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    run60: Run, tmp_path: Path, args: list[str], says: str
) -> None:
    args = [
        str(run60[0]) if a == "RUN" else str(tmp_path / a) if a.endswith("csv") else a for a in args
    ]
    done = subprocess.run(
        [sys.executable, "-m", "jurybox", "label", *args, "--annotator", "ann"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and says in lines[0], done.stderr
