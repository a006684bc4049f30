"""Per-item rows of the explorer: the item's text, its label, every judgment of it, and flags.

The flags are computed from the same analysis tables as the report's counts, so a count and the
filtered view it links to always agree:

``flipped``  the judge's verdict changed with the presentation order, both orders judged
    successfully (``order_pairs``, as swap consistency: flipped = pairs - consistent).
``wrong``    a judgment of the item that did not give the gold (or human) label, a failed one
    included (as "correct in both orders": wrong = pairs - correct in both).
``failed``   a judgment not ok, or one that fell back to a holistic score (as the appendix).
``disagree`` the judges' consolidated verdicts differ (an order flip is a tie) — an item flag.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa  # type: ignore[import-untyped]

from jurybox.analysis import AnalysisFrame
from jurybox.analysis.calibration import gold_preferences
from jurybox.analysis.pairs import consolidated, order_pairs, pairwise_records
from jurybox.io.record_table import Judgments, MapEntries, records_table
from jurybox.records import Item, JudgeRecord, Status
from jurybox.reporting.explorer.calls import REASON_CHARS, TEXT_CHARS, call_words, cut_text
from jurybox.reporting.explorer.links import FILTERS, Filter
from jurybox.reporting.view.format import MISSING, fmt_num

FLAG_BITS: dict[Filter, int] = {"flipped": 1, "wrong": 2, "failed": 4}


@dataclass(frozen=True)
class Judgment:
    """One record of an item as the explorer shows it: what the judge decided, then how the
    call went (parse method, tokens, latency, cost), its raw answer and the prompt it was sent
    (where the report embeds prompts)."""

    judge: str
    order: str
    verdict: str
    confidence: str
    reasoning: str
    status: str
    parse: str = ""
    tokens: str = ""
    latency: str = ""
    cost: str = ""
    raw: str = ""
    prompt: str = ""

    def cells(self) -> list[str]:
        """The judgment as the page's JSON holds it (``explorer.js`` reads it by position)."""
        return [
            self.order, self.verdict, self.confidence, self.reasoning, self.status,
            self.parse, self.tokens, self.latency, self.cost, self.raw, self.prompt,
        ]  # fmt: skip


@dataclass
class ItemRow:
    """One item: its text, its gold label, its judgments and per-judge flags."""

    id: str
    question: str = ""
    responses: dict[str, str] = field(default_factory=dict)
    gold: str | None = None
    judgments: list[Judgment] = field(default_factory=list)
    flags: dict[str, int] = field(default_factory=dict)  # judge -> FLAG_BITS or-ed
    disagree: bool = False

    def has(self, filter: Filter, judge: str | None = None) -> bool:
        """Whether the item is in the filtered view (of one judge, or of any judge)."""
        if filter == "disagree":
            return self.disagree
        bit = FLAG_BITS[filter]
        judges = [judge] if judge is not None else list(self.flags)
        return any(self.flags.get(j, 0) & bit for j in judges)


@dataclass(frozen=True)
class ExplorerData:
    """Every item row, the judges in report order, and the label each item is checked against."""

    judges: tuple[str, ...]
    rows: list[ItemRow]
    label_kind: str  # "gold", "human" or "" when no label

    def count(self, filter: Filter, judge: str | None = None) -> int:
        """How many items the view ``#items?judge=..&filter=..`` shows."""
        return sum(row.has(filter, judge) for row in self.rows)

    def to_json(self) -> dict[str, Any]:
        """The page's data: short keys, since 10,000 items are embedded at once."""
        return {
            "judges": list(self.judges),
            "filters": list(FILTERS),
            "bits": dict(FLAG_BITS),
            "label": self.label_kind,
            "items": [_row_json(row, self.judges) for row in self.rows],
        }


def _row_json(row: ItemRow, judges: Sequence[str]) -> dict[str, Any]:
    by_judge: dict[str, list[list[str]]] = defaultdict(list)
    for j in row.judgments:
        by_judge[j.judge].append(j.cells())
    return {
        "id": row.id,
        "q": row.question,
        "r": [[arm, text] for arm, text in row.responses.items()],
        "g": row.gold,
        "d": int(row.disagree),
        "f": [row.flags.get(judge, 0) for judge in judges],
        "v": [by_judge.get(judge, []) for judge in judges],
    }


def verdict_words(
    ranking: Sequence[str] | None,
    verdict: str | None,
    positions: Sequence[str | None],
    preferred_arm: str | None,
    overall: Mapping[str, float] | None,
) -> str:
    """What the judge decided, mapped back to arms, whatever the mode (``positions``: the arms
    shown, in the record's order)."""
    if ranking:
        return " > ".join(ranking)
    if verdict is not None:
        target = positions[0] if positions else None
        return f"{verdict} ({target})" if len(positions) == 1 else verdict
    if preferred_arm is not None:
        return preferred_arm
    if overall:
        return ", ".join(f"{arm} {fmt_num(score)}" for arm, score in overall.items())
    return MISSING


def mean_words(total: float, count: int) -> str:
    """A mean confidence as the explorer shows it; "" of none."""
    return fmt_num(total / count) if count else ""


def reasoning_words(
    preference_reasoning: str | None, raw_response: str | None, error: str | None
) -> str:
    """What the explorer shows as a judgment's reasoning: the judge's, else its raw answer,
    else the error; cut at ``REASON_CHARS``."""
    return cut_text(preference_reasoning or raw_response or error, REASON_CHARS)


def order_words(presentation_order: str, retest: bool, repeat: int, criterion: str | None) -> str:
    """Which call of the item a judgment was: its order, retest, repeat and criterion."""
    order = presentation_order + (" (retest)" if retest else "")
    if repeat:
        order += f" r{repeat}"
    if criterion:
        order += f" [{criterion}]"
    return order


# The record fields the explorer shows (``shown_block``).
EXPLORER_FIELDS = (
    "key", "query_id", "judge_name", "presentation_order", "retest", "repeat", "criterion",
    "ranking", "verdict", "positions", "preferred_arm", "overall", "confidence", "confidences",
    "preference_reasoning", "raw_response", "error", "status", "holistic_fallback",
    "parse_method", "input_tokens", "output_tokens", "latency_ms", "cost_usd",
)  # fmt: skip


@dataclass(frozen=True)
class ShownBlock:
    """Consecutive records as the explorer shows them, field by field (row ``i`` of each list
    is one record): a million records make no object each."""

    query_ids: list[str]
    judges: list[str]
    orders: list[str]
    verdicts: list[str]
    confidences: list[str]
    reasonings: list[str]
    statuses: list[str]
    parses: list[str]
    tokens: list[str]
    latencies: list[str]
    costs: list[str]
    raws: list[str]
    keys: list[str]

    def rows(self) -> Iterator[tuple[str, ...]]:
        """Each record as a tuple: item id, judge, the cells of ``Judgment`` but the prompt
        (in order), and its key."""
        return zip(
            self.query_ids, self.judges, self.orders, self.verdicts, self.confidences,
            self.reasonings, self.statuses, self.parses, self.tokens, self.latencies,
            self.costs, self.raws, self.keys, strict=True,
        )  # fmt: skip

    def judgments(self, prompts: Mapping[str, str] | None = None) -> Iterator[tuple[str, Judgment]]:
        """Each record's item id and ``Judgment`` (with its prompt, by record key, where
        ``prompts`` has it)."""
        sent = prompts or {}
        for (
            qid,
            judge,
            order,
            verdict,
            conf,
            why,
            status,
            parse,
            tokens,
            took,
            cost,
            raw,
            key,
        ) in self.rows():
            said = (judge, order, verdict, conf, why, status, parse, tokens, took, cost, raw)
            yield qid, Judgment(*said, prompt=sent.get(key, ""))


def shown_block(part: pa.Table) -> ShownBlock:
    """What the explorer shows of each record of ``part`` (a slice of the record table with
    ``EXPLORER_FIELDS``): the mappings read column by column, the rest row by row."""
    col = {name: part.column(name).to_pylist() for name in _PLAIN_FIELDS}
    orders = _known(order_words)
    order_keys = zip(
        col["presentation_order"], col["retest"], col["repeat"], col["criterion"], strict=True
    )
    statuses = zip(col["status"], col["holistic_fallback"], strict=True)
    return ShownBlock(
        query_ids=col["query_id"],
        judges=col["judge_name"],
        orders=[orders(*key) for key in order_keys],
        verdicts=_verdicts(part, col),
        confidences=[
            own or mean
            for own, mean in zip(col["confidence"], _mean_confidences(part), strict=True)
        ],
        reasonings=list(
            map(reasoning_words, col["preference_reasoning"], col["raw_response"], col["error"])
        ),
        statuses=[
            "holistic fallback" if status == Status.OK.value and fallback else status
            for status, fallback in statuses
        ],
        **call_words(col),
    )


_PLAIN_FIELDS = tuple(
    name for name in EXPLORER_FIELDS if name not in ("positions", "overall", "confidences")
)


def _known(words: Callable[..., str]) -> Callable[..., str]:
    """``words``, each distinct call worked out once (few distinct orders or scores)."""
    known: dict[tuple[Any, ...], str] = {}

    def cached(*key: Any) -> str:
        text = known.get(key)
        if text is None:
            text = known[key] = words(*key)
        return text

    return cached


def _verdicts(part: pa.Table, col: Mapping[str, list[Any]]) -> list[str]:
    """``verdict_words`` of each record."""
    shown = MapEntries(part.column("positions"))
    first = [None] * part.num_rows
    for row, arm in zip(shown.rec[::-1].tolist(), shown.items.to_pylist()[::-1], strict=True):
        first[row] = arm  # the first one last
    overall = _overall_texts(MapEntries(part.column("overall")))
    rows = zip(
        col["ranking"], col["verdict"], shown.lengths.tolist(), first, col["preferred_arm"],
        overall, strict=True,
    )  # fmt: skip
    return [
        text
        if text is not None and not ranking and verdict is None and preferred is None
        else verdict_words(ranking, verdict, (arm,) * count, preferred, None)
        for ranking, verdict, count, arm, preferred, text in rows
    ]


def _overall_texts(overall: MapEntries) -> list[str | None]:
    """Per record, its ``overall`` as ``verdict_words`` writes it where that is what it shows
    (``"arm 7.000, ..."``), else None (``verdict_words`` says what)."""
    scores = _known(lambda arm, score: f"{arm} {fmt_num(score)}")
    texts = list(map(scores, overall.keys.to_pylist(), overall.items.to_pylist()))
    found: list[str | None] = [None] * len(overall.lengths)
    start = 0
    for row, length in enumerate(overall.lengths.tolist()):
        if length:
            found[row] = texts[start] if length == 1 else ", ".join(texts[start : start + length])
            start += length
    return found


def _mean_confidences(part: pa.Table) -> list[str]:
    """Per record, the mean of its ``confidences`` as the explorer shows it ("" of none)."""
    arms = MapEntries(part.column("confidences"))
    dims = MapEntries(arms.items)
    rec = arms.rec[dims.rec]
    values = np.asarray(dims.items.to_numpy(zero_copy_only=False), dtype=float)
    # summed in the records' own order, one value after the other, as ``sum`` adds them
    totals = np.bincount(rec, weights=values, minlength=part.num_rows).tolist()
    counts = np.bincount(rec, minlength=part.num_rows).tolist()
    means = _known(mean_words)
    return [means(total, count) for total, count in zip(totals, counts, strict=True)]


def _pairs_set(frame: pd.DataFrame) -> set[tuple[str, str]]:
    return set(zip(frame["judge"].astype(str), frame["query_id"].astype(str), strict=True))


def _flipped(frame: AnalysisFrame) -> set[tuple[str, str]]:
    pairs = order_pairs(frame)
    if pairs.empty:
        return set()
    flipped = pairs["ok_1"] & pairs["ok_2"] & (pairs["pref_1"] != pairs["pref_2"])
    return _pairs_set(pairs[flipped])


def _failed(frame: AnalysisFrame) -> set[tuple[str, str]]:
    records = frame.records
    return _pairs_set(records[~records["ok"] | records["holistic_fallback"]])


def _wrong_pairwise(frame: AnalysisFrame) -> set[tuple[str, str]]:
    gold = gold_preferences(frame)
    if gold.empty:
        return set()
    recs = pairwise_records(frame)
    recs = recs.assign(gold=recs["query_id"].map(gold)).dropna(subset=["gold"])
    return _pairs_set(recs[~recs["ok"] | (recs["preferred_arm"] != recs["gold"])])


def _wrong_criterion(frame: AnalysisFrame) -> set[tuple[str, str]]:
    human = frame.labels.verdicts
    if human.empty:
        return set()
    recs = frame.records[~frame.records["retest"]].dropna(subset=["target_arm"])
    keyed = recs.merge(
        human.rename(columns={"verdict": "human", "arm": "target_arm"}),
        on=["query_id", "target_arm"],
    )
    return _pairs_set(keyed[~keyed["ok"] | (keyed["verdict"] != keyed["human"])])


def _disagreeing(frame: AnalysisFrame) -> set[str]:
    """Items whose judges' consolidated verdicts are not all the same."""
    views: list[pd.DataFrame] = []
    cons = consolidated(frame)
    if not cons.empty:
        views.append(cons.assign(part="").rename(columns={"label": "view"}))
    ok = frame.ok[~frame.ok["retest"]].dropna(subset=["verdict", "target_arm"])
    if not ok.empty:
        part = ok["target_arm"].astype(str) + "|" + ok["criterion"].fillna("").astype(str)
        views.append(ok.assign(part=part, view=ok["verdict"]))
    if not views:
        return set()
    every = pd.concat([v[["query_id", "judge", "part", "view"]] for v in views])
    spread = every.groupby(["query_id", "part"])["view"].nunique()
    judges = every.groupby(["query_id", "part"])["judge"].nunique()
    split = spread[(spread > 1) & (judges > 1)]
    return {str(qid) for qid, _ in split.index}


def _gold_labels(frame: AnalysisFrame) -> tuple[dict[str, str], str]:
    gold = gold_preferences(frame)
    if not gold.empty:
        return {str(k): str(v) for k, v in gold.items()}, "gold"
    human = frame.labels.verdicts
    if human.empty:
        return {}, ""
    labels: dict[str, list[str]] = defaultdict(list)
    for row in human.itertuples(index=False):
        labels[str(row.query_id)].append(f"{row.arm}: {row.verdict}")
    return {qid: ", ".join(texts) for qid, texts in labels.items()}, "human"


@dataclass(frozen=True)
class ItemMarks:
    """What the analysis frame says of each item: per-judge flag bits, the items whose judges
    disagree, and each item's label (gold or human) with its kind."""

    flags: dict[str, dict[str, int]]  # query id -> judge -> FLAG_BITS or-ed
    disagree: set[str]
    gold: dict[str, str]
    label_kind: str


def item_marks(frame: AnalysisFrame) -> ItemMarks:
    """Every item's flags, disagreement and label, from the same tables as the report's counts."""
    gold, kind = _gold_labels(frame)
    flag_sets: Mapping[Filter, set[tuple[str, str]]] = {
        "flipped": _flipped(frame),
        "wrong": _wrong_pairwise(frame) | _wrong_criterion(frame),
        "failed": _failed(frame),
    }
    flags: dict[str, dict[str, int]] = {}
    for name, found in flag_sets.items():
        for judge, qid in found:
            by_judge = flags.setdefault(qid, {})
            by_judge[judge] = by_judge.get(judge, 0) | FLAG_BITS[name]
    return ItemMarks(flags, _disagreeing(frame), gold, kind)


def mark_row(row: ItemRow, marks: ItemMarks) -> ItemRow:
    """The row with its flags, disagreement and label set (in place; returned for chaining)."""
    for judge, bits in marks.flags.get(row.id, {}).items():
        row.flags[judge] = row.flags.get(judge, 0) | bits
    row.disagree = row.disagree or row.id in marks.disagree
    row.gold = marks.gold.get(row.id, row.gold)
    return row


def item_row(item: Item) -> ItemRow:
    """A dataset item's row: its question and responses, cut at ``TEXT_CHARS``."""
    responses = {arm: cut_text(text, TEXT_CHARS) for arm, text in item.responses.items()}
    return ItemRow(str(item.id), cut_text(item.question, TEXT_CHARS), responses)


class ExplorerRows:
    """The embedded explorer's rows, built as the records are read (``add``): one per dataset
    item, in order, then one per other item the records name."""

    def __init__(
        self, items: Sequence[Item] | None, prompts: Mapping[str, str] | None = None
    ) -> None:
        self._rows = {str(item.id): item_row(item) for item in items or ()}
        self._prompts = prompts

    def add(self, shown: ShownBlock) -> None:
        for query_id, judged in shown.judgments(self._prompts):
            row = self._rows.get(query_id)
            if row is None:
                row = self._rows[query_id] = ItemRow(query_id)
            row.judgments.append(judged)

    def finish(self, frame: AnalysisFrame) -> ExplorerData:
        """The rows with the frame's flags and labels."""
        marks = item_marks(frame)
        for row in self._rows.values():
            mark_row(row, marks)
        return ExplorerData(frame.judges, list(self._rows.values()), marks.label_kind)


def build_explorer(
    frame: AnalysisFrame,
    records: Judgments | Sequence[JudgeRecord],
    items: Sequence[Item] | None = None,
) -> ExplorerData:
    """The explorer's rows from the analysis frame (flags), the records (what each judge said)
    and the dataset items (question and responses; without them the rows carry ids only)."""
    judgments = records if isinstance(records, Judgments) else records_table(records)
    rows = ExplorerRows(items)
    for part in judgments.slices(EXPLORER_FIELDS):
        rows.add(shown_block(part))
    return rows.finish(frame)
