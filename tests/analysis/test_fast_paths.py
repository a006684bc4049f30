"""The analysis' fast paths give what the pandas calls they replace give (issue 19, 1M records).

Each fast path is checked against the plain pandas expression it stands for, kept here as the
reference, on random tables with missing keys, unseen values, duplicates and empty inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from jurybox.analysis import AnalysisFrame, build_frame
from jurybox.analysis._common import (
    TOTAL,
    in_values,
    keyed_like,
    split_by,
)
from jurybox.analysis.frame import _fill_totals
from jurybox.analysis.frame import _sorted_categorical as sorted_categorical
from jurybox.analysis.reliability import _retest_scores

from .synth import JudgeSpec, make_world, rubric_records


def _categorical(values: list[Any]) -> pd.Categorical:
    present = sorted({v for v in values if v is not None})
    return pd.Categorical(values, categories=pd.Index(present, dtype=object))


def _keys(rng: np.random.Generator, n: int, names: str, missing: bool) -> list[Any]:
    values: list[Any] = [str(v) for v in rng.choice(list(names), n)]
    if missing:
        values = [None if rng.random() < 0.1 else v for v in values]
    return values


@pytest.mark.parametrize("missing", [False, True])
def test_in_values_is_isin(missing: bool) -> None:
    rng = np.random.default_rng(1)
    keys = pd.Series(_categorical(_keys(rng, 500, "abcdef", missing)))
    for wanted in (["a", "x"], [], ["f", "b", "c"], ["a", None], ["a", np.nan]):
        expected = keys.astype(object).isin(np.asarray(wanted, dtype=object)).to_numpy()
        assert (in_values(keys, wanted) == expected).all()
        assert (in_values(pd.CategoricalIndex(keys), wanted) == expected).all()
        assert (in_values(keys.astype(object), wanted) == expected).all()


def _reference_fill_totals(scores: pd.DataFrame) -> pd.DataFrame:
    """``_fill_totals`` as it was: a left merge with an indicator."""
    dims = scores[scores["dimension"] != TOTAL]
    has_total = scores.loc[scores["dimension"] == TOTAL, ["rec", "arm"]].drop_duplicates()
    missing = dims.merge(has_total, on=["rec", "arm"], how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"]
    if missing.empty:
        return scores
    means = missing.groupby(["rec", "arm"], as_index=False).agg(
        position=("position", "first"), score=("score", "mean")
    )
    means = means.assign(dimension=TOTAL, confidence=np.nan, gate_failed=np.nan)
    columns = ["rec", "arm", "position", "dimension", "score", "confidence", "gate_failed"]
    return pd.concat([scores, means[columns]], ignore_index=True)


@pytest.mark.parametrize("categorical", [False, True])  # the score table's texts are codes
@pytest.mark.parametrize("share_without_total", [0.0, 0.3, 1.0])
def test_fill_totals_matches_the_merge(share_without_total: float, categorical: bool) -> None:
    rng = np.random.default_rng(3)
    rows = []
    for rec in range(60):
        for arm in ("control", "treatment", None):
            dims = ("accuracy", "clarity")
            for dim in dims:
                rows.append((rec, arm, "A", dim, float(rng.integers(1, 11)), 3.0, np.nan))
            if rng.random() >= share_without_total:
                rows.append((rec, arm, "A", TOTAL, float(rng.integers(1, 11)), np.nan, 0.0))
    columns = ["rec", "arm", "position", "dimension", "score", "confidence", "gate_failed"]
    scores = pd.DataFrame(rows, columns=columns).astype({"arm": "str", "dimension": "str"})
    if categorical:
        for name in ("arm", "position", "dimension"):
            scores[name] = _categorical(
                scores[name].astype(object).where(scores[name].notna(), None).tolist()
            )
    pd.testing.assert_frame_equal(_fill_totals(scores), _reference_fill_totals(scores))


def test_sorted_categorical_is_pandas_categorical() -> None:
    values = pd.Series(["b", "a", None, "é", "c", "a", "B"] * 50, dtype="str")
    for as_objects in (False, True):
        encoded = sorted_categorical(values, object_categories=as_objects)
        present = sorted(values.dropna().unique())
        categories = pd.Index(present, dtype=object if as_objects else None)
        expected = pd.Categorical(values, categories=categories)
        assert encoded is not None
        pd.testing.assert_series_equal(pd.Series(encoded), pd.Series(expected))
    empty = pd.Series([None, None], dtype="str")
    encoded = sorted_categorical(empty, object_categories=False)
    assert encoded is not None and encoded.isna().all()
    assert sorted_categorical(values.astype(object), object_categories=False) is None


def _dimension_rows(
    rng: np.random.Generator, n: int, categorical: bool, **columns: Any
) -> pd.DataFrame:
    """Rows of a ``dimension`` ("u", "v", "w" or missing; text or categorical), ``columns``
    and a ``score``, indexed from 3."""
    dims = _keys(rng, n, "uvw", missing=True)
    dimension = _categorical(dims) if categorical else pd.Series(dims, dtype="str")
    table = pd.DataFrame({"dimension": dimension, **columns, "score": rng.random(n)})
    return table.set_index(pd.RangeIndex(3, 3 + n))


@pytest.mark.parametrize("categorical", [False, True])
def test_split_by_is_the_groupby(categorical: bool) -> None:
    rng = np.random.default_rng(6)
    table = _dimension_rows(rng, 300, categorical, judge=_categorical(_keys(rng, 300, "ab", False)))
    if categorical:  # a category no row holds
        table["dimension"] = table["dimension"].cat.add_categories(["absent"])
    parts = split_by(table, "dimension")
    expected = [(str(k), part.drop(columns="dimension")) for k, part in table.groupby("dimension")]
    assert [key for key, _ in parts] == [key for key, _ in expected] == ["u", "v", "w"]
    for (_, got), (_, wanted) in zip(parts, expected, strict=True):
        pd.testing.assert_frame_equal(got, wanted)


def test_keyed_like_keeps_an_inner_merge() -> None:
    rng = np.random.default_rng(4)
    rows = pd.DataFrame(
        {
            "query_id": _categorical(_keys(rng, 300, "abcde", False)),
            "arm": _categorical(_keys(rng, 300, "xy", False)),
            "score": rng.random(300),
        }
    )
    items = pd.DataFrame(
        {
            "query_id": ["a", "b", "c", "z", "a"],
            "arm": ["x", "y", "x", "x", "w"],
            "length": [1, 2, 3, 4, 5],
        }
    ).astype({"query_id": "str", "arm": "str"})
    typed = keyed_like(items, rows)
    assert isinstance(typed["query_id"].dtype, pd.CategoricalDtype)
    got = rows.merge(typed, on=["query_id", "arm"])
    expected = rows.merge(items, on=["query_id", "arm"])
    pd.testing.assert_frame_equal(got, expected, check_dtype=False, check_categorical=False)
    with_missing = rows.assign(query_id=rows["query_id"].cat.add_categories(["q"]))
    with_missing.loc[0, "query_id"] = np.nan
    assert keyed_like(items, with_missing)["query_id"].dtype == items["query_id"].dtype


@pytest.mark.parametrize("categorical", [False, True])
def test_fresh_scores_are_the_boolean_filter(categorical: bool) -> None:
    from jurybox.analysis._common import fresh_scores
    from jurybox.analysis.frame import AnalysisFrame

    rng = np.random.default_rng(5)
    scores = _dimension_rows(rng, 400, categorical, retest=rng.random(400) < 0.2)
    frame = AnalysisFrame(pd.DataFrame(), scores, pd.DataFrame(), None, (), ())  # type: ignore[arg-type]
    for dim in ("u", "v", "w", "absent"):
        expected = scores[(scores["dimension"] == dim) & ~scores["retest"]]
        pd.testing.assert_frame_equal(fresh_scores(frame, dim), expected)
    pd.testing.assert_frame_equal(fresh_scores(frame), scores[~scores["retest"]])
    pd.testing.assert_frame_equal(
        fresh_scores(frame, "u", columns=["score"]),
        scores.loc[(scores["dimension"] == "u") & ~scores["retest"], ["score"]],
    )


@pytest.mark.parametrize("repeated", [0, 5])
def test_dimension_matrix_is_the_pivot(repeated: int) -> None:
    """With every (record, arm, dimension) once (one stable sort) or some repeated (averaged
    as the pivot averages them)."""
    from jurybox.analysis.reliability import _dimension_matrix

    rng = np.random.default_rng(6)
    rows = []
    for rec in rng.permutation(80):
        judge = ("j1", "j2", "j3")[rec % 3]
        for arm in ("control", "treatment"):
            for dim in ("clarity", "accuracy", "relevance"):
                if rng.random() < 0.9:  # some (record, arm) lack a dimension
                    rows.append((rec, arm, judge, dim, float(rng.integers(1, 11))))
    rows += rows[:repeated]  # duplicates: the pivot averages them
    dims = pd.DataFrame(rows, columns=["rec", "arm", "judge", "dimension", "score"])
    dims = dims.astype({name: "category" for name in ("arm", "judge", "dimension")})
    expected = dims.pivot_table(index=["rec", "arm", "judge"], columns="dimension", values="score")
    got = _dimension_matrix(dims)
    assert got is not None
    np.testing.assert_array_equal(got.to_numpy(), expected.to_numpy())
    assert list(got.columns) == list(expected.columns)
    assert list(got.index) == list(expected.index.get_level_values("judge"))
    mine = {str(j): part.to_numpy() for j, part in got.dropna().groupby(level="judge")}
    theirs = {str(j): part.to_numpy() for j, part in expected.dropna().groupby(level="judge")}
    assert mine.keys() == theirs.keys()
    for judge, part in theirs.items():
        np.testing.assert_array_equal(mine[judge], part)
    assert _dimension_matrix(dims.astype({"arm": object})) is None


def _retest_scores_by_pandas(frame: AnalysisFrame) -> pd.DataFrame:
    """``_retest_scores`` as it was: every key hashed by pandas, the original of each record
    found by its base key."""
    records = frame.records
    keys = pd.Index(records["key"])
    original = keys.get_indexer(records["base_key"])
    original_rec = np.where(original >= 0, records["rec"].to_numpy()[original], -1)
    scores = frame.scores[["rec", "retest", "query_id", "judge", "arm", "dimension", "score"]]
    test = scores[~scores["retest"]][["rec", "query_id", "judge", "arm", "dimension", "score"]]
    retest = scores[scores["retest"]][["rec", "arm", "dimension", "score"]]
    position = pd.Index(records["rec"]).get_indexer(retest["rec"])
    retest = retest.assign(rec=original_rec[position])
    test = test[np.isin(test["rec"].to_numpy(), retest["rec"].to_numpy())]
    return test.merge(retest, on=["rec", "arm", "dimension"], suffixes=("_test", "_retest"))


@pytest.mark.parametrize("orphans", [False, True])
def test_retest_scores_are_the_key_lookup(orphans: bool) -> None:
    """Retests matched to their originals through pyarrow's lookup of the retests' base keys
    are what pandas' lookup of every key gave, with retests whose original is missing."""
    rng = np.random.default_rng(5)
    world = make_world(30, rng)
    judges = {"j1": JudgeSpec(family="alpha"), "j2": JudgeSpec(family="beta", noise=0.9)}
    records = rubric_records(world, judges, rng, retest_items=12, retest_noise=0.5)
    if orphans:  # some originals gone: their retests match nothing
        records = [r for i, r in enumerate(records) if r.retest or i % 4]
    frame = build_frame(records, items=world.items)
    found = _retest_scores(frame)
    assert len(found) > 0
    pd.testing.assert_frame_equal(found, _retest_scores_by_pandas(frame), check_exact=True)
