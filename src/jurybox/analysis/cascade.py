"""Trust or Escalate replayed over recorded judgments: ``jurybox cascade``'s analysis.

Several judges' pairwise records over the same items (a run, or an import such as LLMBar) and
human labels become, per judge and item, a verdict, a confidence and a cost
(``judge_items``); the labelled items are split at random into a calibration and a test part;
``jurybox.stats.cascade`` calibrates each judge's threshold on the first and the routing is
measured on the second, beside the strongest judge alone under the same guarantee and the
uncalibrated rule "decide where the orders agree, else escalate".

A judge's verdict on an item is the one most of its records give (every presentation order and
repeat; a tie between two verdicts is no verdict). Its confidence (``CascadeOptions.confidence``):

* ``orders``: the share of its records on the item that give that verdict — 1 when every order
  agrees, ½ when two orders split (then no verdict); a failed call counts against it;
* ``stated``: the mean confidence it stated with that verdict (high 1, medium ⅔, low ⅓);
* ``both`` (default): their product, or ``orders`` alone for a judge that states none.

Token probabilities would fit the same slot; no record field carries them yet. The fresh-run
cascade (``jurybox cascade CONFIG``, ``app.cascade_run``: call the strong judge only where the
cheap one is unsure) reuses ``judge_items``, ``split_labelled``, ``rule_outcome`` and the
report's parts here on the records of each stage.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model.cascade import (
    CASCADE_SCHEMA_VERSION,
    CascadeReport,
    CascadeSettings,
    ItemCounts,
    RoutedUnlabelled,
    RuleOutcome,
    StageModel,
)
from jurybox.analysis.model.compare import GeneratedBy
from jurybox.stats.cascade import (
    MIN_SELECTED,
    CascadeCalibration,
    CascadeOutcome,
    calibrate_cascade,
    cascade_outcome,
    route,
)
from jurybox.versions import jurybox_version

ConfidenceKind = Literal["orders", "stated", "both"]
CONFIDENCE_KINDS: tuple[ConfidenceKind, ...] = ("orders", "stated", "both")
STATED = {"high": 1.0, "medium": 2 / 3, "low": 1 / 3}
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class CascadeOptions:
    """What to replay: judges cheap → strong and the guarantee (``jurybox cascade``'s flags)."""

    judges: tuple[str, ...]
    target: float = 0.9
    delta: float = 0.1
    calibration_share: float = 0.5
    seed: int = 0
    confidence: ConfidenceKind = "both"
    call_costs: Mapping[str, float] | None = None  # cost of one call per judge
    split_delta: bool = True
    min_selected: int = MIN_SELECTED

    def __post_init__(self) -> None:
        if not self.judges or len(set(self.judges)) != len(self.judges):
            raise ValueError(f"judges must be distinct names, cheap first; got {self.judges}")
        for name, value in (("target", self.target), ("delta", self.delta)):
            if not 0 < value < 1:
                raise ValueError(f"{name} must lie strictly between 0 and 1, got {value}")
        if not 0 < self.calibration_share < 1:
            raise ValueError(f"calibration share must lie in (0, 1), got {self.calibration_share}")
        if self.confidence not in CONFIDENCE_KINDS:
            raise ValueError(f"confidence must be one of {', '.join(CONFIDENCE_KINDS)}")
        missing = set(self.judges) - set(self.call_costs or self.judges)
        if missing:
            raise ValueError(f"call costs given, but not for {', '.join(sorted(missing))}")


@dataclass(frozen=True)
class JudgeItems:
    """One judge's verdict, confidence and cost on each item of ``query_ids`` (same order)."""

    judge: str
    query_ids: tuple[str, ...]
    verdict: tuple[str | None, ...]
    confidence: FloatArray  # NaN: no verdict
    orders_share: FloatArray  # share of its records giving the verdict (NaN: none)
    calls: FloatArray
    tokens: FloatArray  # NaN where a record lacks its token counts
    cost_usd: FloatArray  # NaN where a record lacks its cost
    confidence_kind: str


@dataclass(frozen=True)
class CascadeReplay:
    """The report and the items no judge decided (not used for calibration), in item order."""

    report: CascadeReport
    needs_human: list[str] = field(default_factory=list)


def judge_items(
    records: pd.DataFrame, judge: str, query_ids: Sequence[str], kind: ConfidenceKind = "both"
) -> JudgeItems:
    """Per item: ``judge``'s majority verdict, its confidence and what its calls cost.

    Args:
        records: The analysis frame's ``records`` table (pairwise records).
        judge: Judge name.
        query_ids: The items, in the order of the arrays returned.
        kind: ``orders``, ``stated`` or ``both`` (see the module docstring).
    """
    rows = records[(records["judge"] == judge) & records["query_id"].isin(query_ids)]
    ids = pd.Index(list(query_ids))
    calls = np.asarray(rows.groupby("query_id").size().reindex(ids, fill_value=0), np.float64)
    verdict, modal_n = _majority(rows, ids)
    share = np.where(np.isnan(modal_n), np.nan, modal_n / np.maximum(calls, 1))
    stated = _stated(rows, ids, verdict)
    used = kind if kind != "both" else ("orders×stated" if np.isfinite(stated).any() else "orders")
    if kind == "stated" and not np.isfinite(stated).any():
        raise ValueError(f"judge '{judge}' stated no confidence: use --confidence orders")
    confidence = {"orders": share, "stated": stated, "orders×stated": share * stated}[used]
    return JudgeItems(
        judge=judge,
        query_ids=tuple(query_ids),
        verdict=tuple(verdict),
        confidence=np.where(np.isnan(share), np.nan, confidence),
        orders_share=share,
        calls=calls,
        tokens=_summed(rows, ids, ("input_tokens", "output_tokens")),
        cost_usd=_summed(rows, ids, ("cost_usd",)),
        confidence_kind=used,
    )


def _majority(rows: pd.DataFrame, ids: pd.Index) -> tuple[list[str | None], FloatArray]:
    """The verdict most records give per item (None on a tie or without one) and its count."""
    ok = rows[rows["ok"].astype(bool) & rows["preferred_arm"].notna()]
    tally = ok.groupby(["query_id", "preferred_arm"]).size().unstack(fill_value=0)
    tally = tally.reindex(ids, fill_value=0)
    best = tally.max(axis=1) if tally.shape[1] else pd.Series(0, index=ids)
    unique = tally.eq(best, axis=0).sum(axis=1) == 1 if tally.shape[1] else best > 0
    keep = (best > 0) & unique
    modal = tally.idxmax(axis=1) if tally.shape[1] else pd.Series(None, index=ids)
    verdict = [str(v) if k else None for v, k in zip(modal, keep, strict=True)]
    return verdict, np.where(keep, best, np.nan).astype(np.float64)


def _stated(rows: pd.DataFrame, ids: pd.Index, verdict: Sequence[str | None]) -> FloatArray:
    """Mean stated confidence of the records that gave the item's verdict (NaN: none stated)."""
    chosen = pd.Series(list(verdict), index=ids, dtype=object)
    mine = rows[rows["preferred_arm"].to_numpy() == chosen.reindex(rows["query_id"]).to_numpy()]
    levels = mine["confidence"].map(lambda v: STATED.get(str(v).lower()) if v else None)
    means = levels.astype(np.float64).groupby(mine["query_id"]).mean()
    return np.asarray(means.reindex(ids), dtype=np.float64)


def _summed(rows: pd.DataFrame, ids: pd.Index, columns: Sequence[str]) -> FloatArray:
    """Per item, the sum of ``columns`` over its records; NaN where any value is missing."""
    values = rows[list(columns)].astype(np.float64).sum(axis=1, min_count=len(columns))
    grouped = values.groupby(rows["query_id"])
    total = grouped.sum().where(grouped.count() == grouped.size())
    return np.asarray(total.reindex(ids), dtype=np.float64)


@dataclass(frozen=True)
class CascadeInputs:
    """Judges × items arrays a replay routes, rows in cascade order (``cascade_inputs``); one
    set serves replays with any target, δ, split or seed."""

    judges: tuple[str, ...]
    ids: list[str]
    missing: int  # items some judge never judged (left out)
    judged: list[JudgeItems]
    labels: NDArray[np.object_]  # gold per item, None unlabelled
    conf: FloatArray
    orders: FloatArray
    agree: NDArray[np.bool_]
    cost: FloatArray
    basis: str


def replay_cascade(frame: AnalysisFrame, options: CascadeOptions, *, source: str) -> CascadeReplay:
    """Calibrate the cascade on a random part of the labelled items and measure it on the rest.

    Raises:
        ValueError: a judge without pairwise records, no item judged by every judge, or too few
            labelled items to split.
    """
    return replay_inputs(cascade_inputs(frame, options), options, source=source)


def replay_inputs(m: CascadeInputs, options: CascadeOptions, *, source: str) -> CascadeReplay:
    """``replay_cascade`` on arrays already read (``options.judges`` must be ``m.judges``)."""
    if tuple(options.judges) != m.judges:
        raise ValueError(f"inputs are for judges {m.judges}, options name {options.judges}")
    labelled = np.flatnonzero(pd.notna(m.labels))
    cal, test = split_labelled(labelled, options)
    calib = _calibrate(m, cal, options, rows=slice(None))
    alone = _calibrate(m, cal, options, rows=slice(-1, None))
    k = len(options.judges)
    on_test = partial(_rule, m=m, test=test, options=options)
    rules = [
        on_test("cascade", calib.thresholds, calib.route(m.conf[:, test])),
        on_test("strongest alone", alone.thresholds, alone.route(m.conf[-1:, test])),
        on_test("uncalibrated", (1.0,) * k, route((1.0,) * k, m.orders[:, test])),
    ]
    unlabelled = np.flatnonzero(pd.isna(m.labels))
    outside = np.setdiff1d(np.arange(len(m.ids)), cal)
    nobody = outside[calib.route(m.conf[:, outside]) < 0]
    counts = ItemCounts(
        n_items=len(m.ids),
        n_missing_a_judge=m.missing,
        n_labelled=int(labelled.size),
        n_calibration=int(cal.size),
        n_test=int(test.size),
        n_unlabelled=int(unlabelled.size),
    )
    report = CascadeReport(
        schema_version=CASCADE_SCHEMA_VERSION,
        generated_by=GeneratedBy(package="jurybox", version=jurybox_version()),
        source=source,
        settings=settings(options, m.basis),
        items=counts,
        stages=stages(calib, m.judged),
        cascade=rules[0],
        strongest_alone=rules[1],
        uncalibrated=rules[2],
        unlabelled=routed(calib, m.conf[:, unlabelled], options) if unlabelled.size else None,
        needs_human=int(nobody.size),
        method=calib.method,
        notes=_notes(m),
    )
    return CascadeReplay(report, [m.ids[i] for i in nobody])


def cascade_inputs(frame: AnalysisFrame, options: CascadeOptions) -> CascadeInputs:
    """Verdicts, confidences, agreement with the gold and costs of ``options.judges`` on the
    items every one of them judged."""
    ids, missing = _shared_items(frame.records, options.judges)
    judged = [judge_items(frame.records, j, ids, options.confidence) for j in options.judges]
    gold = frame.labels.preferences.drop_duplicates("query_id").set_index("query_id")["label"]
    found = gold.reindex(pd.Index(ids)).tolist()
    labels = np.array([v if pd.notna(v) else None for v in found], dtype=object)
    agree = np.array(
        [[v is not None and v == g for v, g in zip(j.verdict, labels, strict=True)] for j in judged]
    )
    cost, basis = costs(judged, options)
    return CascadeInputs(
        judges=tuple(options.judges),
        ids=ids,
        missing=missing,
        judged=judged,
        labels=labels,
        conf=np.vstack([j.confidence for j in judged]),
        orders=np.vstack([j.orders_share for j in judged]),
        agree=agree,
        cost=cost,
        basis=basis,
    )


def _shared_items(records: pd.DataFrame, judges: Sequence[str]) -> tuple[list[str], int]:
    """Items every judge judged (sorted ids) and how many others some judge judged."""
    seen: list[set[str]] = []
    for judge in judges:
        mine = records[records["judge"] == judge]
        if mine.empty:
            known = ", ".join(sorted(map(str, records["judge"].unique())))
            raise ValueError(f"no records of judge '{judge}' (judges here: {known})")
        modes = set(mine["mode"].astype(str))
        if modes != {"pairwise"}:
            raise ValueError(
                f"judge '{judge}' has {', '.join(sorted(modes))} records: the cascade replays "
                "pairwise verdicts against human preferences"
            )
        seen.append(set(mine["query_id"].astype(str)))
    shared = set.intersection(*seen)
    if not shared:
        raise ValueError(f"no item was judged by every one of {', '.join(judges)}")
    return sorted(shared), len(set.union(*seen)) - len(shared)


def split_labelled(
    labelled: NDArray[np.intp], options: CascadeOptions
) -> tuple[NDArray[np.intp], ...]:
    """Seeded random calibration / test parts of the labelled items (sorted indices)."""
    n_cal = round(options.calibration_share * labelled.size)
    if n_cal < 1 or n_cal >= labelled.size:
        raise ValueError(
            f"{labelled.size} items judged by every judge have a human label: too few to split "
            f"into calibration and test at share {options.calibration_share}"
        )
    order = np.random.default_rng(options.seed).permutation(labelled)
    return np.sort(order[:n_cal]), np.sort(order[n_cal:])


def costs(
    judged: Sequence[JudgeItems],
    options: CascadeOptions,
    called: NDArray[np.bool_] | None = None,
) -> tuple[FloatArray, str]:
    """Judges × items cost in one unit: the given per-call costs, else USD where every record
    is priced, else tokens where every record counts them, else calls. ``called``: where each
    judge was called (a fresh-run cascade calls a judge only on the items that reach it; the
    others cost 0); default everywhere."""
    calls = np.vstack([j.calls for j in judged])
    if options.call_costs:
        weights = np.array([[float(options.call_costs[j.judge])] for j in judged])
        return calls * weights, "calls × --call-cost"
    where = np.ones(calls.shape, dtype=bool) if called is None else called
    for basis, values in (
        ("usd", [j.cost_usd for j in judged]),
        ("tokens", [j.tokens for j in judged]),
    ):
        table = np.vstack(values)
        if np.isfinite(table[where]).all():
            return np.where(where, table, 0.0), basis
    return calls, "calls"


def _calibrate(
    m: CascadeInputs, cal: NDArray[np.intp], options: CascadeOptions, *, rows: slice
) -> CascadeCalibration:
    return calibrate_cascade(
        m.conf[rows][:, cal],
        m.agree[rows][:, cal],
        target=options.target,
        delta=options.delta,
        split_delta=options.split_delta,
        min_selected=options.min_selected,
    )


def _rule(
    name: str,
    thresholds: Sequence[float],
    decided_by: NDArray[np.intp],
    *,
    m: CascadeInputs,
    test: NDArray[np.intp],
    options: CascadeOptions,
) -> RuleOutcome:
    """One rule's outcome on the test items (a one-judge rule uses the last judge's rows)."""
    rows = slice(-len(thresholds), None)
    out: CascadeOutcome = cascade_outcome(decided_by, m.agree[rows][:, test], m.cost[rows][:, test])
    method = _UNCALIBRATED if name == "uncalibrated" else out.method
    judges = list(options.judges)[rows]
    return rule_outcome(name, thresholds, out, judges, options=options, method=method)


def rule_outcome(
    name: str,
    thresholds: Sequence[float],
    out: CascadeOutcome,
    judges: Sequence[str],
    *,
    options: CascadeOptions,
    method: str,
) -> RuleOutcome:
    """``cascade.json``'s entry for one rule's outcome (NaN becomes null)."""
    agreement = None if math.isnan(out.agreement) else out.agreement
    return RuleOutcome(
        rule=name,
        thresholds=[t if math.isfinite(t) else None for t in thresholds],
        agreement=agreement,
        ci_low=None if agreement is None else out.ci_low,
        ci_high=None if agreement is None else out.ci_high,
        meets_target=None if agreement is None else agreement >= options.target,
        n_items=out.n_items,
        n_decided=out.n_decided,
        decided_share=dict(zip(judges, out.decided_share, strict=True)),
        nobody_share=out.nobody_share,
        cost=out.cost,
        cost_strongest=out.cost_strongest,
        cost_ratio=None if math.isnan(out.cost_ratio) else out.cost_ratio,
        method=method,
    )


def settings(options: CascadeOptions, basis: str) -> CascadeSettings:
    return CascadeSettings(
        judges=list(options.judges),
        target=options.target,
        delta=options.delta,
        calibration_share=options.calibration_share,
        seed=options.seed,
        confidence=options.confidence,
        cost_basis=basis,
        split_delta=options.split_delta,
        min_selected=options.min_selected,
    )


def stages(calib: CascadeCalibration, judged: Sequence[JudgeItems]) -> list[StageModel]:
    return [
        StageModel(
            judge=j.judge,
            confidence=j.confidence_kind,
            threshold=stage.threshold if stage.decides_any else None,
            n_reaching=stage.n_reaching,
            n_selected=stage.n_selected,
            n_disagree=stage.n_disagree,
            risk_bound=None if math.isnan(stage.risk_bound) else stage.risk_bound,
            delta=stage.delta,
            method=stage.method,
        )
        for stage, j in zip(calib.stages, judged, strict=True)
    ]


def routed(
    calib: CascadeCalibration, conf: FloatArray, options: CascadeOptions
) -> RoutedUnlabelled:
    who = calib.route(conf)
    return RoutedUnlabelled(
        n_items=int(who.size),
        decided_share={j: float(np.mean(who == i)) for i, j in enumerate(options.judges)},
        nobody_share=float(np.mean(who < 0)),
    )


def _notes(m: CascadeInputs) -> list[str]:
    notes = [f"costs in {m.basis}"]
    if m.basis == "calls":
        notes.append(
            "no record carries a cost or token counts: every call counts 1 whatever the judge "
            "(give --call-cost JUDGE=COST for their relative prices)"
        )
    if m.missing:
        notes.append(f"{m.missing} item(s) not judged by every judge were left out")
    return notes


_UNCALIBRATED = (
    "no calibration: each judge decides where every presentation order gave the same verdict, "
    "else the item goes to the next judge; no guarantee"
)
