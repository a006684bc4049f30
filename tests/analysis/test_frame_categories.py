"""Low-cardinality text columns are sorted categoricals, from a file as from records in memory.

A million-record score table holds each arm, dimension, position, family and order millions of
times: one byte code per row instead of a string each. Sorted categories keep every sort and
groupby ordering rows as the strings would. The score table's ``judge`` and ``query_id`` are
categoricals too (their categories Python strings, looked up by item id again and again); the
records table keeps them as text.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jurybox.analysis import AnalysisOptions, build_frame
from jurybox.analysis._common import TOTAL
from jurybox.io.judgments import record_json
from jurybox.io.record_table import read_judgments

from .synth import make_world, rubric_records
from .test_frame_table import JUDGES

CATEGORICAL = {
    "records": ("model", "vendor", "family", "mode", "order"),
    "scores": ("arm", "position", "dimension", "family", "order", "judge", "query_id"),
}


def _frames(tmp_path: Path) -> list[object]:
    rng = np.random.default_rng(5)
    world = make_world(8, rng, families=("alpha", "beta"), human=False)
    path = tmp_path / "judgments.jsonl"
    records = rubric_records(world, JUDGES, rng)
    path.write_text("".join(record_json(r) + "\n" for r in records), encoding="utf-8")
    options = AnalysisOptions(control_arm="control")
    listed = build_frame(records, items=world.items, options=options)
    read = build_frame(read_judgments(path), items=world.items, options=options)
    return [listed, read]


def test_low_cardinality_columns_are_sorted_categories(tmp_path: Path) -> None:
    for frame in _frames(tmp_path):
        for table, columns in CATEGORICAL.items():
            data: pd.DataFrame = getattr(frame, table)
            for name in columns:
                dtype = data[name].dtype
                assert isinstance(dtype, pd.CategoricalDtype), (table, name)
                assert list(dtype.categories) == sorted(dtype.categories)
                assert set(dtype.categories) == set(data[name].dropna().astype(str))
        scores = frame.scores  # type: ignore[attr-defined]
        for name in ("judge", "query_id"):
            assert scores[name].dtype.categories.dtype == object
            assert frame.records[name].dtype == "str"  # type: ignore[attr-defined]
        totals = scores["dimension"] == TOTAL  # compares as text
        assert 0 < totals.sum() < len(scores)
