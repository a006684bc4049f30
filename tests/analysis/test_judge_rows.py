"""Rows split by judge once per frame equal the per-judge filters they replace (issue 19)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from tests.reporting.synthetic import pairwise_world

from jurybox.analysis._common import judge_rows
from jurybox.analysis.evidence import _retest_shares
from jurybox.analysis.frame import AnalysisFrame, build_frame
from jurybox.analysis.options import AnalysisOptions


def _frame_with_retests() -> AnalysisFrame:
    world = pairwise_world(n_items=12)
    rng = np.random.default_rng(2)
    retests = []
    for record in world.records[::3]:
        flip = rng.random() < 0.4
        pref = ("B" if record.preference == "A" else "A") if flip else record.preference
        retests.append(
            dataclasses.replace(
                record,
                key=f"{record.key}|retest",
                retest=True,
                preference=pref,
                preferred_arm=record.positions[pref],
            )
        )
    return build_frame(
        world.records + retests, human=world.human, items=world.items, options=AnalysisOptions()
    )


def test_judge_rows_equal_the_filter_for_every_judge() -> None:
    frame = _frame_with_retests()
    records = frame.records
    for judge in [*records["judge"].unique(), "nobody"]:
        got = judge_rows(frame, "records", lambda: records, str(judge))
        pd.testing.assert_frame_equal(got, records[records["judge"] == judge])


def test_retest_shares_equal_the_per_judge_merge() -> None:
    frame = _frame_with_retests()
    shares = _retest_shares(frame)
    ok = frame.ok
    assert shares
    for judge in ok["judge"].unique():
        own = ok[(ok["judge"] == judge) & ok["preferred_arm"].notna()]
        test = own[~own["retest"]][["key", "preferred_arm"]]
        again = own[own["retest"]][["base_key", "preferred_arm"]].rename(
            columns={"base_key": "key"}
        )
        pairs = test.merge(again, on="key", suffixes=("_test", "_retest"))
        want = float((pairs["preferred_arm_test"] == pairs["preferred_arm_retest"]).mean())
        assert shares[str(judge)] == want
