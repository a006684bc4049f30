"""Pairwise judgments seen both ways: the order pairs and the flip-is-a-tie consolidation.

With ``position_bias_mode: both`` every (judge, item, repeat) is judged in two presentation
orders. ``order_pairs`` lines the two records up (any status), and ``consolidated`` turns them
into one verdict per judge and item: the preferred arm when both orders agree, ``tie`` when the
verdict flips with the order (a flip is no evidence for either arm), and the single verdict
when only one order was judged or only one succeeded.
"""

from __future__ import annotations

import pandas as pd

from jurybox.analysis.frame import AnalysisFrame

PAIR_KEY = ["judge", "query_id", "repeat"]
PAIR_COLUMNS = [*PAIR_KEY, "ok_1", "ok_2", "pref_1", "pref_2", "order_1", "order_2"]


def pairwise_records(frame: AnalysisFrame) -> pd.DataFrame:
    """Non-retest two-position records that carry (or should have carried) a preference."""
    r = frame.records
    ok_pref = r["ok"] & r["preferred_arm"].notna()
    failed_pairwise = ~r["ok"] & (r["mode"] == "pairwise")
    return r[~r["retest"] & (r["n_positions"] == 2) & (ok_pref | failed_pairwise)]


def order_pairs(frame: AnalysisFrame) -> pd.DataFrame:
    """One row per (judge, item, repeat) judged in two different orders.

    Columns: judge, query_id, repeat, ok_1, ok_2, pref_1, pref_2, order_1, order_2, status_1,
    status_2. Slot 1 is the alphabetically first order name, so slots are stable across judges.
    """

    def build() -> pd.DataFrame:
        recs = pairwise_records(frame).sort_values([*PAIR_KEY, "order"])
        recs = recs.drop_duplicates([*PAIR_KEY, "first_arm"])
        recs = recs.assign(slot=recs.groupby(PAIR_KEY).cumcount() + 1)
        recs = recs[recs["slot"] <= 2]
        wide = recs.pivot(
            index=PAIR_KEY, columns="slot", values=["ok", "preferred_arm", "order", "status"]
        )
        wide.columns = [f"{column[0]}_{column[1]}" for column in wide.columns]
        wide = wide.rename(columns={"preferred_arm_1": "pref_1", "preferred_arm_2": "pref_2"})
        if "ok_2" not in wide.columns:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in PAIR_COLUMNS})
        wide = wide.dropna(subset=["ok_1", "ok_2"]).reset_index()
        wide["ok_1"] = wide["ok_1"].astype(bool)
        wide["ok_2"] = wide["ok_2"].astype(bool)
        return wide

    return frame.memo("order_pairs", build)


def consolidated(frame: AnalysisFrame) -> pd.DataFrame:
    """One verdict per (judge, item, repeat): columns judge, query_id, repeat, label (arm or
    "tie"), n_orders (1 or 2 successful orders), flipped (the two orders disagreed)."""

    def build() -> pd.DataFrame:
        recs = pairwise_records(frame)
        recs = recs[recs["ok"]]
        grouped = recs.groupby(PAIR_KEY)["preferred_arm"]
        out = grouped.agg(first="first", n_orders="size", n_labels="nunique").reset_index()
        out["flipped"] = out["n_labels"] > 1
        out["label"] = out["first"].where(~out["flipped"], "tie")
        return out[[*PAIR_KEY, "label", "n_orders", "flipped"]]

    return frame.memo("consolidated", build)
