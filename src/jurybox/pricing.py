"""What a judgment costs, from the judge's configured prices: the one home of pricing, read by
the providers' callers (recording, the runner's cost limits, the dry run), provider batch runs
and the analysis (what a batch run would have cost synchronously).

Token conventions (every adapter follows them, ``providers/_common.py``): ``input_tokens``
counts all prompt tokens, cached ones included; ``cached_input_tokens`` is the part of it served
from the vendor's prompt cache; ``output_tokens`` counts every billed output token.
"""

from __future__ import annotations

from jurybox.config import JudgeConfig
from jurybox.records import Completion

BATCH_DISCOUNT = 0.5  # OpenAI, Anthropic and Gemini all bill batch tokens at half price


def completion_cost_usd(judge: JudgeConfig, completion: Completion) -> float | None:
    """USD cost of one completion from the judge's configured prices.

    Cached input tokens are billed at ``price_cached_input_per_mtok`` (the input price when
    unset). Returns ``None`` when a needed price or token count is unknown, never a guess; a
    local judge with no prices configured costs 0.
    """
    return tokens_cost_usd(
        judge, completion.input_tokens, completion.output_tokens, completion.cached_input_tokens
    )


def tokens_cost_usd(
    judge: JudgeConfig, tokens_in: int | None, tokens_out: int | None, cached: int | None
) -> float | None:
    """USD cost of these token counts at the judge's prices (``completion_cost_usd``'s rule)."""
    price_in, price_out = judge.price_input_per_mtok, judge.price_output_per_mtok
    if price_in is None and price_out is None and judge.provider == "local":
        return 0.0
    if price_in is None or price_out is None or tokens_in is None or tokens_out is None:
        return None
    cached = min(cached or 0, tokens_in)
    price_cached = judge.price_cached_input_per_mtok
    if price_cached is None:
        price_cached = price_in
    total = (tokens_in - cached) * price_in + cached * price_cached + tokens_out * price_out
    return total / 1_000_000


def _half(price: float | None) -> float | None:
    return None if price is None else price * BATCH_DISCOUNT


def batch_priced(judge: JudgeConfig) -> JudgeConfig:
    """The judge with its prices replaced by its batch prices (the cost of a batch record):
    50% of the synchronous prices unless the judge's ``batch_price_*`` say otherwise."""
    price_in = judge.batch_price_input_per_mtok
    if price_in is None:
        price_in = _half(judge.price_input_per_mtok)
    price_out = judge.batch_price_output_per_mtok
    if price_out is None:
        price_out = _half(judge.price_output_per_mtok)
    cached = judge.price_cached_input_per_mtok
    # An explicit batch input price with no cached price: cached tokens bill at that price.
    cached = _half(cached) if judge.batch_price_input_per_mtok is None else None
    return judge.model_copy(
        update={
            "price_input_per_mtok": price_in,
            "price_output_per_mtok": price_out,
            "price_cached_input_per_mtok": cached,
        }
    )
