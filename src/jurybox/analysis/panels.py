"""Panels: combining several judges into one verdict.

Majority vote over the judges' consolidated preferences (flip = tie) and criterion verdicts; mean
and per-judge z-normalised mean of total scores (z removes each judge's leniency and spread
before averaging); Borda count over rankings; Dawid-Skene EM to estimate each judge's accuracy
without gold labels; pairwise win rates with intervals between every two arms.
"""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pandas as pd

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    extend,
    fresh_records,
    json_safe,
    majority_vote,
    mapped,
    skipped,
    wilson_share,
    win_rate,
)
from jurybox.analysis.calibration import gold_preferences
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.metrics import WinRateMetric
from jurybox.analysis.model.panels import (
    ArmScore,
    Borda,
    BordaBlock,
    DawidSkene,
    DawidSkeneBlock,
    JudgeAccuracy,
    Majority,
    MajorityVote,
    Panels,
    ScorePanel,
    WinRateRow,
    WinRates,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import consolidated

_ITEM = ["query_id", "repeat"]


def _majority(
    labels: pd.DataFrame, unit: list[str], frame: AnalysisFrame, options: AnalysisOptions
) -> Majority:
    votes = majority_vote(labels, unit, "label")
    counts = votes.dropna().value_counts()
    gold = gold_preferences(frame)
    accuracy = None
    if "query_id" in unit and len(gold):
        decided = votes.dropna()
        qids = decided.index.get_level_values("query_id")
        target = pd.Series(qids.map(gold.to_dict()), index=decided.index).dropna()
        hits = int((decided.loc[target.index] == target).sum())
        accuracy = wilson_share(hits, len(target), options)
    return Majority.given(
        n_items=len(votes),
        counts={str(k): int(v) for k, v in counts.items()},
        no_majority=int(votes.isna().sum()),
        accuracy_vs_gold=accuracy,
    )


def _majority_section(frame: AnalysisFrame, options: AnalysisOptions) -> MajorityVote:
    out: dict[str, Majority] = {}
    cons = consolidated(frame)
    if cons["judge"].nunique() >= 2:
        out["preferences"] = _majority(cons, _ITEM, frame, options)
    ok = fresh_records(frame).dropna(subset=["verdict", "target_arm"])
    if ok["judge"].nunique() >= 2:
        verdicts = ok.assign(label=ok["verdict"], criterion=ok["criterion"].fillna(""))
        out["verdicts"] = _majority(
            verdicts, ["query_id", "target_arm", "criterion", "repeat"], frame, options
        )
    if not out:
        return MajorityVote.skip("fewer than two judges gave preferences or verdicts")
    return MajorityVote.of(method="strict plurality; consolidated verdicts (flip = tie)", **out)


def _score_panel(frame: AnalysisFrame) -> ScorePanel:
    scores = judge_scores(frame, TOTAL)
    if scores["judge"].nunique() < 2:
        return ScorePanel.skip("fewer than two judges gave scores")
    spread = scores.groupby("judge")["score"].agg(["mean", "std"])
    flat = spread[spread["std"].fillna(0) == 0].index.tolist()
    stats_of = mapped(scores["judge"], spread["mean"]), mapped(scores["judge"], spread["std"])
    z = (scores["score"] - stats_of[0]) / stats_of[1].where(stats_of[1] > 0)
    scores = scores.assign(z=z)
    per_item = scores.groupby(["query_id", "arm"]).agg(mean=("score", "mean"), z_mean=("z", "mean"))
    arms = per_item.groupby("arm").agg(
        mean=("mean", "mean"), z_mean=("z_mean", "mean"), n_items=("mean", "size")
    )
    return ScorePanel.of(
        arms={
            str(a): ArmScore(
                mean=_finite(float(r["mean"])),
                n_items=int(r["n_items"]),
                z_mean=None if np.isnan(r["z_mean"]) else float(r["z_mean"]),
            )
            for a, r in arms.iterrows()
        },
        judges_without_spread=[str(j) for j in flat],
        method="per (item, arm): mean over judges of each judge's mean score; z: each judge's "
        "scores standardised by its own mean and SD first (judges with zero SD left out)",
    )


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _borda(frame: AnalysisFrame) -> Borda:
    ok = fresh_records(frame)
    ok = ok[ok["ranking"].notna()]
    if ok.empty:
        return Borda.skip("no rankings in the records (ranking mode)")

    def borda(rankings: pd.Series) -> BordaBlock | Skipped:
        try:
            result = stats.borda_count([tuple(r) for r in rankings])
        except ValueError as exc:
            return skipped(str(exc))
        return BordaBlock.model_validate(
            json_safe(
                {
                    "ranking": list(result.ranking),
                    "scores": dict(result.scores),
                    "n_rankings": result.n_rankings,
                    "method": result.method,
                }
            )
        )

    return Borda.of(
        panel=borda(ok["ranking"]),
        judges={str(j): borda(r["ranking"]) for j, r in ok.groupby("judge")},
    )


def _dawid_skene_block(
    labels: pd.DataFrame, unit: list[str], options: AnalysisOptions
) -> DawidSkeneBlock | Skipped:
    matrix = labels.drop_duplicates([*unit, "judge"]).pivot(
        index=unit, columns="judge", values="label"
    )
    data = matrix.T.astype(object).where(matrix.T.notna(), None).to_numpy()
    try:
        result = stats.dawid_skene(data, rng=options.seed)
    except ValueError as exc:
        return skipped(str(exc))
    counts = pd.Series(result.labels).value_counts()
    return DawidSkeneBlock.model_validate(
        json_safe(
            {
                "judges": {
                    str(j): JudgeAccuracy(accuracy=_finite(float(a)))
                    for j, a in zip(matrix.columns, result.accuracy, strict=True)
                },
                "priors": {
                    str(c): float(p) for c, p in zip(result.classes, result.priors, strict=True)
                },
                "label_counts": {str(k): int(v) for k, v in counts.items()},
                "n_items": matrix.shape[0],
                "converged": result.converged,
                "n_iter": result.n_iter,
                "log_likelihood": result.log_likelihood,
                "method": result.method,
            }
        )
    )


def _dawid_skene(frame: AnalysisFrame, options: AnalysisOptions) -> DawidSkene:
    out: dict[str, DawidSkeneBlock | Skipped] = {}
    cons = consolidated(frame)
    if cons["judge"].nunique() >= 2:
        out["preferences"] = _dawid_skene_block(cons, _ITEM, options)
    ok = fresh_records(frame).dropna(subset=["verdict", "target_arm"])
    if ok["judge"].nunique() >= 2:
        verdicts = ok.assign(label=ok["verdict"], criterion=ok["criterion"].fillna(""))
        out["verdicts"] = _dawid_skene_block(
            verdicts, ["query_id", "target_arm", "criterion", "repeat"], options
        )
    if not out:
        return DawidSkene.skip("Dawid-Skene needs labels from at least two judges")
    return DawidSkene.of(**out)


def _win_rates(frame: AnalysisFrame, options: AnalysisOptions) -> WinRates:
    rows: list[WinRateRow] = []
    cons = consolidated(frame)
    panel = majority_vote(cons, _ITEM, "label").fillna("tie") if len(cons) else pd.Series()
    sources = [(str(j), g["label"]) for j, g in cons.groupby("judge")] + [("panel", panel)]
    for rater, labels in sources:
        if labels.empty:
            continue
        for arm, other in permutations(frame.arms[:2], 2):
            wins, losses = int((labels == arm).sum()), int((labels == other).sum())
            ties = int((labels == "tie").sum())
            rows.append(
                extend(
                    WinRateRow,
                    win_rate(WinRateMetric, wins, losses, ties, options),
                    arm=arm,
                    opponent=other,
                    rater=rater,
                    source="preferences",
                )
            )
    ranks = _rank_table(frame)
    for arm, other in permutations(ranks.columns, 2):
        both = ranks[[arm, other]].dropna()
        wins, losses = int((both[arm] < both[other]).sum()), int((both[arm] > both[other]).sum())
        rows.append(
            extend(
                WinRateRow,
                win_rate(WinRateMetric, wins, losses, 0, options),
                arm=str(arm),
                opponent=str(other),
                rater="panel",
                source="rankings",
            )
        )
    if not rows:
        return WinRates.skip("no preferences or rankings")
    return WinRates.of(pairs=rows, tie_policy="ties (and order flips) count half")


def _rank_table(frame: AnalysisFrame) -> pd.DataFrame:
    """Ranking records x arms of rank positions (0 = best), NaN where an arm is not ranked."""
    ranked = fresh_records(frame)
    ranked = ranked[ranked["ranking"].notna()]
    if ranked.empty:
        return pd.DataFrame()
    long = ranked[["rec", "ranking"]].explode("ranking")
    long = long.assign(rank=long.groupby("rec").cumcount())
    return long.pivot(index="rec", columns="ranking", values="rank")


def analyze_panels(frame: AnalysisFrame, options: AnalysisOptions) -> Panels:
    """The panel family."""
    if frame.ok.empty:
        return Panels.skip("no successful judgment")
    return Panels.of(
        majority_vote=_majority_section(frame, options),
        scores=_score_panel(frame),
        borda=_borda(frame),
        dawid_skene=_dawid_skene(frame, options),
        win_rates=_win_rates(frame, options),
    )
