"""Report building blocks shared by the metric families.

A family section is a ``Section`` model: computed (its content set) or skipped with the reason.
A metric is a ``Metric`` model built from the frozen result of a ``jurybox.stats`` call: the
result's headline field (declared on the result type) under ``value``, its sample size under
``n``, the variant under ``method`` and every other field of the result as is. When a statistic
cannot be computed (``ValueError`` from ``jurybox.stats``), the metric keeps its place with
``value: None`` and the reason, so that nothing is silently 0 and nothing is NaN.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd
from pydantic import BaseModel

from jurybox import stats
from jurybox.analysis.model import Metric, Model, Skipped
from jurybox.analysis.model.metrics import ICCMetric, ProportionMetric
from jurybox.analysis.options import AnalysisOptions

if TYPE_CHECKING:  # frame.py imports this module
    from jurybox.analysis.frame import AnalysisFrame

TOTAL = "total"  # the pseudo-dimension holding a record's overall score

_N_FIELDS = ("n", "n_subjects", "n_targets", "n_units", "n_items")

M = TypeVar("M", bound=Metric)
T = TypeVar("T", bound=Model)


def skipped(reason: str) -> Skipped:
    """A metric or sub-section that could not be computed, with the reason."""
    return Skipped(status="skipped", reason=reason)


def unavailable(model: type[M], reason: str, n: int, method: str | None = None) -> M:
    """A metric that has no value, kept in place with its reason."""
    return model(value=None, n=int(n), method=method, reason=reason)


def flatten(result: Any) -> dict[str, Any]:
    """A ``jurybox.stats`` result as metric fields: its headline renamed ``value``, ``n`` added."""
    data: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        data[f.name] = flatten(value) if dataclasses.is_dataclass(value) else value
    headline = getattr(type(result), "headline", None)
    if headline is not None:
        data["value"] = data.pop(headline)
    if "n" not in data:
        data["n"] = next((data[k] for k in _N_FIELDS if k in data), None)
    data.setdefault("reason", None)
    safe: dict[str, Any] = json_safe(data)
    return safe


def attempt(model: type[M], fn: Callable[..., Any], *args: Any, n: int, **kwargs: Any) -> M:
    """Call a stats function into ``model``; a ``ValueError`` becomes a reasoned null.

    Warnings the statistic raises (e.g. low discrimination) are kept in the metric.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(*args, **kwargs)
        except ValueError as exc:
            return unavailable(model, str(exc), n)
    data = flatten(result)
    if data.get("n") is None:
        data["n"] = int(n)  # results without a sample-size field (e.g. McNemar's)
    if caught:
        data["warnings"] = [str(w.message) for w in caught]
    return model.model_validate(data)


def score_categories(
    values: np.ndarray[Any, Any] | pd.Series, options: AnalysisOptions
) -> tuple[list[int] | None, str]:
    """The ordered categories weighted kappa and AC2 weigh over, and how they were chosen.

    The declared scale (``options.score_scale``) when given; else the span of the observed
    scores when they are whole numbers; else None (the scores are not ordinal categories).
    """
    numbers = pd.to_numeric(pd.Series(np.asarray(values).ravel()), errors="coerce").dropna()
    if options.score_scale is not None:
        low, high = options.score_scale
        return list(range(low, high + 1)), f"over the declared scale {low}-{high}"
    if numbers.empty or not (numbers == numbers.round()).all():
        return None, "scores are not whole numbers"
    low, high = int(numbers.min()), int(numbers.max())
    return list(range(low, high + 1)), f"over the observed span {low}-{high} (no declared scale)"


def with_fields(model: T, **fields: Any) -> T:
    """``model`` with fields added or replaced (made JSON-safe; ``model_copy`` does not validate,
    so callers pass the declared types)."""
    return model.model_copy(update=json_safe(fields))


def extend(model: type[M], metric: Metric, **fields: Any) -> M:
    """``metric`` as the family's ``model`` (a subclass of its kind), with the family's fields."""
    given = {key: getattr(metric, key) for key in metric.model_fields_set}
    return model.model_validate({**given, **json_safe(fields)})


def value_of(metric: Metric | Skipped | None) -> float | None:
    """A metric's number, or None when the metric is absent, skipped or has no value."""
    if not isinstance(metric, Metric) or metric.value is None:
        return None
    return float(metric.value)


def _scalar(obj: Any) -> Any:
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        number = float(obj)
        return number if math.isfinite(number) else None
    return obj if obj is None or isinstance(obj, str | BaseModel) else str(obj)


def json_safe(obj: Any) -> Any:
    """Recursively turn numpy types and tuples into JSON types; NaN and infinities become None.

    Metrics set their own reasons before this runs; this is the last guard against NaN.
    """
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    return _scalar(obj)


def rate(successes: int, n: int) -> float | None:
    """A plain share, None when the denominator is 0 (callers add the reason)."""
    return successes / n if n else None


def wilson_share(successes: int, n: int, options: AnalysisOptions) -> ProportionMetric:
    """The share ``successes`` / ``n`` with its Wilson interval."""
    fn = stats.wilson_interval
    return attempt(ProportionMetric, fn, successes, n, n=n, confidence=options.confidence)


def icc_over_items(values: Any, items: Any, options: AnalysisOptions) -> ICCMetric:
    """ICC(2,1) of the raters (columns) over the rows, its interval a bootstrap over ``items``
    (the item of each row)."""
    over = {"clusters": items, "rng": options.seed, "confidence": options.confidence}
    return attempt(ICCMetric, stats.icc, values, "2,1", n=len(values), **over)


def win_rate(model: type[M], wins: int, losses: int, ties: int, options: AnalysisOptions) -> M:
    """The win rate with its Wilson interval, a tie counting half a win."""
    n, interval = wins + losses + ties, options.confidence
    fn = stats.win_rate_interval
    return attempt(model, fn, wins, losses, ties, n=n, confidence=interval, tie_policy="half")


def majority_vote(frame: pd.DataFrame, by: str | list[str], column: str) -> pd.Series:
    """The strict plurality label of ``column`` within each ``by`` group; groups whose top count
    is shared get None (no majority), so that a split panel is never silently resolved."""
    keys = [by] if isinstance(by, str) else list(by)
    table = frame.groupby([*keys, column]).size().reset_index(name="count")
    top = table.groupby(keys)["count"].transform("max")
    winners = table[table["count"] == top]
    unique = winners.groupby(keys)[column].transform("size") == 1
    result = winners[unique].set_index(keys)[column]
    groups = table[keys].drop_duplicates().set_index(keys).index
    found = result.reindex(groups).astype(object)
    return found.where(found.notna(), None)


def mapped(keys: pd.Series, mapping: Mapping[Any, Any] | pd.Series) -> pd.Series:
    """``keys.map(mapping)`` typed as a text column's ``map`` types it: a categorical key column
    (the score table's ``judge`` and ``query_id``) would answer a categorical, which can be
    neither subtracted nor compared with other values."""
    if isinstance(keys.dtype, pd.CategoricalDtype):
        keys = keys.astype(object)
    return keys.map(mapping)


def in_values(keys: pd.Series | pd.Index, wanted: Any) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """``keys.isin(wanted)`` as a boolean array. Where ``keys`` is categorical (the score
    table's ``query_id``) the wanted values are looked up among the categories and rows are
    flagged by code; else through a hash table of Python strings (pandas' arrow-string
    ``isin`` builds a pyarrow scalar per wanted value)."""
    values = np.asarray(wanted, dtype=object)
    if not isinstance(keys.dtype, pd.CategoricalDtype):
        return np.asarray(pd.Index(keys).astype(object).isin(values), dtype=bool)
    # Per category code whether it is wanted; the last entry is code -1, a missing key, matched
    # as pandas matches it.
    missing = pd.Index([np.nan], dtype=object).isin(values)
    hit = np.append(keys.dtype.categories.isin(values), missing)
    codes = np.asarray(pd.Categorical(keys).codes if isinstance(keys, pd.Index) else keys.cat.codes)
    found: np.ndarray[Any, np.dtype[np.bool_]] = hit[codes]
    return found


def keyed_like(
    table: pd.DataFrame, rows: pd.DataFrame, columns: tuple[str, ...] = ("query_id", "arm")
) -> pd.DataFrame:
    """``table`` (items, human labels) with its key ``columns`` typed as ``rows``' categoricals
    (score rows: same categories), so that an inner merge of ``rows`` with it matches codes
    instead of hashing a million keys. A value that is no category of ``rows`` becomes missing,
    which matches nothing there: only columns where ``rows`` has no missing value change."""
    typed = {}
    for name in columns:
        dtype = rows[name].dtype
        if (
            isinstance(dtype, pd.CategoricalDtype)
            and not isinstance(table[name].dtype, pd.CategoricalDtype)
            and not rows[name].isna().any()
        ):
            codes = dtype.categories.get_indexer(pd.Index(table[name], dtype=object))
            typed[name] = pd.Categorical.from_codes(codes, dtype=dtype)  # -1: not a category
    return table.assign(**typed) if typed else table


def judge_rows(
    frame: AnalysisFrame, name: str, build: Callable[[], pd.DataFrame], judge: str
) -> pd.DataFrame:
    """The rows of ``build()`` whose ``judge`` is ``judge`` (``table[table["judge"] == judge]``),
    the table built once per frame (``name`` keys the cache)."""
    table = frame.memo(f"judge_rows:{name}", build)
    return table[table["judge"].eq(judge).fillna(False).to_numpy(dtype=bool)]


def records_by_judge(frame: AnalysisFrame) -> list[tuple[str, pd.DataFrame]]:
    """``list(frame.records.groupby("judge"))`` (judges sorted, each one's rows in order),
    through ``judge_rows``."""
    judges = sorted(frame.records["judge"].dropna().unique().tolist())
    return [(judge, judge_rows(frame, "records", lambda: frame.records, judge)) for judge in judges]


def fresh_records(frame: AnalysisFrame) -> pd.DataFrame:
    """The ok records that are not retests (``ok[~ok["retest"]]``), filtered once per frame."""

    def build() -> pd.DataFrame:
        ok = frame.ok
        return ok[~ok["retest"]]

    return frame.memo("rows:fresh", build)


def fresh_scores(
    frame: AnalysisFrame, dimension: str | None = None, columns: list[str] | None = None
) -> pd.DataFrame:
    """Score rows that are not retests, of one ``dimension`` or of all: the same rows, order and
    index as ``scores[(scores["dimension"] == dimension) & ~scores["retest"]]``. The row
    positions are found once per frame and each call takes just those rows: no boolean mask
    over the whole table per call, and no copy of the (largest) table kept alive. ``columns``:
    only these columns (taking rows of the others costs as much as the ones read)."""

    def positions() -> dict[str | None, np.ndarray[Any, np.dtype[np.intp]]]:
        fresh = np.flatnonzero(~frame.scores["retest"].to_numpy(dtype=bool))
        dims = frame.scores["dimension"].take(fresh)
        split: dict[str | None, np.ndarray[Any, np.dtype[np.intp]]] = {None: fresh}
        # A categorical is grouped by its codes; a text column through Python strings.
        by = dims if isinstance(dims.dtype, pd.CategoricalDtype) else dims.to_numpy(dtype=object)
        groups = dims.groupby(by, sort=False, observed=True).indices
        split.update({str(dim): fresh[np.asarray(rows)] for dim, rows in groups.items()})
        return split

    found = frame.memo("scores:fresh_positions", positions).get(dimension)
    table = frame.scores if columns is None else frame.scores[columns]
    return table.iloc[:0] if found is None else table.take(found)


def split_by(table: pd.DataFrame, column: str) -> list[tuple[str, pd.DataFrame]]:
    """``[(str(key), part.drop(columns=column)) for key, part in table.groupby(column)]``:
    the same parts (rows, order, index). Where ``column`` is categorical each part is taken
    straight from ``table`` by the positions of its codes, without pandas' sorted copy of the
    whole table first (the largest memo's parts, a million records' score means, were twice
    its size at once)."""
    values = table[column]
    if not isinstance(values.dtype, pd.CategoricalDtype):
        return [(str(key), part.drop(columns=column)) for key, part in table.groupby(column)]
    rest = table.drop(columns=column)
    groups = values.groupby(values, observed=True).indices
    return [
        (str(key), rest.take(np.asarray(groups[key])))
        for key in values.cat.categories
        if key in groups
    ]
