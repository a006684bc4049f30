"""Records -> tidy pandas frames, the only input of the metric families.

Three tables, cut column by column from the record table (``io/record_table.py``; the cutting is
``frame_columns.py``):

``records``  one row per record, every status. Columns: ``rec`` (row id), ``key``, ``base_key``
    (key without ``|retest``), ``query_id``, ``judge``, ``model``, ``vendor``, ``family``,
    ``mode``, ``order`` (presentation order name), ``first_arm`` (arm at position A),
    ``n_positions``, ``status``, ``ok``, ``repeat``, ``retest``, ``criterion``, ``preference``
    (position "A" / "B" / "tie"), ``preferred_arm`` (arm or "tie"), ``confidence``
    (pairwise verdict confidence), ``verdict`` ("Pass" / "Fail"), ``target_arm`` (the arm of a
    single-response judgment), ``ranking`` (tuple of arms, best first), ``holistic_fallback``,
    ``local_judge``, ``batch_id`` (the provider batch that answered it), ``cost_usd``,
    ``input_tokens``, ``output_tokens``, ``cached_input_tokens`` (a batch saving is priced from
    them), ``positions_shown`` (False: each response was scored alone, so a pairwise verdict
    derived from the scores says nothing about position).
``scores``   one row per ok record x arm x dimension, plus one ``TOTAL`` row per ok record x arm
    (the record's ``overall``; without one, the unweighted mean of its dimensions). Columns:
    ``rec``, ``query_id``, ``judge``, ``family``, ``order``, ``repeat``, ``retest``, ``arm``,
    ``position`` (letter the arm was shown at), ``dimension``, ``score``, ``confidence``,
    ``gate_failed`` (TOTAL rows: 1.0 / 0.0, NaN when the record has no gate information).
``items``    one row per item x arm: ``query_id``, ``arm``, ``length`` (characters), ``author``,
    ``category``, ``difficulty``, ``normal``.

Holistic-fallback records (the judge ignored the rubric) keep their row in ``records`` but give
no scores: they are excluded from every score metric and counted in the report.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]

from jurybox.analysis._common import TOTAL, fresh_scores, in_values, split_by
from jurybox.analysis.frame_columns import (
    SCORE_COLUMNS,
    record_columns,
    score_columns,
    sorted_categorical,
)
from jurybox.analysis.labels import HumanLabels, build_labels
from jurybox.analysis.options import AnalysisOptions
from jurybox.io.record_fields import record_fields
from jurybox.io.record_table import Judgments, records_table
from jurybox.records import ARMS_ARE_TREATMENTS, Item, JudgeRecord, Status

RETEST_SUFFIX = "|retest"
T = TypeVar("T")


@dataclass(frozen=True)
class AnalysisFrame:
    """The tidy tables every metric family reads (see the module docstring)."""

    records: pd.DataFrame
    scores: pd.DataFrame
    items: pd.DataFrame
    labels: HumanLabels
    arms: tuple[str, ...]
    dimensions: tuple[str, ...]
    # Judge scores that were no finite number (NaN, ±inf): set apart from ``scores`` and named
    # in the summary; None when there were none.
    non_finite: pd.DataFrame | None = None
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, name: str, build: Callable[[], T]) -> T:
        """Derived tables computed once per frame; callers treat them as read-only."""
        if name not in self.cache:
            self.cache[name] = build()
        found: T = self.cache[name]
        return found

    @property
    def ok(self) -> pd.DataFrame:
        """Records that enter the metrics (status ok), filtered once per frame: each boolean
        filter copies every column, a fifth of a second at a million records."""
        return self.memo("rows:ok", lambda: self.records[self.records["ok"]])

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(sorted(self.records["judge"].unique()))


def item_subsets(frame: AnalysisFrame) -> dict[str, frozenset[str]]:
    """Subset name -> its item ids, where the items name two or more subsets (metadata
    ``subset``, e.g. an LLMBar tree imported whole); else empty."""
    items = frame.items
    named = items.dropna(subset=["subset"]) if not items.empty else items
    if named.empty or named["subset"].nunique() < 2:
        return {}
    return {
        str(name): frozenset(part["query_id"].astype(str))
        for name, part in named.groupby("subset", sort=True)
    }


def restricted(frame: AnalysisFrame, item_ids: frozenset[str]) -> AnalysisFrame:
    """The frame of the records, scores, items and labels of ``item_ids`` only."""

    def keep(table: pd.DataFrame) -> pd.DataFrame:
        if table.empty:
            return table
        chosen = table[table["query_id"].astype(str).isin(item_ids)]
        if isinstance(chosen["query_id"].dtype, pd.CategoricalDtype):
            chosen = chosen.assign(query_id=chosen["query_id"].cat.remove_unused_categories())
        return chosen

    labels = dataclasses.replace(
        frame.labels,
        preferences=keep(frame.labels.preferences),
        annotators=keep(frame.labels.annotators),
        scores=keep(frame.labels.scores),
        verdicts=keep(frame.labels.verdicts),
        design=keep(frame.labels.design),
    )
    records, scores = keep(frame.records), keep(frame.scores)
    return AnalysisFrame(records, scores, keep(frame.items), labels, frame.arms, frame.dimensions)


def judge_scores(frame: AnalysisFrame, dimension: str = TOTAL) -> pd.DataFrame:
    """Each judge's score of each response on one dimension: the mean over presentation orders
    and repeats (retests excluded). Columns: judge, family, query_id, arm, score, n_records."""

    def build() -> dict[str, pd.DataFrame]:
        keys = ["dimension", "judge", "family", "query_id", "arm"]
        means = (
            fresh_scores(frame, columns=[*keys, "score"])
            .groupby(keys, as_index=False, sort=False)
            .agg(score=("score", "mean"), n_records=("score", "size"))
        )
        return dict(split_by(means, "dimension"))

    found = frame.memo("judge_scores", build).get(dimension)
    if found is None:
        return pd.DataFrame(columns=["judge", "family", "query_id", "arm", "score", "n_records"])
    return found


def _normalise_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """Preference as "A" / "B" / "tie" (derived from the arm when absent)."""
    pref = frame["preference"].astype("string").str.strip()
    pref = pref.str.upper().where(~(pref.str.lower() == "tie").fillna(False), "tie")
    arm = frame["preferred_arm"]
    is_tie = arm.astype("string").str.lower() == "tie"
    frame["preferred_arm"] = arm.where(~is_tie.fillna(False), "tie")
    derived = pd.Series(np.select(
        [is_tie.fillna(False), arm == frame["first_arm"], arm == frame["second_arm"]],
        ["tie", "A", "B"], default=""), index=frame.index)  # fmt: skip
    frame["preference"] = pref.fillna(derived.replace("", pd.NA)).astype(object)
    frame["preference"] = frame["preference"].where(frame["preference"].notna(), None)
    return frame.drop(columns=["second_arm"])


def _fill_totals(scores: pd.DataFrame) -> pd.DataFrame:
    """Give every (record, arm) with dimension scores but no overall a TOTAL row: the unweighted
    mean of its dimensions (the rubric's weights are not in the records)."""
    is_total = np.asarray(scores["dimension"] == TOTAL, dtype=bool)
    arms, _ = pd.factorize(scores["arm"], use_na_sentinel=False)  # a missing arm is one too
    pair = scores["rec"].to_numpy(dtype=np.int64) * (arms.max(initial=0) + 1) + arms
    with_total = np.zeros(pair.max(initial=0) + 1, dtype=bool)
    with_total[pair[is_total]] = True
    lacking = ~is_total & ~with_total[pair]  # a dimension row of a (rec, arm) without a total
    if not lacking.any():
        return scores
    missing: pd.DataFrame = scores[lacking]
    means = missing.groupby(["rec", "arm"], as_index=False).agg(
        position=("position", "first"), score=("score", "mean")
    )
    means = means.assign(dimension=TOTAL, confidence=np.nan, gate_failed=np.nan)
    return pd.concat([scores, means[list(SCORE_COLUMNS)]], ignore_index=True)


def _finite_totals(scores: pd.DataFrame) -> pd.DataFrame:
    """``_fill_totals`` of the finite scores, the others (NaN, ±inf) kept after them for
    ``_assemble`` to set apart and name; a (record, arm) with such a dimension gets no mean."""
    values = scores["score"].to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if not bad.any():
        return _fill_totals(scores)
    good = scores[~bad]
    filled = _fill_totals(good)
    computed = filled.iloc[len(good) :]
    tainted = pd.MultiIndex.from_frame(scores.loc[bad, ["rec", "arm"]])
    mine = pd.MultiIndex.from_frame(computed[["rec", "arm"]]).isin(tainted)
    parts = [filled.iloc[: len(good)], computed[~mine], scores[bad]]
    together: pd.DataFrame = pd.concat(parts, ignore_index=True)
    return together


def _tables(table: pa.Table) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = _normalise_labels(record_columns(table))
    frame.insert(0, "rec", np.arange(len(frame)))
    return frame, _finite_totals(score_columns(table))


def _finish_records(frame: pd.DataFrame, options: AnalysisOptions) -> pd.DataFrame:
    frame["ok"] = frame["status"] == Status.OK.value
    frame["base_key"] = frame["key"].astype(str).str.removesuffix(RETEST_SUFFIX)
    vendor = frame["vendor"].fillna("").astype(str)
    if not options.judge_families:  # no judge named: every family is the vendor
        frame["family"] = vendor
        return frame
    named = frame["judge"].isin(list(options.judge_families))
    mapped = frame["judge"].map(dict(options.judge_families)).astype(object)
    frame["family"] = vendor.where(~named, mapped).astype(str)
    return frame


def _items_table(items: Sequence[Item] | None) -> pd.DataFrame:
    columns = [
        "query_id",
        "arm",
        "length",
        "author",
        "category",
        "difficulty",
        "normal",
        "treatment_arms",
        "subset",
    ]
    rows = []
    for item in items or ():
        meta = item.metadata or {}
        for arm, text in item.responses.items():
            rows.append(
                (
                    str(item.id),
                    arm,
                    len(text or ""),
                    (item.authors or {}).get(arm),
                    meta.get("category"),
                    meta.get("difficulty"),
                    bool(meta.get("normal", False)),
                    meta.get(ARMS_ARE_TREATMENTS) is not False,
                    meta.get("subset"),
                )
            )
    return pd.DataFrame(rows, columns=columns)


def resolve_arms(
    records: pd.DataFrame, items: Sequence[Item] | None, options: AnalysisOptions
) -> tuple[str, ...]:
    """Arms in analysis order, control first (see ``AnalysisOptions.control_arm``)."""
    seen: list[str] = []
    if items:
        seen.extend(items[0].arms)
    for column in ("first_arm", "preferred_arm", "target_arm"):
        seen.extend(a for a in records[column].dropna().unique() if a != "tie")
    for ranking in records["ranking"].dropna():
        seen.extend(ranking)
    arms = list(dict.fromkeys(str(a) for a in seen))
    if not items and "control" in arms:
        arms.remove("control")
        arms.insert(0, "control")
    for preferred in (options.treatment_arm, options.control_arm):
        if preferred is not None:
            if preferred in arms:
                arms.remove(preferred)
            arms.insert(0, preferred)
    return tuple(arms)


def build_frame(
    records: Iterable[JudgeRecord | Mapping[str, Any]] | pd.DataFrame | Judgments,
    *,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None = None,
    items: Sequence[Item] | None = None,
    options: AnalysisOptions | None = None,
) -> AnalysisFrame:
    """Build the tidy tables from records (a judgments file read by ``read_judgments``, or
    JudgeRecord objects, their dicts, or a DataFrame of them), optional items (lengths,
    authors, metadata, human labels) and a labels mapping."""
    if not isinstance(records, Judgments):
        rows = _frame_rows(records) if isinstance(records, pd.DataFrame) else records
        records = records_table(rows)
    frame, scores = _tables(records.table)
    return _assemble(frame, scores, human=human, items=items, options=options)


def _frame_rows(records: pd.DataFrame) -> Iterable[dict[str, Any]]:
    """A DataFrame's rows as records: a DataFrame fills missing values with NaN, turns a
    column of integers with one missing into floats (and ``pd.read_json`` the ``timestamp``
    text into a time); all undone."""
    integers = {spec.name for spec in record_fields() if spec.kind.base is int}
    for row in records.to_dict("records"):
        yield {str(name): _cell(value, name in integers) for name, value in row.items()}


def _cell(value: Any, integer: bool) -> Any:
    if value is pd.NaT:
        return None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if integer and value.is_integer():
            return int(value)
    return value


def judge_families(judgments: Judgments) -> dict[str, str]:
    """Judge name -> the `family` its config gave (recorded per record), as the records say
    it in their order (the last one wins); other judges use their vendor."""
    table = judgments.table
    named = pc.fill_null(pc.not_equal(table.column("judge_family"), ""), False)
    pairs = table.select(["judge_name", "judge_family"]).filter(named).to_pandas()
    first = pairs.drop_duplicates("judge_name", keep="first")["judge_name"].tolist()
    last = pairs.drop_duplicates("judge_name", keep="last").set_index("judge_name")
    return {str(judge): str(last.loc[judge, "judge_family"]) for judge in first}


def shown_arms(judgments: Judgments) -> frozenset[str]:
    """Every arm the records were shown (their ``positions``)."""
    positions = judgments.table.column("positions")
    values = [chunk.items for chunk in positions.chunks] or [pa.array([], pa.string())]
    return frozenset(pc.unique(pa.chunked_array(values, pa.string())).drop_null().to_pylist())


# Few distinct values over millions of rows: one byte code per row instead of a string each
# (a million-record score table drops by gigabytes). Categories are sorted, so sorting and
# grouping by them orders as by the strings.
_RECORD_CATEGORIES = ("model", "vendor", "family", "mode", "order")
_SCORE_CATEGORIES = ("arm", "position", "dimension")
# The score table's copies of the records' keys: ~7 score rows per record, grouped, pivoted and
# merged on by every score metric, so codes there (the records table keeps the text).
_SCORE_KEY_CATEGORIES = ("query_id", "judge")


def _as_categories(
    table: pd.DataFrame, columns: Iterable[str], *, object_categories: bool = False
) -> pd.DataFrame:
    """``columns`` of ``table`` (in place) as categoricals with sorted string categories;
    a column that holds anything but strings and missing values stays as it is.
    ``object_categories``: categories held as Python strings, whose index pandas hashes once
    and keeps (many distinct keys looked up again and again, as item ids are)."""
    for name in columns:
        values = table[name]
        encoded = _sorted_categorical(values, object_categories=object_categories)
        if encoded is not None:
            table[name] = encoded
            continue
        present = values.dropna().unique()
        if isinstance(values.dtype, pd.CategoricalDtype) or not all(
            isinstance(v, str) for v in present
        ):
            continue
        categories = pd.Index(sorted(present), dtype=object if object_categories else None)
        table[name] = pd.Categorical(values, categories=categories)
    return table


def _sorted_categorical(values: pd.Series, *, object_categories: bool) -> pd.Categorical | None:
    """``pd.Categorical(values, categories=sorted(distinct values))`` of an Arrow-backed text
    column, encoded by pyarrow (hashing in C++; pandas hashes each row through Python objects,
    seconds for a million-record score table); None for any other column."""
    if not (isinstance(values.dtype, pd.StringDtype) and values.dtype.storage == "pyarrow"):
        return None
    array = pa.array(values.array)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    encoded = pa.chunked_array([pc.dictionary_encode(array)])
    return sorted_categorical(encoded, object_categories=object_categories)


def _assemble(
    frame: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None,
    items: Sequence[Item] | None,
    options: AnalysisOptions | None,
) -> AnalysisFrame:
    options = options or AnalysisOptions()
    frame = _as_categories(_finish_records(frame, options), _RECORD_CATEGORIES)
    keep = ["rec", "query_id", "judge", "family", "order", "repeat", "retest"]
    dims = [d for d in scores["dimension"].unique() if d != TOTAL]  # in order of appearance
    keys = _as_categories(frame[keep].copy(), _SCORE_KEY_CATEGORIES, object_categories=True)
    scores = _as_categories(scores, _SCORE_CATEGORIES).merge(keys, on="rec", how="left")
    scores, bad = _set_apart(scores)
    arms = resolve_arms(frame, items, options)
    labels = build_labels(items, human, arms_by_query=_arms_by_query(frame, items))
    return AnalysisFrame(frame, scores, _items_table(items), labels, arms, tuple(dims), bad)


def _set_apart(scores: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The finite scores, and the NaN / infinite ones (None when there are none)."""
    finite = np.isfinite(scores["score"].to_numpy(dtype=float))
    if finite.all():
        return scores, None
    return scores[finite].reset_index(drop=True), scores[~finite].reset_index(drop=True)


def _arms_by_query(records: pd.DataFrame, items: Sequence[Item] | None) -> dict[str, list[str]]:
    """Arms known for each query: from items, else from single-response records."""
    found: dict[str, list[str]] = {str(item.id): list(item.responses) for item in items or ()}
    # Each query's distinct arms in order of appearance, queries in sorted order (as a
    # groupby's ``unique`` gives them, without its Python call per query).
    pairs = records[["query_id", "target_arm"]].dropna(subset=["target_arm"])
    if found:  # the items' own arms win: only queries without an item are looked at
        # Those queries found among the distinct ids (hashed by pyarrow), then their rows:
        # not a lookup of every record's id among the items'.
        unknown = [q for q in pairs["query_id"].unique().tolist() if q not in found]
        pairs = pairs[in_values(pairs["query_id"], unknown)] if unknown else pairs.iloc[:0]
    pairs = pairs.drop_duplicates()
    singles: dict[str, list[str]] = {}
    pairs = pairs.sort_values("query_id", kind="stable")
    for qid, arm in zip(pairs["query_id"].tolist(), pairs["target_arm"].tolist(), strict=True):
        singles.setdefault(str(qid), []).append(str(arm))
    for qid, arms in singles.items():
        found.setdefault(qid, arms)
    return found
