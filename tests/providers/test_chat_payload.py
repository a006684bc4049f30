"""``chat_payload`` (the body ``openai_compatible`` sends, its fixed parts encoded once) gives
exactly the bytes of ``json.dumps(chat_body(...))``, the body the ``openai`` SDK adapter is
built from, whatever the request holds and in whatever order requests come."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from jurybox.config import JudgeConfig
from jurybox.providers._chat_format import chat_body, chat_payload
from jurybox.records import CompletionRequest, SharedSchema

STRICT: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "verdict": {"enum": ["A", "B", "TIE"]}},
    "required": ["reasoning", "verdict"],
    "additionalProperties": False,
}
LOOSE: dict[str, Any] = {"type": "object", "properties": {"score": {"type": "integer"}}}
TEXTS = (
    "plain text",
    "",
    'quotes " and \\ backslashes, tabs\t and\nnew lines',
    "non-ASCII: café, 日本語, emoji 🙂",
    "control \x00\x1f and DEL \x7f",
    "a lone surrogate \ud800 here",
)


def _judge(**overrides: Any) -> JudgeConfig:
    settings: dict[str, Any] = {
        "provider": "openai_compatible",
        "model": "m",
        "base_url": "http://127.0.0.1:9/v1",
    }
    settings.update(overrides)
    return JudgeConfig(**settings)


def _expected(judge: JudgeConfig, model: str, request: CompletionRequest) -> tuple[bytes, bool]:
    body = chat_body(judge, model, request)
    return json.dumps(body).encode(), "response_format" in body


def _requests() -> list[CompletionRequest]:
    found = []
    for system, user in itertools.product(TEXTS, TEXTS):
        found.append(CompletionRequest(system=system, user=user, max_tokens=256))
    parameters = itertools.product(
        (None, 0, 0.0, 0.7, False),  # temperature: 0, 0.0 and False are equal, not alike
        (None, 0, 7, 2**40),  # seed
        (None, STRICT, LOOSE),  # schema
        (1, 512, True),  # max_tokens
    )
    for temperature, seed, schema, max_tokens in parameters:
        found.append(
            CompletionRequest(
                system="You are a judge.",
                user="Which is better?",
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                response_schema=schema,
                schema_name="pairwise verdict" if seed else "x",
            )
        )
    return found


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"structured_output": False},
        {"max_tokens_param": "max_completion_tokens"},
        {"extra_body": {"top_k": 5, "model": "replaced in place", "seed": 1}},
        {"extra_body": {"response_format": {"type": "json_object"}}},
    ],
)
def test_the_payload_is_the_bodys_json(overrides: dict[str, Any]) -> None:
    judge = _judge(**overrides)
    requests = _requests()
    # Twice over, and in reverse: kept heads and tails must never leak into another request.
    for request in [*requests, *reversed(requests)]:
        for model in ("m", "modèle"):
            assert chat_payload(judge, model, request) == _expected(judge, model, request)


@pytest.mark.parametrize("schema", [STRICT, LOOSE])
def test_a_shared_schema_gives_the_bytes_and_hash_of_a_plain_one(schema: dict[str, Any]) -> None:
    # A SharedSchema's JSON is kept on it after the first call: later calls must still match.
    shared = SharedSchema.of(schema)
    for text in TEXTS:
        plain = CompletionRequest(system="s", user=text, max_tokens=9, response_schema=schema)
        kept = CompletionRequest(system="s", user=text, max_tokens=9, response_schema=shared)
        for _ in range(2):
            assert chat_payload(_judge(), "m", kept) == _expected(_judge(), "m", plain)
            if "\ud800" not in text:  # the prompt hash's UTF-8 refuses a lone surrogate
                assert kept.prompt_hash() == plain.prompt_hash()
