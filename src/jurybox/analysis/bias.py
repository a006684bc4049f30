"""Judge biases: position (here), verbosity, self-enhancement and leniency (``content_bias``).

Position bias has three readings. Swap consistency: the share of pairs judged in both orders
where the judge prefers the same arm both times. First-position rate: among decisive verdicts
(not ties), the share that went to whatever was shown first, with an exact binomial test against
0.5 (Holm-adjusted across judges). Paired position test (primary where pairs were judged in both
orders): among pairs whose winner flipped with the order, the share won by the first-shown
response both times, exact sign test (Holm across judges). Score order effect: per dimension, the
score an arm gets when shown first minus when shown second, tested with Wilcoxon signed-rank.
"""

from __future__ import annotations

from typing import TypeVar

import pandas as pd

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    attempt,
    fresh_records,
    fresh_scores,
    judge_rows,
    rate,
    skipped,
    with_fields,
)
from jurybox.analysis.content_bias import analyze_leniency, analyze_verbosity, design_effect
from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.bias import (
    Bias,
    FirstPositionRate,
    PairedPosition,
    Position,
    PositionJudge,
    ScoreOrderEffect,
    SwapConsistency,
)
from jurybox.analysis.model.metrics import BinomialTestMetric
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import order_pairs
from jurybox.analysis.self_enhancement import analyze_self

SWAP_METHOD = (
    "same preferred arm (or tie) in both presentation orders; value over pairs where both "
    "orders succeeded; consistent_or_both_failed also counts pairs failed in both orders as "
    "equal (the LLMBar 'equal' convention) over n_pairs_total; intervals: Agresti-Coull on the "
    "effective number of pairs, items as clusters (an item's repeats are one cluster)"
)


def _swap_interval(
    same: pd.Series, items: pd.Series, confidence: float
) -> tuple[float | None, float | None]:
    if same.empty:
        return None, None
    found = stats.clustered_proportion(
        same.to_numpy(float), items.to_numpy(), confidence=confidence
    )
    return found.ci_low, found.ci_high


def swap_consistency(pairs: pd.DataFrame, confidence: float = 0.95) -> SwapConsistency:
    """Swap consistency of one judge's order pairs (see ``SWAP_METHOD``)."""
    both_ok = pairs["ok_1"] & pairs["ok_2"]
    both_failed = ~pairs["ok_1"] & ~pairs["ok_2"]
    same = both_ok & (pairs["pref_1"] == pairs["pref_2"])
    consistent = int(same.sum())
    n = int(both_ok.sum())
    value = rate(consistent, n)
    low, high = _swap_interval(same[both_ok], pairs.loc[both_ok, "query_id"], confidence)
    all_low, all_high = _swap_interval(same, pairs["query_id"], confidence)
    return SwapConsistency(
        value=value,
        ci_low=low,
        ci_high=high,
        n=n,
        n_items=int(pairs["query_id"].nunique()),
        consistent=consistent,
        n_pairs_total=len(pairs),
        both_failed=int(both_failed.sum()),
        one_failed=int((~both_ok & ~both_failed).sum()),
        consistent_or_both_failed=consistent + int(both_failed.sum()),
        value_failures_counted=rate(consistent, len(pairs)),
        failures_counted_ci_low=all_low,
        failures_counted_ci_high=all_high,
        equal=rate(consistent + int(both_failed.sum()), len(pairs)),
        method=SWAP_METHOD,
        reason=None if value is not None else "no pair succeeded in both orders",
    )


def _first_position(
    ok: pd.DataFrame, options: AnalysisOptions
) -> dict[str, FirstPositionRate | Skipped]:
    # A verdict derived from scoring each response alone never had a first position.
    ok = ok[ok["positions_shown"]]
    decisive = ok[(ok["n_positions"] == 2) & ok["preference"].isin(["A", "B"])]
    ties = ok[(ok["n_positions"] == 2) & (ok["preference"] == "tie")].groupby("judge").size()
    out: dict[str, FirstPositionRate | Skipped] = {}
    for judge, rows in decisive.groupby("judge"):
        if rows["first_arm"].nunique() < 2:
            # One arm always shown first: a first-position preference is indistinguishable
            # from a preference for that arm.
            out[str(judge)] = skipped(
                f"every judgment showed '{rows['first_arm'].iloc[0]}' first: position and arm "
                "are confounded (judge in both orders or in random order)"
            )
            continue
        picked_first = rows["preference"] == "A"
        metric = attempt(
            FirstPositionRate,
            stats.binomial_test,
            int(picked_first.sum()),
            len(rows),
            0.5,
            n=len(rows),
            confidence=options.confidence,
            design_effect=design_effect(picked_first, rows["query_id"]),
        )
        out[str(judge)] = with_fields(metric, ties=int(ties.get(judge, 0)))
    return _with_holm(out, options.alpha)


def _paired_position(
    ok: pd.DataFrame, options: AnalysisOptions
) -> dict[str, PairedPosition | Skipped]:
    """Per judge, the exact sign test on pairs decided in both orders (ties dropped)."""
    decisive = ok[ok["positions_shown"] & (ok["n_positions"] == 2)]
    decisive = decisive[decisive["preference"].isin(["A", "B"])]
    wide = decisive.drop_duplicates(["judge", "query_id", "repeat", "first_arm"]).pivot(
        index=["judge", "query_id", "repeat"], columns="first_arm", values="preference"
    )
    out: dict[str, PairedPosition | Skipped] = {}
    if wide.shape[1] != 2:
        return out
    both = wide.dropna()
    for judge, rows in both.groupby(level="judge"):
        first = rows == "A"
        out[str(judge)] = attempt(
            PairedPosition,
            stats.paired_position_test,
            first.iloc[:, 0].to_numpy(),
            first.iloc[:, 1].to_numpy(),
            n=len(rows),
            confidence=options.confidence,
            clusters=rows.index.get_level_values("query_id").to_numpy(),
        )
    return _with_holm(out, options.alpha)


P = TypeVar("P", FirstPositionRate, PairedPosition)


def _with_holm(metrics: dict[str, P | Skipped], alpha: float) -> dict[str, P | Skipped]:
    """Every metric with ``p_holm`` (Holm-adjusted across the ones with a p-value, else None)."""
    tested = {
        k: m.p_value
        for k, m in metrics.items()
        if not isinstance(m, Skipped) and m.p_value is not None
    }
    adjusted = (
        dict(zip(tested, stats.holm(list(tested.values()), alpha=alpha).adjusted, strict=True))
        if tested
        else {}
    )
    return {
        k: m if isinstance(m, Skipped) else with_fields(m, p_holm=adjusted.get(k))
        for k, m in metrics.items()
    }


def _top_position(ok: pd.DataFrame, options: AnalysisOptions) -> dict[str, BinomialTestMetric]:
    """Ranking mode: how often the response shown first is ranked best, against 1/k."""
    ranked = ok[ok["ranking"].notna() & (ok["n_positions"] >= 2)]
    out: dict[str, BinomialTestMetric] = {}
    for (judge, _), rows in ranked.groupby(["judge", "n_positions"]):
        k = int(rows["n_positions"].iloc[0])
        top_first = int((rows["ranking"].str[0] == rows["first_arm"]).sum())
        out[f"{judge}|k={k}"] = attempt(
            BinomialTestMetric,
            stats.binomial_test,
            top_first,
            len(rows),
            1 / k,
            n=len(rows),
            confidence=options.confidence,
        )
    return out


def _score_orders(frame: AnalysisFrame) -> dict[str, pd.DataFrame]:
    """Per judge, the mean score of each (item, repeat, arm, dimension) by the position it was
    shown in (columns A and B), pivoted once for every judge."""
    keys = ["judge", "query_id", "repeat", "arm", "dimension"]
    rows = fresh_scores(frame, columns=[*keys, "position", "score"])
    rows = rows[rows["position"].isin(["A", "B"])]
    if rows.empty:
        return {}
    wide = rows.pivot_table(index=keys, columns="position", values="score", aggfunc="mean")
    if not {"A", "B"} <= set(wide.columns):
        return {}
    wide = wide.dropna(subset=["A", "B"])
    return {str(j): part.droplevel("judge") for j, part in wide.groupby(level="judge")}


def _score_order_effect(frame: AnalysisFrame, judge: str) -> dict[str, ScoreOrderEffect]:
    wide = frame.memo("score_orders", lambda: _score_orders(frame)).get(judge)
    if wide is None:
        return {}
    out: dict[str, ScoreOrderEffect] = {}
    for dim, part in wide.groupby(level="dimension"):
        metric = attempt(
            ScoreOrderEffect, stats.wilcoxon_signed_rank, part["A"], part["B"], n=len(part)
        )
        out[str(dim)] = with_fields(
            metric,
            mean_difference=float((part["A"] - part["B"]).mean()),
            difference="score shown first minus score shown second, same arm and item",
        )
    return dict(sorted(out.items(), key=lambda kv: (kv[0] == TOTAL, kv[0])))


def analyze_position(frame: AnalysisFrame, options: AnalysisOptions) -> Position:
    """Position-bias section: swap consistency, first-position rate, score order effect."""
    ok = fresh_records(frame)
    two_sided = ok["n_positions"] >= 2
    if not two_sided.any():
        return Position.skip(
            "no judgment showed two or more responses (rubric/criterion modes judge "
            "one response at a time, so there is no position to prefer)"
        )
    pairs = order_pairs(frame)
    first = _first_position(ok, options)
    paired = _paired_position(ok, options)
    judges: dict[str, PositionJudge] = {}
    for judge in frame.judges:
        own = judge_rows(frame, "order_pairs", lambda: pairs, judge)
        judges[judge] = PositionJudge(
            swap_consistency=swap_consistency(own, options.confidence)
            if len(own)
            else skipped("no item was judged in both orders (position_bias_mode is not 'both')"),
            first_position_rate=first.get(judge) or skipped("no decisive two-way verdict"),
            score_order_effect=_score_order_effect(frame, judge),
            paired_position_test=paired.get(judge)
            or skipped("no decisive verdict on a pair judged in both orders"),
        )
    return Position.of(judges=judges, top_position_rate=_top_position(ok, options))


def analyze_bias(frame: AnalysisFrame, options: AnalysisOptions) -> Bias:
    """The bias family: position, verbosity, self-enhancement, leniency."""
    if frame.ok.empty:
        return Bias.skip("no successful judgment")
    return Bias.of(
        position=analyze_position(frame, options),
        verbosity=analyze_verbosity(frame, options),
        self_enhancement=analyze_self(frame, options),
        leniency=analyze_leniency(frame, options),
    )
