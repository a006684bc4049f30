"""The report's batch saving: priced at the run's synchronous prices where it knows them."""

from __future__ import annotations

import pandas as pd
import pytest

from jurybox.analysis.report import _cost
from jurybox.config import JudgeConfig


def _records(rows: list[tuple[str, str | None, float | None, int, int, int]]) -> pd.DataFrame:
    columns = ["judge", "batch_id", "cost_usd", "input_tokens", "output_tokens"]
    frame = pd.DataFrame([row[:5] for row in rows], columns=columns)
    frame["cached_input_tokens"] = [row[5] for row in rows]
    return frame


KNOWN = JudgeConfig(
    provider="openai",
    model="m",
    price_input_per_mtok=2.0,
    price_output_per_mtok=10.0,
    price_cached_input_per_mtok=1.0,
)


def test_known_judges_are_priced_from_their_tokens_and_unknown_ones_assumed_half() -> None:
    # known: 1,000 in (400 cached), 100 out: 600*2 + 400*1 + 100*10 = 2,600 / 1e6 USD if sync
    records = _records(
        [
            ("known", "b1", 0.0020, 1000, 100, 400),
            ("unknown", "b2", 0.0050, 10, 10, 0),
            ("known", None, 0.0026, 1000, 100, 400),  # synchronous: no saving
        ]
    )
    cost = _cost(records, {"known": KNOWN})
    assert cost is not None
    assert cost.batch_saving_method == "mixed"
    assert cost.batch_cost_usd == pytest.approx(0.0070)
    assert cost.batch_saving_usd == pytest.approx((0.0026 - 0.0020) + 0.0050)
    assert (cost.n_batch_records, cost.n_sync_records) == (2, 1)
    only_known = _cost(records[records["judge"] == "known"], {"known": KNOWN})
    assert only_known is not None and only_known.batch_saving_method == "synchronous prices"
    assert only_known.batch_saving_usd == pytest.approx(0.0006)


def test_a_known_judge_without_synchronous_prices_leaves_the_saving_unknown() -> None:
    unpriced = KNOWN.model_copy(update={"price_input_per_mtok": None})
    cost = _cost(_records([("known", "b1", 0.002, 1000, 100, 0)]), {"known": unpriced})
    assert cost is not None and cost.batch_saving_usd is None
    assert cost.batch_cost_usd == pytest.approx(0.002)


def test_no_priced_batch_record_means_no_saving_and_no_method() -> None:
    cost = _cost(_records([("known", "b1", None, 1000, 100, 0)]), {"known": KNOWN})
    assert cost is not None
    assert (cost.batch_saving_usd, cost.batch_saving_method) == (None, None)
    assert cost.n_batch_records == 1
