"""Judges against humans: human calibration and accuracy against gold preferences.

Human calibration: agreement among the human annotators themselves (when a label carries several),
Cohen's kappa of each judge's preferences against the gold (per presentation order, pooled, and
on consolidated verdicts, with Gwet's AC1 beside the last), per-dimension kappa (judge's mean
score rounded half up; linear and quadratic weighted, and Gwet's AC2, over the scale) and ICC(2,1)
of the total against human scores, the prediction-powered (PPI++) mean score of each arm from
the human-scored subset and each judge's scores of every response, and for criterion verdicts
TPR/TNR with Wilson intervals plus the Rogan-Gladen corrected pass rate over the responses no
human labelled.

Accuracy against gold (imported benchmarks): per judge and presentation order, ``correct`` /
``n`` over successful judgments, and ``accuracy_all`` = ``correct`` / ``n_total`` counting
failed judgments as wrong (the convention of LLMBar's and JudgeBench's published figures).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    attempt,
    fresh_records,
    icc_over_items,
    in_values,
    majority_vote,
    score_categories,
    skipped,
    unavailable,
    wilson_share,
    with_fields,
)
from jurybox.analysis.agreement import agreement_block, kappa_metric
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.labelling import design_accuracy
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.accuracy import (
    Accuracy,
    AccuracyVsGold,
    JudgeGoldAccuracy,
    TieConventions,
)
from jurybox.analysis.model.human import (
    CriterionJudge,
    DimensionKappa,
    HumanCalibration,
    HumanCriterion,
    HumanPreferenceJudge,
    HumanPreferences,
    HumanScoreJudge,
    HumanScores,
    InterAnnotator,
    PPIByArm,
)
from jurybox.analysis.model.metrics import (
    CorrectedRateMetric,
    GwetMetric,
    ICCMetric,
    KappaMetric,
    PPIMeanMetric,
    TprTnrMetric,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import consolidated, order_pairs, pairwise_records

K = TypeVar("K", bound=KappaMetric)


def gold_preferences(frame: AnalysisFrame) -> pd.Series:
    """query_id -> gold label (arm or "tie")."""
    prefs = frame.labels.preferences.drop_duplicates("query_id")
    return prefs.set_index("query_id")["label"]


def annotator_agreement(annotators: pd.DataFrame, options: AnalysisOptions) -> InterAnnotator:
    """Agreement among annotators (``HumanLabels.annotators``: query_id, annotator, label) on
    the items several of them labelled; ``jurybox label``'s page shows the same block."""
    if annotators.empty:
        return InterAnnotator.skip("no label carries several annotators")
    matrix = annotators.drop_duplicates(["query_id", "annotator"]).pivot(
        index="query_id", columns="annotator", values="label"
    )
    block = agreement_block(matrix, "nominal", options, InterAnnotator)
    majority = majority_vote(annotators, "query_id", "label")
    counts = majority.dropna().value_counts()
    return block.model_copy(
        update={
            "majority_counts": {str(k): int(v) for k, v in counts.items()},
            "no_majority": int(majority.isna().sum()),
        }
    )


def _kappa(
    a: pd.Series,
    b: pd.Series,
    items: pd.Series,
    options: AnalysisOptions,
    model: type[K],
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: list[int] | None = None,
) -> K:
    """Kappa of a judge against the humans, its interval a bootstrap over ``items`` (a judge's
    orders, repeats and responses of one item are one cluster)."""
    return kappa_metric(
        model,
        a.to_numpy(),
        b.to_numpy(),
        weights,
        categories=categories,
        n=len(a),
        confidence=options.confidence,
        items=items.to_numpy(),
        rng=options.seed,
    )


def _preference_kappas(frame: AnalysisFrame, options: AnalysisOptions) -> HumanPreferences:
    gold = gold_preferences(frame)
    if gold.empty:
        return HumanPreferences.skip(
            "no gold preference (preferred_arm or annotators) in the labels"
        )
    ok = fresh_records(frame)
    ok = ok[ok["preferred_arm"].notna()]
    ok = ok.assign(gold=ok["query_id"].map(gold)).dropna(subset=["gold"])
    cons = consolidated(frame)
    cons = cons.assign(gold=cons["query_id"].map(gold)).dropna(subset=["gold"])
    if ok.empty:
        return HumanPreferences.skip("no successful preference on a labelled item")
    judges: dict[str, HumanPreferenceJudge] = {}
    cons_by = _by_judge(cons)
    for judge, rows in ok.groupby("judge"):
        own = cons_by.get(str(judge), cons.iloc[:0])
        judges[str(judge)] = HumanPreferenceJudge(
            orders={
                str(o): _kappa(r["preferred_arm"], r["gold"], r["query_id"], options, KappaMetric)
                for o, r in rows.groupby("order")
            },
            pooled=_kappa(
                rows["preferred_arm"], rows["gold"], rows["query_id"], options, KappaMetric
            ),
            consolidated=_kappa(own["label"], own["gold"], own["query_id"], options, KappaMetric),
            consolidated_ac1=_gwet(
                own["label"], own["gold"], own["query_id"], None, categories=None, options=options
            ),
        )
    return HumanPreferences.of(judges=judges, n_labelled=len(gold))


def _weighted(
    a: pd.Series,
    b: pd.Series,
    items: pd.Series,
    weights: Literal["linear", "quadratic"],
    *,
    scale: tuple[list[int] | None, str],
    options: AnalysisOptions,
) -> KappaMetric:
    """Weighted kappa over every point of the scale (the declared one, else the observed span),
    its interval a bootstrap over items."""
    categories, scope = scale
    metric = _kappa(a, b, items, options, KappaMetric, weights=weights, categories=categories)
    return with_fields(metric, method=f"{metric.method}; {scope}") if metric.method else metric


def _gwet(
    a: pd.Series,
    b: pd.Series,
    items: pd.Series,
    weights: Literal["linear"] | None,
    *,
    categories: list[int] | None,
    options: AnalysisOptions,
) -> GwetMetric:
    """Gwet's AC1 (no weights) or AC2 of the judge against the human, two raters per unit,
    its interval a bootstrap over items."""
    raters = np.vstack([a.to_numpy(dtype=object), b.to_numpy(dtype=object)])
    return attempt(
        GwetMetric,
        stats.gwet_ac,
        raters,
        weights,
        categories=categories,
        n=len(a),
        clusters=items.astype(str).to_numpy(),
        confidence=options.confidence,
        rng=options.seed,
    )


def _round_half_up(values: pd.Series) -> pd.Series:
    return pd.Series(np.floor(values.to_numpy(float) + 0.5), index=values.index)


FRACTIONAL = (
    "human scores are fractional (e.g. {example}): kappa needs whole-number categories, so "
    "agreement on this continuous scale is the ICC(2,1) of the total (total_icc)"
)


def _fractional(values: pd.Series, options: AnalysisOptions) -> float | None:
    """A human score that is no point of the scale (a fraction, or off the declared scale):
    kappa is not defined on such scores. None when every score is a point of the scale."""
    numbers = values.to_numpy(float)
    off = numbers != np.round(numbers)
    if options.score_scale is not None:
        low, high = options.score_scale
        off |= (numbers < low) | (numbers > high)
    return float(numbers[off][0]) if off.any() else None


def _dimension_kappa(rows: pd.DataFrame, options: AnalysisOptions) -> DimensionKappa:
    """Kappa (unweighted, linear, quadratic) and AC2 of a judge's rounded scores against the
    human ones; undefined, with the reason, where the human scores are not whole points."""
    a, b, items = _round_half_up(rows["score"]), rows["score_human"], rows["query_id"]
    example = _fractional(b, options)
    if example is not None:
        why = FRACTIONAL.format(example=f"{example:g}")
        missing = unavailable(KappaMetric, why, len(rows))
        return with_fields(
            unavailable(DimensionKappa, why, len(rows)),
            weighted_linear=missing,
            weighted_quadratic=missing,
            continuous=True,
        )
    scale = score_categories(pd.concat([a, b]).to_numpy(), options)
    return with_fields(
        _kappa(a, b, items, options, DimensionKappa),
        weighted_linear=_weighted(a, b, items, "linear", scale=scale, options=options),
        weighted_quadratic=_weighted(a, b, items, "quadratic", scale=scale, options=options),
        gwet_ac2=(
            _gwet(a, b, items, "linear", categories=scale[0], options=options)
            if scale[0] is not None
            else None
        ),
    )


def _score_calibration(frame: AnalysisFrame, options: AnalysisOptions) -> HumanScores:
    human = frame.labels.scores
    if human.empty:
        return HumanScores.skip("no human scores in the labels")
    dims: dict[str, dict[str, DimensionKappa]] = {}
    icc: dict[str, ICCMetric] = {}
    for dim in sorted(human["dimension"].unique()):
        labelled = human[human["dimension"] == dim]
        scores = judge_scores(frame, dim)
        # Only the few humanly scored items can match: dropping the rest first keeps the
        # merge's rows and order and saves hashing every judged item's key.
        scores = scores[in_values(scores["query_id"], labelled["query_id"].unique())]
        merged = scores.merge(labelled, on=["query_id", "arm"], suffixes=("", "_human"))
        for judge, rows in merged.groupby("judge"):
            dims.setdefault(str(judge), {})[dim] = _dimension_kappa(rows, options)
            if dim == TOTAL:
                icc[str(judge)] = icc_over_items(
                    rows[["score", "score_human"]].to_numpy(),
                    rows["query_id"].astype(str).to_numpy(),
                    options,
                )
    if not dims:
        return HumanScores.skip("no judge scored a response that humans scored")
    judges = {j: HumanScoreJudge.given(dimensions=d, total_icc=icc.get(j)) for j, d in dims.items()}
    return HumanScores.of(
        judges=judges,
        rounding="judge's mean score rounded half up for kappa",
        prediction_powered=_prediction_powered(frame, human, options),
        prediction_powered_method=PPI_METHOD,
    )


PPI_METHOD = (
    "per judge, arm and dimension: the human scores of the responses humans scored, the judge's "
    "mean scores of those and of the others (PPI++, power-tuned; interval: expanded BCa "
    "bootstrap of both sets from 10 human-scored responses on, the CLT t interval below)"
)


def _prediction_powered(
    frame: AnalysisFrame, human: pd.DataFrame, options: AnalysisOptions
) -> dict[str, PPIByArm]:
    """judge -> arm -> dimension: the prediction-powered mean score of the arm's responses."""
    out: dict[str, PPIByArm] = {}
    for dim in sorted(human["dimension"].unique()):
        truth = human[human["dimension"] == dim].set_index(["query_id", "arm"])["score"]
        truth = truth[~truth.index.duplicated()]
        scores = judge_scores(frame, dim)
        for (judge, arm), rows in scores.groupby(["judge", "arm"]):
            keyed = rows.set_index(["query_id", "arm"])["score"]
            found = out.setdefault(str(judge), {}).setdefault(str(arm), {})
            found[dim] = _ppi_entry(keyed, truth, options)
    return out


def _ppi_entry(
    judge: pd.Series, truth: pd.Series, options: AnalysisOptions
) -> PPIMeanMetric | Skipped:
    labelled = _labelled(judge.index, truth.index)
    if labelled.all():
        return skipped("humans scored every response: their mean is the answer")
    if not labelled.any():
        return skipped("humans scored none of these responses")
    return attempt(
        PPIMeanMetric,
        stats.ppi_mean,
        truth.reindex(judge.index[labelled]).to_numpy(float),
        judge[labelled].to_numpy(float),
        judge[~labelled].to_numpy(float),
        n=len(judge),
        confidence=options.confidence,
        rng=options.seed,
    )


def _labelled(keys: pd.Index, truth: pd.Index) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """``keys.isin(truth)`` for (query_id, arm) keys, arm by arm: a lookup of query ids
    instead of a tuple per key (one judge's keys are every judged response)."""
    arms, truth_arms = keys.get_level_values("arm"), truth.get_level_values("arm")
    found = np.zeros(len(keys), dtype=bool)
    for arm in pd.unique(np.asarray(arms, dtype=object)):
        rows = np.asarray(arms == arm, dtype=bool)
        qids = truth.get_level_values("query_id")[np.asarray(truth_arms == arm, dtype=bool)]
        found[rows] = in_values(keys.get_level_values("query_id")[rows], qids)
    return found


def _criterion_entry(
    rows: pd.DataFrame, unlabelled: pd.DataFrame, options: AnalysisOptions
) -> CriterionJudge:
    """TPR/TNR on the labelled responses and the corrected pass rate over the others, its
    interval counting items (an item's responses and repeats are one cluster)."""
    labels, preds = rows["human"] == "Pass", rows["verdict"] == "Pass"
    n = len(rows)
    corrected: CorrectedRateMetric | Skipped = (
        skipped(
            "every response this judge assessed has a human label: human_pass_rate is the answer"
        )
        if unlabelled.empty
        else attempt(
            CorrectedRateMetric,
            stats.corrected_pass_rate,
            labels.to_numpy(),
            preds.to_numpy(),
            (unlabelled["verdict"] == "Pass").to_numpy(),
            n=n + len(unlabelled),
            confidence=options.confidence,
            rng=options.seed,
            clusters=(rows["query_id"].to_numpy(), unlabelled["query_id"].to_numpy()),
        )
    )
    return CriterionJudge(
        tpr_tnr=attempt(
            TprTnrMetric,
            stats.tpr_tnr,
            labels.to_numpy(),
            preds.to_numpy(),
            n=n,
            confidence=options.confidence,
        ),
        human_pass_rate=wilson_share(int(labels.sum()), n, options),
        judge_pass_rate=wilson_share(int(preds.sum()), n, options),
        corrected_pass_rate=corrected,
    )


def _criterion(frame: AnalysisFrame, options: AnalysisOptions) -> HumanCriterion:
    human = frame.labels.verdicts
    if human.empty:
        return HumanCriterion.skip("no human Pass/Fail verdicts in the labels")
    ok = fresh_records(frame).dropna(subset=["verdict", "target_arm"])
    if ok.empty:
        return HumanCriterion.skip("no criterion verdicts in the records")
    ok = ok.assign(criterion=ok["criterion"].fillna(""))
    keyed = ok.merge(
        human.rename(columns={"verdict": "human", "arm": "target_arm"}),
        on=["query_id", "target_arm"],
        how="left",
    )
    judges: dict[str, CriterionJudge | Skipped] = {}
    for (judge, criterion), rows in keyed.groupby(["judge", "criterion"]):
        labelled = rows.dropna(subset=["human"])
        name = f"{judge}|{criterion}" if criterion else str(judge)
        if labelled.empty:
            judges[name] = skipped("no labelled response among this judge's verdicts")
            continue
        judges[name] = _criterion_entry(
            labelled, rows.loc[rows["human"].isna(), ["verdict", "query_id"]], options
        )
    return HumanCriterion.of(positive_class="Pass", judges=judges)


def analyze_human(frame: AnalysisFrame, options: AnalysisOptions) -> HumanCalibration:
    """The human-calibration family."""
    labels = frame.labels
    if labels.empty and labels.annotators.empty:
        return HumanCalibration.skip("no human labels (item `human` fields or a labels mapping)")
    return HumanCalibration.of(
        inter_annotator=annotator_agreement(labels.annotators, options),
        preferences=_preference_kappas(frame, options),
        scores=_score_calibration(frame, options),
        criterion=_criterion(frame, options),
    )


def _accuracy(rows: pd.DataFrame, hit: pd.Series, options: AnalysisOptions) -> Accuracy:
    """Share of ``hit`` over the rows that succeeded (``ok``) and over all of them (failures
    counted wrong), both with intervals that count items (``query_id``), not judgments."""
    ok = rows["ok"].to_numpy(bool) if "ok" in rows else np.ones(len(rows), bool)
    outcomes, items = hit.to_numpy(float), rows["query_id"].to_numpy()
    correct = int(outcomes[ok].sum())
    metric = attempt(
        Accuracy,
        stats.clustered_proportion,
        outcomes[ok],
        items[ok],
        n=int(ok.sum()),
        confidence=options.confidence,
    )
    counted = (
        stats.clustered_proportion(outcomes, items, confidence=options.confidence)
        if len(rows)
        else None
    )
    return with_fields(
        metric,
        correct=correct,
        n_total=len(rows),
        accuracy_all=counted.estimate if counted else None,
        accuracy_all_ci_low=counted.ci_low if counted else None,
        accuracy_all_ci_high=counted.ci_high if counted else None,
    )


def _both_orders(pairs: pd.DataFrame, options: AnalysisOptions) -> Accuracy | Skipped:
    if pairs.empty:
        return skipped("no item was judged in both presentation orders")
    both = pairs["ok_1"] & pairs["ok_2"] & (pairs["pref_1"] == pairs["gold"])
    both &= pairs["pref_2"] == pairs["gold"]
    return _accuracy(pairs[["query_id"]], both, options)


def _judge_accuracy(
    rows: pd.DataFrame, pairs: pd.DataFrame, cons: pd.DataFrame, options: AnalysisOptions
) -> JudgeGoldAccuracy:
    def score(part: pd.DataFrame) -> Accuracy:
        return _accuracy(part, part["ok"] & (part["preferred_arm"] == part["gold"]), options)

    pooled = score(rows)
    return JudgeGoldAccuracy.given(
        orders={str(o): score(part) for o, part in rows.groupby("order")},
        pooled=pooled,
        consolidated=_accuracy(cons[["query_id"]], cons["label"] == cons["gold"], options),
        both_orders_correct=_both_orders(pairs, options),
        ties=_tie_conventions(rows, pooled),
    )


TIES_NOTE = (
    "A tie counts half in a benchmark's own figure (LLMBar gives a score tie to the output "
    "shown second, so it is right in one order of two) and wrong in the trust verdict's "
    "accuracy, which asks the judge to pick the gold answer; a tie where the gold is a tie is "
    "right in both, and not counted among the ties."
)


def _tie_conventions(rows: pd.DataFrame, pooled: Accuracy) -> TieConventions | None:
    """The pooled accuracy with ties wrong and half, failures wrong; None without a tie. Only a
    tie where the gold names a winner is wrong or half: one that matches a gold tie (PandaLM's
    labels have them) is already counted right."""
    ties = int((rows["ok"] & (rows["preferred_arm"] == "tie") & (rows["gold"] != "tie")).sum())
    if not ties or pooled.correct is None or not pooled.n_total:
        return None
    return TieConventions(
        ties=ties,
        n_total=pooled.n_total,
        ties_wrong=pooled.correct / pooled.n_total,
        ties_half=(pooled.correct + ties / 2) / pooled.n_total,
    )


def _by_judge(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each judge's rows, as ``table[table["judge"] == judge]`` gives them, split in one pass."""
    return {str(j): part for j, part in table.groupby("judge", sort=False, observed=True)}


def analyze_accuracy(frame: AnalysisFrame, options: AnalysisOptions) -> AccuracyVsGold:
    """Accuracy of each judge against gold preferences, per presentation order and overall;
    with labels from ``jurybox label``, also weighted by their design (``design``)."""
    design = design_accuracy(frame, options)
    extra: dict[str, Any] = {"design": design} if design is not None else {}
    gold = gold_preferences(frame)
    if gold.empty and design is not None:  # every label from `jurybox label`'s targeted stream
        return AccuracyVsGold.of(
            judges={},
            n_labelled=0,
            method="no gold preference outside the targeted stream: only design is computed",
            design=design,
        )
    if gold.empty:
        return AccuracyVsGold.skip(
            "no gold preference in the labels (imported benchmark data carries one)"
        )
    recs = pairwise_records(frame)
    recs = recs.assign(gold=recs["query_id"].map(gold)).dropna(subset=["gold"])
    if recs.empty:
        return AccuracyVsGold.skip("no pairwise judgment of a labelled item", **extra)
    pairs, cons = order_pairs(frame), consolidated(frame)
    pairs = pairs.assign(gold=pairs["query_id"].map(gold)).dropna(subset=["gold"])
    cons = cons.assign(gold=cons["query_id"].map(gold)).dropna(subset=["gold"])
    pairs_by, cons_by = _by_judge(pairs), _by_judge(cons)
    judges = {
        str(j): _judge_accuracy(
            rows, pairs_by.get(str(j), pairs.iloc[:0]), cons_by.get(str(j), cons.iloc[:0]), options
        )
        for j, rows in recs.groupby("judge")
    }
    if any(entry.ties is not None for entry in judges.values()):
        extra = {"ties_note": TIES_NOTE, **extra}
    return AccuracyVsGold.of(
        judges=judges,
        n_labelled=len(gold),
        method="correct = preferred arm equals the gold label; value over successful "
        "judgments, accuracy_all counts failures as wrong; consolidated: flip = tie; "
        "intervals count items (an item's orders and repeats are one cluster)",
        **extra,
    )
