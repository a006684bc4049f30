from __future__ import annotations

import dataclasses
import sqlite3
from contextlib import closing
from pathlib import Path

from jurybox.config import JudgeConfig
from jurybox.pipeline.cache import ResponseCache, cache_key
from jurybox.records import Completion, CompletionRequest

JUDGE = JudgeConfig(provider="openai", model="gpt-x", api_key_env="SOME_KEY_ENV")
REQUEST = CompletionRequest(system="rules", user="question", max_tokens=100, seed=1)


def key(judge: JudgeConfig = JUDGE, request: CompletionRequest = REQUEST) -> str:
    return cache_key("openai", judge.model or "", judge, request)


def test_key_changes_with_what_changes_the_answer() -> None:
    base = key()
    changed = [
        key(request=dataclasses.replace(REQUEST, user="other question")),
        key(request=dataclasses.replace(REQUEST, system="other rules")),
        key(request=dataclasses.replace(REQUEST, temperature=0.7)),
        key(request=dataclasses.replace(REQUEST, max_tokens=50)),
        key(request=dataclasses.replace(REQUEST, seed=2)),
        key(request=dataclasses.replace(REQUEST, response_schema={"type": "object"})),
        key(judge=JUDGE.model_copy(update={"extra_body": {"top_p": 0.5}})),
        key(judge=JUDGE.model_copy(update={"base_url": "http://127.0.0.1:8000/v1"})),
        # Decided once on JudgeConfig (Affects.ANSWER): which parameter is sent, and where a
        # long prompt is cut off.
        key(judge=JUDGE.model_copy(update={"max_tokens_param": "max_completion_tokens"})),
        key(judge=JUDGE.model_copy(update={"n_ctx": 2048})),
        cache_key("openai", "gpt-y", JUDGE, REQUEST),
        cache_key("anthropic", "gpt-x", JUDGE, REQUEST),
    ]
    assert len({base, *changed}) == len(changed) + 1


def test_key_ignores_scheduling_and_credentials() -> None:
    scheduling = JUDGE.model_copy(
        update={
            "concurrency": 3,
            "rpm": 10.0,
            "timeout_s": 5.0,
            "api_key_env": "OTHER_ENV",
            "price_input_per_mtok": 2.0,
            "family": "gpt",  # copied into records, not sent: a cached answer still holds
        }
    )
    assert key(judge=scheduling) == key()


def test_roundtrip_in_wal_mode_and_shared_between_handles(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    completion = Completion(
        text='{"verdict": "A"}',
        model="gpt-x",
        input_tokens=10,
        output_tokens=3,
        structured={"verdict": "A"},
        finish_reason="stop",
    )
    with closing(ResponseCache(path)) as first, closing(ResponseCache(path)) as second:
        assert first.get("k") is None
        first.put("k", completion)
        assert second.get("k") == completion
        assert len(second) == 1
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        stored = db.execute("SELECT completion FROM responses").fetchone()[0]
    assert "SOME_KEY_ENV" not in stored and "authorization" not in stored.lower()
