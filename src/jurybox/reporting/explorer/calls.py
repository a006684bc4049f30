"""How each judgment's call went, in the explorer's words: parse method, tokens, latency, cost,
and the raw answer where the reasoning shown is not already it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurybox.pricing import format_usd
from jurybox.reporting.view.format import fmt_num

TEXT_CHARS = 20_000  # a question or response longer than this is cut (and said so)
REASON_CHARS = 4_000  # a judge's reasoning or raw text
# Up to this many records the item view shows each judgment's prompt as sent; past it the page
# would carry megabytes of prompts: `jurybox show` prints any one.
PROMPT_RECORDS = 2_000


def cut_text(text: str | None, limit: int) -> str:
    """The text cut at ``limit`` characters (and said so); "" of none."""
    if not text:
        return ""
    return text if len(text) <= limit else text[:limit] + f"… [cut at {limit} characters]"


def raw_words(preference_reasoning: str | None, raw_response: str | None) -> str:
    """The judge's raw answer where the reasoning shown is not already it; cut."""
    return cut_text(raw_response, REASON_CHARS) if preference_reasoning else ""


def tokens_words(input_tokens: int | None, output_tokens: int | None) -> str:
    """``512 in / 40 out``; "" where the call reported none."""
    if input_tokens is None and output_tokens is None:
        return ""
    return f"{fmt_num(input_tokens)} in / {fmt_num(output_tokens)} out"


def latency_words(latency_ms: float | None) -> str:
    return "" if latency_ms is None else f"{fmt_num(latency_ms, 0)} ms"


def cost_words(cost_usd: float | None, answered: bool) -> str:
    """The call's cost as every output writes it; "" for a call that never answered."""
    return format_usd(cost_usd) if answered or cost_usd is not None else ""


def call_words(col: Mapping[str, list[Any]]) -> dict[str, list[str]]:
    """How each call went, in words: parse method, tokens, latency, cost, raw answer, key."""
    answered = [raw is not None for raw in col["raw_response"]]
    return {
        "parses": [method or "" for method in col["parse_method"]],
        "tokens": list(map(tokens_words, col["input_tokens"], col["output_tokens"])),
        "latencies": list(map(latency_words, col["latency_ms"])),
        "costs": list(map(cost_words, col["cost_usd"], answered)),
        "raws": list(map(raw_words, col["preference_reasoning"], col["raw_response"])),
        "keys": col["key"],
    }
