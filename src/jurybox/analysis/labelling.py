"""Which labels matter, and what labels chosen that way say: strata and design-weighted accuracy.

``jurybox label --targeted`` asks first for the items whose label can change what is known
about the judges. ``item_strata`` sorts every judged item into two strata, from the judgments
alone (never from labels, so a restart draws the same strata):

* ``contested``: the judges' consolidated verdicts differ, a verdict flips with the
  presentation order, a judgment failed, criterion verdicts differ, or the scores of one
  response differ by a point or more (between judges, orders or repeats);
* ``settled``: every judgment agrees.

Within each stratum items are asked in a random order, so each stratum's labelled items are a
random sample of it; the targeted stream only asks for contested items more often. The
accuracy of a judge is then the stratified mean Σ W_h ȳ_h over the labelled items (W_h = the
stratum's share of the run's items), i.e. the inverse-probability estimate with inclusion
probability n_h / N_h, with ``stats.stratified_proportion``'s interval. That figure is what the
trust verdict reads when the labels carry a design; every other figure against humans reads the
labels that are a random sample (the uniform stream and labels from elsewhere) only.
"""

from __future__ import annotations

import pandas as pd

from jurybox import stats
from jurybox.analysis._common import TOTAL, attempt, fresh_scores
from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model.accuracy import DesignAccuracy, DesignJudgeAccuracy, LabelledByDesign
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import consolidated, pairwise_records

CONTESTED, SETTLED = "contested", "settled"
STRATA = (CONTESTED, SETTLED)

DESIGN_METHOD = (
    "per judge, each labelled item's share of correct judgments (failures counted as wrong; "
    "parsed: over successful judgments), averaged within each stratum and weighted by the "
    "stratum's share of the run's items (inverse-probability weights n_h/N_h); items "
    "labelled by either stream, so the targeted stream's extra labels on contested items "
    "count only for their stratum"
)


def item_strata(frame: AnalysisFrame) -> pd.Series:
    """query_id -> ``contested`` / ``settled`` for every item of the run (rules above)."""
    records = frame.records
    items = pd.Index(records["query_id"].astype(str).unique())
    contested: set[str] = set(records.loc[~records["ok"], "query_id"].astype(str))
    contested |= _split_preferences(frame)
    contested |= _split_verdicts(frame)
    contested |= _spread_scores(frame)
    strata = pd.Series(SETTLED, index=items, dtype=object)
    strata[items.isin(list(contested))] = CONTESTED
    return strata


def _split_preferences(frame: AnalysisFrame) -> set[str]:
    cons = consolidated(frame)
    if cons.empty:
        return set()
    cons = cons[cons["repeat"] == cons["repeat"].min()]
    by_item = cons.groupby(cons["query_id"].astype(str))
    split = by_item["flipped"].any() | (by_item["label"].nunique() > 1)
    return set(split[split].index)


def _split_verdicts(frame: AnalysisFrame) -> set[str]:
    ok = frame.ok
    ok = ok[ok["verdict"].notna() & ~ok["retest"]]
    if ok.empty:
        return set()
    keys = [
        ok["query_id"].astype(str),
        ok["target_arm"].astype(str),
        ok["criterion"].astype(str),
    ]
    split = ok.groupby(keys)["verdict"].nunique() > 1
    return {str(key[0]) for key in split[split].index}


def _spread_scores(frame: AnalysisFrame) -> set[str]:
    scores = fresh_scores(frame, TOTAL, columns=["query_id", "arm", "score"])
    if scores.empty:
        return set()
    keys = [scores["query_id"].astype(str), scores["arm"].astype(str)]
    grouped = scores.groupby(keys)["score"]
    spread = (grouped.max() - grouped.min()) >= 1.0
    return {str(key[0]) for key in spread[spread].index}


def design_accuracy(frame: AnalysisFrame, options: AnalysisOptions) -> LabelledByDesign | None:
    """Each judge's accuracy over the items ``jurybox label`` chose, stratum-weighted; None when
    no label carries a design."""
    labels = frame.labels
    design = labels.design
    if design.empty:
        return None
    streams = {str(k): int(v) for k, v in design["stream"].value_counts().sort_index().items()}
    strata = {str(k): int(v) for k, v in labels.strata.items()}
    if labels.design_problem is not None:
        return LabelledByDesign.skip(labels.design_problem, streams=streams, strata=strata)
    gold = design.dropna(subset=["label"]).set_index("query_id")
    recs = pairwise_records(frame)
    recs = recs[recs["query_id"].astype(str).isin(gold.index)]
    if recs.empty:
        return LabelledByDesign.skip(
            "no pairwise judgment of an item labelled by `jurybox label` with a preference",
            streams=streams,
            strata=strata,
        )
    recs = recs.assign(qid=recs["query_id"].astype(str))
    recs = recs.assign(hit=recs["ok"] & (recs["preferred_arm"] == recs["qid"].map(gold["label"])))
    judges = {
        str(judge): _judge(rows, gold["stratum"], strata, options)
        for judge, rows in recs.groupby("judge", observed=True)
    }
    return LabelledByDesign.of(judges=judges, streams=streams, strata=strata, method=DESIGN_METHOD)


def _judge(
    rows: pd.DataFrame, stratum: pd.Series, sizes: dict[str, int], options: AnalysisOptions
) -> DesignJudgeAccuracy:
    by_item = rows.groupby("qid")
    counted = by_item["hit"].mean()
    parsed = (rows[rows["ok"]].groupby("qid")["hit"].mean()) if rows["ok"].any() else counted[:0]

    def metric(values: pd.Series) -> DesignAccuracy:
        return attempt(
            DesignAccuracy,
            stats.stratified_proportion,
            values.to_numpy(float),
            stratum.reindex(values.index).to_numpy(object),
            sizes,
            n=len(values),
            confidence=options.confidence,
        )

    return DesignJudgeAccuracy(counted=metric(counted), parsed=metric(parsed))
