"""Batch prices: what a batch answer costs (50% of the synchronous prices unless the judge's
``batch_price_*`` say otherwise)."""

from __future__ import annotations

from jurybox.config import JudgeConfig

BATCH_DISCOUNT = 0.5  # OpenAI, Anthropic and Gemini all bill batch tokens at half price


def _half(price: float | None) -> float | None:
    return None if price is None else price * BATCH_DISCOUNT


def batch_priced(judge: JudgeConfig) -> JudgeConfig:
    """The judge with its prices replaced by its batch prices (the cost of a batch record)."""
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
