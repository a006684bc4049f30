"""``analyze_records``: judgments -> one typed ``Report`` (``jurybox.analysis.model``).

Report structure (``schema_version`` 1; JSON Schema generated from the model: ``report_schema()``).
Top-level fields, in order: ``schema_version``, ``generated_by``, ``options`` (echo of
``AnalysisOptions``), ``summary`` (what went in and what was excluded), ``verdict`` (each judge's
trust level, its one-line reason and checks, and the panel line), then one section per family:
``agreement``, ``bias``, ``effects``, ``reliability``, ``human_calibration``, ``panels``,
``accuracy_vs_gold``. Each family is computed or skipped with the reason; each model's docstring
says what it holds.

A metric is built from a ``jurybox.stats`` result: ``value`` (the result's declared headline),
``n``, ``method``, ``reason`` (why ``value`` is None) and the result's own fields (ci_low,
ci_high, p_value ...). Numbers are never NaN: a missing value is None with a reason. Nothing is
rounded here. ``analysis_report.json`` is ``report.model_dump(mode="json")``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import pandas as pd

from jurybox.analysis._common import records_by_judge
from jurybox.analysis.agreement import analyze_agreement
from jurybox.analysis.bias import analyze_bias
from jurybox.analysis.calibration import analyze_accuracy, analyze_human
from jurybox.analysis.effects import analyze_effects, resolve_contrast
from jurybox.analysis.evidence import Families as Evidence
from jurybox.analysis.frame import AnalysisFrame, build_frame, item_subsets, restricted
from jurybox.analysis.model import GeneratedBy, Options, Report, report_schema
from jurybox.analysis.model.accuracy import AccuracyVsGold
from jurybox.analysis.model.agreement import Agreement
from jurybox.analysis.model.bias import Bias
from jurybox.analysis.model.effects import Effects
from jurybox.analysis.model.human import HumanCalibration
from jurybox.analysis.model.panels import Panels
from jurybox.analysis.model.reliability import Reliability
from jurybox.analysis.model.stopping import Stopping
from jurybox.analysis.model.summary import (
    Excluded,
    HumanLabelCounts,
    JudgeFailures,
    JudgeSummary,
    NonFiniteScores,
    RunCost,
    SavingMethod,
    Summary,
)
from jurybox.analysis.model.verdict import Verdict
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import PAIR_KEY, pairwise_records
from jurybox.analysis.panels import analyze_panels
from jurybox.analysis.reliability import analyze_reliability
from jurybox.analysis.verdict import build_verdict, with_subsets
from jurybox.config import JudgeConfig
from jurybox.pricing import tokens_cost_usd
from jurybox.records import Item, JudgeRecord, Status
from jurybox.versions import jurybox_version

REPORT_SCHEMA_VERSION: Final[Literal[1]] = 1
FAMILIES = (
    "agreement",
    "bias",
    "effects",
    "reliability",
    "human_calibration",
    "panels",
    "accuracy_vs_gold",
)
_PARSE_FAILURES = {Status.UNPARSED.value, Status.TRUNCATED.value}
_NO_ANSWER = {Status.PROVIDER_ERROR.value, Status.SKIPPED.value}

__all__ = ["FAMILIES", "REPORT_SCHEMA_VERSION", "analyze_frame", "analyze_records", "report_schema"]


def _failures(frame: AnalysisFrame) -> dict[str, JudgeFailures]:
    out: dict[str, JudgeFailures] = {}
    for judge, rows in records_by_judge(frame):
        status = rows["status"]
        counted = status != Status.SKIPPED.value
        answered = ~status.isin(_NO_ANSWER)
        failed = int((counted & ~rows["ok"]).sum())
        parse = int(status.isin(_PARSE_FAILURES).sum())
        out[str(judge)] = JudgeFailures(
            n_records=len(rows),
            n_failed=failed,
            failure_rate=failed / int(counted.sum()) if counted.any() else None,
            parse_failure_rate=parse / int(answered.sum()) if answered.any() else None,
            by_status={str(k): int(v) for k, v in status.value_counts().items()},
        )
    return out


def _text(value: Any) -> str | None:
    """A record's text column as the report writes it (missing is None, anything else a str)."""
    return None if value is None or pd.isna(value) else str(value)


def _judges(frame: AnalysisFrame) -> list[JudgeSummary]:
    out = []
    for judge, rows in records_by_judge(frame):
        first = rows.iloc[0]
        out.append(
            JudgeSummary(
                name=str(judge),
                model=_text(first["model"]),
                vendor=_text(first["vendor"]),
                family=_text(first["family"] or None),
                n_records=len(rows),
                n_ok=int(rows["ok"].sum()),
                local_judge=bool(rows["local_judge"].any()),
            )
        )
    return out


def _cost(records: pd.DataFrame, run_judges: Mapping[str, JudgeConfig]) -> RunCost | None:
    """Cost and batch use over the records (None when there are none)."""
    if not len(records):
        return None
    cost = pd.to_numeric(records["cost_usd"], errors="coerce")
    batched = records["batch_id"].notna() & (records["batch_id"].astype(str) != "")
    priced_batch = batched & cost.notna()
    saving, method = (
        _batch_saving(records[priced_batch], cost[priced_batch], run_judges)
        if priced_batch.any()
        else (None, None)
    )
    answered = records["input_tokens"].notna() | records["output_tokens"].notna()
    unpriced = sorted(map(str, records.loc[answered & cost.isna(), "judge"].unique()))
    listed = {"unpriced_judges": unpriced} if unpriced else {}  # old reports read unchanged
    return RunCost(
        **listed,
        cost_usd=float(cost.sum()) if cost.notna().any() else None,
        n_priced=int(cost.notna().sum()),
        n_batch_records=int(batched.sum()),
        n_sync_records=int((~batched).sum()),
        batch_cost_usd=float(cost[priced_batch].sum()) if priced_batch.any() else None,
        batch_saving_usd=saving,
        batch_saving_method=method,
    )


_TOKENS = ["input_tokens", "output_tokens", "cached_input_tokens"]


def _count(value: Any) -> int | None:
    return None if pd.isna(value) else int(value)


def _batch_saving(
    batch: pd.DataFrame, cost: pd.Series, run_judges: Mapping[str, JudgeConfig]
) -> tuple[float | None, SavingMethod]:
    """What priced batch records saved against their judges' synchronous prices, and how that
    was priced. A judge whose settings are unknown is assumed to have had the vendors' 50%
    discount: the same tokens would have cost twice as much, so the saving equals the cost."""
    known = batch["judge"].astype(str).isin(list(run_judges))
    method: SavingMethod = (
        "synchronous prices" if known.all() else "mixed" if known.any() else "assumed 50% discount"
    )
    saving = float(cost[~known].sum())
    rows = batch.loc[known, ["judge", *_TOKENS]].itertuples(index=False)
    for judge, *counts in rows:
        synchronous = tokens_cost_usd(run_judges[str(judge)], *map(_count, counts))
        if synchronous is None:
            return None, method  # no synchronous price (or token count) to compare with
        saving += synchronous
    return saving - float(cost[known].sum()), method


# Items and scores a report names of those set apart as not finite (the count is complete).
NAMED_NON_FINITE = 10


def _non_finite(frame: AnalysisFrame) -> NonFiniteScores | None:
    """The judge scores set apart as NaN or infinite, counted, and the first ones named."""
    bad = frame.non_finite
    if bad is None or bad.empty:
        return None
    items = list(dict.fromkeys(str(q) for q in bad["query_id"]))
    rows = bad.head(NAMED_NON_FINITE).itertuples(index=False)
    return NonFiniteScores(
        total=len(bad),
        n_items=len(items),
        items=items[:NAMED_NON_FINITE],
        examples=[f"{r.judge} {r.query_id} {r.arm} {r.dimension} = {r.score}" for r in rows],
    )


def summarize(frame: AnalysisFrame, options: AnalysisOptions) -> Summary:
    """The ``summary`` section: what went in, and what was excluded and why."""
    r = frame.records
    not_ok = r.loc[~r["ok"], "status"].value_counts() if len(r) else pd.Series(dtype=int)
    holistic = int((r["ok"] & r["holistic_fallback"]).sum()) if len(r) else 0
    contrast = resolve_contrast(frame, options) if len(r) else "no records"
    labels = frame.labels
    return Summary(
        n_records=len(r),
        n_ok=int(r["ok"].sum()) if len(r) else 0,
        excluded=Excluded(
            total=int(not_ok.sum()) + holistic,
            holistic_fallback=holistic,
            by_status={str(k): int(v) for k, v in not_ok.items()},
        ),
        judges=_judges(frame) if len(r) else [],
        modes=sorted(str(m) for m in r["mode"].dropna().unique()) if len(r) else [],
        arms=[str(a) for a in frame.arms],
        control_arm=contrast[0] if isinstance(contrast, tuple) else None,
        treatment_arm=contrast[1] if isinstance(contrast, tuple) else None,
        dimensions=[str(d) for d in frame.dimensions],
        n_items=int(r["query_id"].nunique()) if len(r) else 0,
        n_retest_records=int(r["retest"].sum()) if len(r) else 0,
        human_labels=HumanLabelCounts.given(
            preferences=len(labels.preferences),
            annotators=int(labels.annotators["annotator"].nunique()),
            scores=len(labels.scores),
            verdicts=len(labels.verdicts),
            targeted=int((labels.design["stream"] == "targeted").sum()) or None,
            items=_labelled_items(frame, r["query_id"]),
        ),
        local_judge_used=bool(r["local_judge"].any()) if len(r) else False,
        failures=_failures(frame) if len(r) else {},
        cost=_cost(r, options.run_judges),
        **({"one_order": one} if (one := _one_order(frame)) else {}),
        # Set only where scores were set apart, so a report without any keeps its keys.
        **({"non_finite_scores": bad} if (bad := _non_finite(frame)) is not None else {}),
    )


def _labelled_items(frame: AnalysisFrame, judged: pd.Series) -> int:
    """The judged items that carry a human label of any kind (preference, score, verdict)."""
    labels = frame.labels
    ids = pd.concat(
        [labels.preferences["query_id"], labels.scores["query_id"], labels.verdicts["query_id"]]
    )
    return int(ids[ids.isin(judged.unique())].nunique())


def _one_order(frame: AnalysisFrame) -> dict[str, int]:
    """Per judge, its pairs judged in one presentation order only, where it judged others in
    both (a run stopped half way through an item); none for a judge that saw one order only."""
    pairs = pairwise_records(frame)
    if pairs.empty:
        return {}
    orders = pairs.groupby(PAIR_KEY, observed=True)["first_arm"].nunique()
    found: dict[str, int] = {}
    for judge, counts in orders.groupby(level="judge", observed=True):
        if (counts > 1).any() and (single := int((counts == 1).sum())):
            found[str(judge)] = single
    return found


@dataclass(frozen=True)
class Families:
    """Every family section of one report."""

    agreement: Agreement
    bias: Bias
    effects: Effects
    reliability: Reliability
    human_calibration: HumanCalibration
    panels: Panels
    accuracy_vs_gold: AccuracyVsGold

    @classmethod
    def skipped(cls, reason: str) -> Families:
        """Every family skipped for the same reason (nothing to read)."""
        return cls(
            agreement=Agreement.skip(reason),
            bias=Bias.skip(reason),
            effects=Effects.skip(reason),
            reliability=Reliability.skip(reason),
            human_calibration=HumanCalibration.skip(reason),
            panels=Panels.skip(reason),
            accuracy_vs_gold=AccuracyVsGold.skip(reason),
        )


def _families(frame: AnalysisFrame, options: AnalysisOptions) -> Families:
    if frame.records.empty:
        return Families.skipped("no records")
    if not frame.records["ok"].any():
        return Families.skipped("no successful judgment: every record failed")
    return Families(
        agreement=analyze_agreement(frame, options),
        bias=analyze_bias(frame, options),
        effects=analyze_effects(frame, options),
        reliability=analyze_reliability(frame, options),
        human_calibration=analyze_human(frame, options),
        panels=analyze_panels(frame, options),
        accuracy_vs_gold=analyze_accuracy(frame, options),
    )


def _verdict_on(frame: AnalysisFrame, options: AnalysisOptions) -> Verdict:
    """The verdict from only the families it reads, computed on ``frame`` (a subset's)."""
    if frame.records.empty or not frame.records["ok"].any():
        f = _families(frame, options)
        families = (f.bias, f.reliability, f.human_calibration, f.accuracy_vs_gold)
    else:
        families = (
            analyze_bias(frame, options),
            analyze_reliability(frame, options),
            analyze_human(frame, options),
            analyze_accuracy(frame, options),
        )
    return build_verdict(frame, Evidence(summarize(frame, options), *families), options)


def _verdict(frame: AnalysisFrame, evidence: Evidence, options: AnalysisOptions) -> Verdict:
    """The pooled verdict; over an import spanning subsets, with each judge's level on every
    subset alone (a judge trusted pooled can fail on a subset)."""
    pooled = build_verdict(frame, evidence, options)
    subsets = item_subsets(frame)
    if not subsets or not pooled.judges:
        return pooled
    by_subset = {
        name: _verdict_on(restricted(frame, ids), options) for name, ids in subsets.items()
    }
    return with_subsets(pooled, by_subset)


def analyze_frame(frame: AnalysisFrame, options: AnalysisOptions | None = None) -> Report:
    """Every metric family over an already-built frame (see the module docstring)."""
    options = options or AnalysisOptions()
    summary = summarize(frame, options)
    f = _families(frame, options)
    evidence = Evidence(summary, f.bias, f.reliability, f.human_calibration, f.accuracy_vs_gold)
    return Report(
        schema_version=REPORT_SCHEMA_VERSION,
        generated_by=GeneratedBy(package="jurybox", version=jurybox_version()),
        options=Options.model_validate(options.to_dict()),
        summary=summary,
        verdict=_verdict(frame, evidence, options),
        agreement=f.agreement,
        bias=f.bias,
        effects=f.effects,
        reliability=f.reliability,
        human_calibration=f.human_calibration,
        panels=f.panels,
        accuracy_vs_gold=f.accuracy_vs_gold,
        # Only where a run stopped early: a plain run's report keeps its keys.
        **({"stopping": Stopping.from_manifest(options.stopping)} if options.stopping else {}),
    )


def analyze_records(
    records: Iterable[JudgeRecord | Mapping[str, Any]] | pd.DataFrame,
    *,
    human: Mapping[str, Mapping[str, Any]] | pd.DataFrame | None = None,
    items: Sequence[Item] | None = None,
    options: AnalysisOptions | None = None,
) -> Report:
    """Analyse judge records into a typed report.

    Args:
        records: ``JudgeRecord`` objects, their ``to_dict()`` mappings, or a DataFrame of them
            (e.g. ``pd.read_json("judgments.jsonl", lines=True)``). Every status is welcome:
            failures are counted in ``summary`` and excluded from the metrics.
        human: Labels by query id (see ``jurybox.analysis.labels``); a DataFrame needs a
            ``query_id`` column. Overrides ``Item.human`` field by field.
        items: The dataset items: response lengths (verbosity), authors (self-enhancement),
            metadata category / difficulty / normal (effects), ``human`` labels, arm order.
        options: ``AnalysisOptions``; defaults apply when None.

    Returns:
        The ``Report`` (module docstring); ``report.model_dump(mode="json")`` validates against
        ``report_schema()``.
    """
    options = options or AnalysisOptions()
    frame = build_frame(records, human=human, items=items, options=options)
    return analyze_frame(frame, options)
