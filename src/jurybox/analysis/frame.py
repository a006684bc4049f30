"""Records -> tidy pandas frames, the only input of the metric families.

Three tables, built in one pass over the records (the only per-record Python in the analysis):

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
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]
from numpy.typing import NDArray

from jurybox.analysis import frame_arrow
from jurybox.analysis._common import TOTAL, fresh_scores, group_numbers, in_values
from jurybox.analysis.labels import HumanLabels, build_labels
from jurybox.analysis.options import AnalysisOptions
from jurybox.io.judgments import LineBlock, RecordChunk
from jurybox.records import Item, JudgeRecord, Status

RETEST_SUFFIX = "|retest"
T = TypeVar("T")

_RECORD_COLUMNS = (
    "key",
    "query_id",
    "judge",
    "model",
    "vendor",
    "mode",
    "order",
    "status",
    "repeat",
    "retest",
    "criterion",
    "preference",
    "preferred_arm",
    "confidence",
    "verdict",
    "holistic_fallback",
    "local_judge",
    "batch_id",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "first_arm",
    "second_arm",
    "n_positions",
    "target_arm",
    "ranking",
    "positions_shown",
)
_SCORE_COLUMNS = ("rec", "arm", "position", "dimension", "score", "confidence", "gate_failed")


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


def judge_scores(frame: AnalysisFrame, dimension: str = TOTAL) -> pd.DataFrame:
    """Each judge's score of each response on one dimension: the mean over presentation orders
    and repeats (retests excluded). Columns: judge, family, query_id, arm, score, n_records."""

    def build() -> dict[str, pd.DataFrame]:
        keys = ["dimension", "judge", "family", "query_id", "arm"]
        rows = fresh_scores(frame, columns=[*keys, "score"])
        means = _group_means(rows, keys)
        return {str(d): part.drop(columns="dimension") for d, part in means.groupby("dimension")}

    found = frame.memo("judge_scores", build).get(dimension)
    if found is None:
        return pd.DataFrame(columns=["judge", "family", "query_id", "arm", "score", "n_records"])
    return found


def _group_means(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``rows.groupby(keys, as_index=False, sort=False).agg(score=mean, n_records=size)``,
    grouped by one integer per row where the keys are categoricals (``group_numbers``)."""
    alone = _singletons(rows, keys)
    if alone is not None:
        return alone
    numbers = group_numbers(rows, keys)
    if numbers is None:
        return rows.groupby(keys, as_index=False, sort=False).agg(
            score=("score", "mean"), n_records=("score", "size")
        )
    valid = numbers >= 0
    scores = rows["score"] if valid.all() else rows["score"][valid]
    stats_of = scores.groupby(numbers[valid]).agg(["mean", "size"])  # groups 0, 1, ...
    first = _first_rows(numbers)
    means = rows[keys].take(first).reset_index(drop=True)
    return means.assign(
        score=stats_of["mean"].to_numpy(), n_records=stats_of["size"].to_numpy(dtype=np.int64)
    )


def _singletons(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame | None:
    """``_group_means`` where every row is a group of its own (no key repeated, none missing:
    one score per judge, item, arm and dimension, as a run without repeats or both orders
    gives), found by one stable sort of the keys' codes instead of hashing a number per row
    twice; None otherwise. A group of one row: its mean is what pandas' sum over the group
    gives, ``0.0 + score`` (which turns -0.0 into 0.0), divided by 1 (NaN stays NaN)."""
    combined = np.zeros(len(rows), dtype=np.int64)
    span = 1
    for key in keys:
        dtype = rows[key].dtype
        if not isinstance(dtype, pd.CategoricalDtype):
            return None
        span *= len(dtype.categories)
        codes = np.asarray(rows[key].cat.codes)
        if span >= 2**62 or (len(codes) and codes.min() < 0):
            return None
        combined *= len(dtype.categories)
        combined += codes
    ordered = np.sort(combined, kind="stable")
    if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
        return None
    scores = (0.0 + rows["score"].to_numpy(dtype=float)) / 1.0
    means = rows[keys].reset_index(drop=True)
    return means.assign(score=scores, n_records=np.ones(len(rows), dtype=np.int64))


def _first_rows(numbers: NDArray[np.intp]) -> NDArray[np.intp]:
    """The first row of each group, groups numbered 0, 1, ... in order of first appearance (-1:
    no group): ``flatnonzero(~duplicated(numbers) & (numbers >= 0))``, without a hash table. A
    row starts its group exactly when its number exceeds every number before it."""
    if not len(numbers):
        return np.flatnonzero(numbers)
    before = np.maximum.accumulate(numbers)[:-1]
    return np.flatnonzero(numbers > np.concatenate(([-1], before)))


# Column i of the records table comes from field i of _SOURCE for the first _N_PLAIN columns.
_SOURCE = (
    "key", "query_id", "judge_name", "judge_model", "judge_vendor", "mode", "presentation_order",
    "status", "repeat", "retest", "criterion", "preference", "preferred_arm", "confidence",
    "verdict", "holistic_fallback", "local_judge", "batch_id", "cost_usd", "input_tokens",
    "output_tokens", "cached_input_tokens", "positions", "ranking", "scores",
    "confidences", "overall", "gate_failures", "positions_shown",
)  # fmt: skip
_N_PLAIN = 22  # the leading fields of _SOURCE copied as they are into the records table
_getter = operator.attrgetter(*_SOURCE)


class _Raw(NamedTuple):
    """The fields of one record the analysis reads, whatever the record's container."""

    key: Any
    query_id: Any
    judge_name: Any
    judge_model: Any
    judge_vendor: Any
    mode: Any
    presentation_order: Any
    status: Any
    repeat: Any
    retest: Any
    criterion: Any
    preference: Any
    preferred_arm: Any
    confidence: Any
    verdict: Any
    holistic_fallback: Any
    local_judge: Any
    batch_id: Any
    cost_usd: Any
    input_tokens: Any
    output_tokens: Any
    cached_input_tokens: Any
    positions: Any
    ranking: Any
    scores: Any
    confidences: Any
    overall: Any
    gate_failures: Any
    positions_shown: Any


def _none_if_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None  # a DataFrame round trip turns missing fields into NaN
    return value


def _raw(record: JudgeRecord | Mapping[str, Any]) -> _Raw:
    if isinstance(record, JudgeRecord):
        return _Raw._make(_getter(record))
    return _Raw._make(_none_if_nan(record.get(name)) for name in _SOURCE)


def _record_row(raw: _Raw) -> tuple[Any, ...]:
    positions: Mapping[str, str] = raw.positions or {}
    n = len(positions)
    ranking = raw.ranking
    return (
        *raw[:_N_PLAIN],
        positions.get("A"),
        positions.get("B"),
        n,
        positions.get("A") if n == 1 else None,
        tuple(ranking) if ranking else None,
        raw.positions_shown,
    )


def _score_rows(rec: int, raw: _Raw, out: list[tuple[Any, ...]]) -> None:
    """Append this ok record's dimension and total rows (positions mapped back from arms)."""
    letters = {arm: letter for letter, arm in (raw.positions or {}).items()}
    confidences: Mapping[str, Mapping[str, float]] = raw.confidences or {}
    gates = raw.gate_failures
    for arm, dims in (raw.scores or {}).items():
        conf = confidences.get(arm) or {}
        position = letters.get(arm)
        for dim, score in dims.items():
            if score is not None:
                out.append((rec, arm, position, dim, score, conf.get(dim), np.nan))
    for arm, total in (raw.overall or {}).items():
        if total is not None:
            failed = np.nan if gates is None else float(bool(gates.get(arm)))
            out.append((rec, arm, letters.get(arm), TOTAL, total, None, failed))


def _normalise_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """Status as text; preference as "A" / "B" / "tie" (derived from the arm when absent)."""
    frame["status"] = frame["status"].astype(str).str.removeprefix("Status.").str.lower()
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


def _iter_records(records: Iterable[JudgeRecord | Mapping[str, Any]] | pd.DataFrame) -> Any:
    if isinstance(records, pd.DataFrame):
        return iter(records.to_dict("records"))
    return iter(records)


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
    return pd.concat([scores, means[list(_SCORE_COLUMNS)]], ignore_index=True)


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


def _score_frame(score_rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    scores = pd.DataFrame(score_rows, columns=list(_SCORE_COLUMNS))
    scores["score"] = pd.to_numeric(scores["score"], errors="coerce").astype(float)
    scores["confidence"] = pd.to_numeric(scores["confidence"], errors="coerce").astype(float)
    scores["gate_failed"] = scores["gate_failed"].astype(float)
    return scores


def _rows_of(
    records: Iterable[_Raw], first: int = 0
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Record rows and score rows (``rec`` counted from ``first``): the per-record Python."""
    rows: list[tuple[Any, ...]] = []
    score_rows: list[tuple[Any, ...]] = []
    for rec, raw in enumerate(records, start=first):
        rows.append(_record_row(raw))
        if str(raw.status) == Status.OK.value and not raw.holistic_fallback:
            _score_rows(rec, raw, score_rows)
    return rows, score_rows


def _tables(
    records: Iterable[JudgeRecord | Mapping[str, Any]] | pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, score_rows = _rows_of(map(_raw, _iter_records(records)))
    frame = _normalise_labels(pd.DataFrame(rows, columns=list(_RECORD_COLUMNS)))
    frame.insert(0, "rec", np.arange(len(frame)))
    scores = _score_frame(score_rows)
    return frame, _finite_totals(scores)


def _finish_records(frame: pd.DataFrame, options: AnalysisOptions) -> pd.DataFrame:
    frame["ok"] = frame["status"] == Status.OK.value
    # Records written before the field existed saw both responses whenever they had two.
    shown = frame["positions_shown"]
    if shown.dtype != bool:  # a boolean column is its own answer (no Python call per row)
        frame["positions_shown"] = shown.map(lambda v: v is not False)
    frame["repeat"] = frame["repeat"].fillna(0).astype(int)
    for name in ("retest", "holistic_fallback", "local_judge"):
        frame[name] = frame[name].fillna(False).astype(bool)
    frame["query_id"] = frame["query_id"].astype(str)
    frame["judge"] = frame["judge"].astype(str)
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
    columns = ["query_id", "arm", "length", "author", "category", "difficulty", "normal"]
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
    records: Iterable[JudgeRecord | Mapping[str, Any]] | pd.DataFrame,
    *,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None = None,
    items: Sequence[Item] | None = None,
    options: AnalysisOptions | None = None,
) -> AnalysisFrame:
    """Build the tidy tables from records (JudgeRecord objects, their dicts, or a DataFrame of
    them), optional items (lengths, authors, metadata, human labels) and a labels mapping."""
    frame, scores = _tables(records)
    return _assemble(frame, scores, human=human, items=items, options=options)


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
        encoded = frame_arrow.sorted_categorical(values, object_categories=object_categories)
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


# --- streamed: a judgments file's checked lines, chunk by chunk, without record objects ------

# What ``JudgeRecord`` gives a field that a line leaves out.
_DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in dataclasses.fields(JudgeRecord)
    if f.default is not dataclasses.MISSING
}


def _raw_line(data: Mapping[str, Any]) -> _Raw:
    """A checked line's fields as the record ``JudgeRecord.from_dict`` makes of it would hold
    them (no NaN-to-None here, unlike a DataFrame row's: JSON's NaN stays NaN in a record)."""
    return _Raw._make([data.get(name, _DEFAULTS.get(name)) for name in _SOURCE])


@dataclass(frozen=True)
class RecordTables:
    """The records and scores tables of a judgments file before options and labels apply
    (``frame_from_tables`` finishes them), which lines they kept, and what the app reads of the
    lines beside them: each line's byte offset, the arms shown, the judges' named families."""

    records: pd.DataFrame
    scores: pd.DataFrame
    kept: NDArray[np.intp]  # for each row of ``records``: its position among the lines read
    offsets: NDArray[np.int64]  # byte offset of each line read
    arms: frozenset[Any]  # every arm of every line's positions (a duplicate shows the same)
    named_families: tuple[tuple[int, str, str], ...]  # (line read, judge, family) where named

    @property
    def total(self) -> int:
        """Lines read."""
        return len(self.offsets)

    @property
    def dropped(self) -> int:
        """Duplicate lines left out (same key as a kept one)."""
        return self.total - len(self.kept)

    def judge_families(self) -> dict[str, str]:
        """Judge name -> the `family` its config gave (recorded per record), as the kept
        records say it in their order (the last one wins); other judges use their vendor."""
        rank = np.full(self.total, -1, dtype=np.int64)
        rank[self.kept] = np.arange(len(self.kept))
        named = sorted((rank[n], j, f) for n, j, f in self.named_families if rank[n] >= 0)
        return {judge: family for _, judge, family in named}


class _Read:
    """What ``record_tables`` gathers part by part."""

    def __init__(self) -> None:
        self.parts: list[pd.DataFrame] = []
        self.score_parts: list[pd.DataFrame] = []
        self.offsets: list[int] = []
        self.arms: set[Any] = set()
        self.named: list[tuple[int, str, str]] = []

    def add_rows(self, chunk: RecordChunk) -> None:
        first = len(self.offsets)
        rows, score_rows = _rows_of(map(_raw_line, chunk.rows), first=first)
        self.parts.append(pd.DataFrame(rows, columns=list(_RECORD_COLUMNS)))
        self.score_parts.append(_score_frame(score_rows))
        for line, data in enumerate(chunk.rows, start=first):
            self.arms.update((data["positions"] or {}).values())
            if data.get("judge_family"):
                self.named.append((line, data["judge_name"], data["judge_family"]))
        self.offsets.extend(chunk.offsets)

    def add_block(self, block: LineBlock, table: pa.Table | None) -> None:
        """Add a block of lines and ``parse_block``'s table of it (None: read line by line)."""
        if table is None:
            self.add_rows(block.records())
            return
        first = len(self.offsets)
        self.parts.append(frame_arrow.record_columns(table))
        scores = frame_arrow.score_columns(table, first)
        self.score_parts.append(_score_frame([]) if scores is None else scores)
        arms, named = frame_arrow.block_facts(table, first)
        self.arms |= arms
        self.named += named
        self.offsets.extend(block.offsets)


# Told each block of lines as pyarrow parsed it, every column (None: read line by line).
BlockParsed = Callable[[LineBlock, pa.Table | None], None]


def record_tables(
    parts: Iterable[RecordChunk | LineBlock], *, parsed: BlockParsed | None = None
) -> RecordTables:
    """``build_frame``'s tables from a judgments file read in parts: blocks of lines
    (``read_line_blocks``: parsed by pyarrow, see ``frame_arrow``) or chunks of checked
    objects (``read_record_chunks``). One record per key is kept as ``read_unique_records``
    keeps them (the last complete one, else the last one, in the order the keys first appear).
    Only one part's rows are held at a time; each becomes typed columns (strings in Arrow).
    ``parsed`` is told each block, in order, in the reading thread: a reader of the same
    blocks beside this one (the report's records pass) need not parse them again."""
    read = _Read()
    for part, table in _parsed_ahead(parts, parsed):
        if isinstance(part, LineBlock):
            read.add_block(part, table)
        else:
            read.add_rows(part)
    records = _concat_typed(read.parts or [pd.DataFrame(columns=list(_RECORD_COLUMNS))])
    scores = _concat_typed(read.score_parts or [_score_frame([])])
    read.parts.clear()  # the parts are copied: free them before the next copies
    read.score_parts.clear()
    kept = _kept_rows(records)
    frame, kept_scores = _keep(records, scores, kept)
    offsets = np.asarray(read.offsets, dtype=np.int64)
    return RecordTables(frame, kept_scores, kept, offsets, frozenset(read.arms), tuple(read.named))


def _next_parsed(
    parts: Iterator[RecordChunk | LineBlock], parsed: BlockParsed | None
) -> tuple[Any, pa.Table | None] | None:
    """The next part and, for a block of lines, pyarrow's table of it; None at the end."""
    part = next(parts, None)
    if part is None:
        return None
    if not isinstance(part, LineBlock):
        return part, None
    whole = frame_arrow.parse_whole_block(part)
    if parsed is not None:
        parsed(part, whole)
    return part, frame_arrow.used_columns(whole)


def _parsed_ahead(
    parts: Iterable[RecordChunk | LineBlock], parsed: BlockParsed | None = None
) -> Iterator[tuple[RecordChunk | LineBlock, pa.Table | None]]:
    """The parts, each with its parsed table, the next one read and parsed in a worker thread
    while the caller turns this one into rows: reading the file and pyarrow's parse release
    the GIL, so on two cores they overlap the Python that cuts the columns. One part at a
    time is asked of ``parts``, in order; an error reading or parsing one is raised when the
    caller reaches that part, as a plain loop would raise it."""
    source = iter(parts)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="jurybox-parse") as pool:
        ahead = pool.submit(_next_parsed, source, parsed)
        while (found := ahead.result()) is not None:
            ahead = pool.submit(_next_parsed, source, parsed)
            yield found


def frame_from_tables(
    tables: RecordTables,
    *,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None = None,
    items: Sequence[Item] | None = None,
    options: AnalysisOptions | None = None,
) -> AnalysisFrame:
    """The frame ``build_frame`` makes of the same records (the tables are used up: finished in
    place, not copied)."""
    return _assemble(tables.records, tables.scores, human=human, items=items, options=options)


def _concat_typed(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """One table of per-chunk ones, each column typed as one DataFrame of all the rows types
    it: a column two chunks typed differently (all missing in one, say) is typed again."""
    filled = [part for part in parts if len(part)] or parts[:1]
    if len(filled) == 1:
        return filled[0]
    dtypes = [part.dtypes.to_dict() for part in filled]  # once per part, not per column
    mixed = [c for c in filled[0].columns if len({types[c] for types in dtypes}) > 1]
    if mixed:
        filled = [part.astype(dict.fromkeys(mixed, object)) for part in filled]
    out = pd.concat(filled, ignore_index=True)
    for column in mixed:
        out[column] = out[column].infer_objects()
    return out


def _kept_rows(records: pd.DataFrame) -> NDArray[np.intp]:
    """Row of the kept record of each key, keys in order of first appearance."""
    codes, _ = pd.factorize(records["key"], sort=False)
    position = pd.Series(np.arange(len(records)))
    last = position.groupby(codes).max()
    complete = (records["status"] != Status.PROVIDER_ERROR.value).to_numpy()
    last_complete = position[complete].groupby(codes[complete]).max()
    kept = last_complete.reindex(last.index).fillna(last)
    return np.asarray(kept.to_numpy(dtype=np.intp), dtype=np.intp)


def _keep(
    records: pd.DataFrame, scores: pd.DataFrame, kept: NDArray[np.intp]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The kept records renumbered 0.. in order, and their scores (record by record)."""
    if len(kept) != len(records) or not np.array_equal(kept, np.arange(len(records))):
        renumber = np.full(len(records), -1, dtype=np.int64)  # line read -> kept row, or -1
        renumber[kept] = np.arange(len(kept))
        records = records.take(kept).reset_index(drop=True)
        if len(scores):
            rec = renumber[scores["rec"].to_numpy(dtype=np.int64)]
            scores = scores.assign(rec=rec)[rec >= 0]
            scores = scores.iloc[np.argsort(scores["rec"].to_numpy(), kind="stable")]
    frame = _normalise_labels(records)
    frame.insert(0, "rec", np.arange(len(frame)))
    return frame, _finite_totals(scores)


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
