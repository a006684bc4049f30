"""Each judge's ``JudgeEvidence`` (``jurybox.analysis.trust``), read from the computed families.

* Accuracy: the pooled accuracy against gold, failures counted as wrong (the headline) and over
  parsed verdicts only; both intervals count items, not judgments (``stats.clustered_proportion``:
  an item's two orders and its repeats are one cluster). For judges that only scored,
  quadratic-weighted κ of the total against human scores stands in (its interval a bootstrap over
  items), or the ICC(2,1) of the total where the human scores are fractional and κ is undefined
  (quadratic-weighted κ and the ICC coincide on a continuous scale: Fleiss & Cohen 1973).
* Pass/Fail (criterion mode): the judge's TPR over the responses humans labelled
  Pass and TNR over those labelled Fail, every criterion pooled, failures counted as wrong
  (``_pass_fail``); each interval ``stats.clustered_proportion`` over items (an item's criteria,
  responses and repeats are one cluster). The trust rule reads the worse of the two.
* Swap consistency: failures counted as inconsistent (its interval over items), and over pairs
  parsed in both orders; only for judges that saw both responses together.
* Position and length: with gold labels, the judge's pull *beyond* the labels
  (``stats.position_preference_given_truth`` / ``length_preference_given_truth``); without, the
  raw first-pick / longer-wins effect, which for length can only ever warn. Each test counts
  items: an item's two orders (and repeats) are one cluster (Rao–Scott design effect). Every
  p-value is Holm-adjusted across all judges and both tests together, so a "detected" flag
  controls the family-wise error of the whole verdict.
* Self-preference: the judge's excess for its own family's responses over neutral judges (a
  warning only: the reference is other judges, not the truth).
* Length on scores: partial Spearman of the judge's total with length given the human score where
  human scores exist, else the raw Spearman (a warning only); one value per item (``_per_item``).
* Test-retest: share of repeated pairwise judgments with the same verdict, or the ICC of the total
  for scores (clipped at 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from jurybox import stats
from jurybox.analysis._common import TOTAL, judge_rows, keyed_like, value_of
from jurybox.analysis.calibration import gold_preferences
from jurybox.analysis.content_bias import design_effect, longer_arm
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model.accuracy import AccuracyVsGold
from jurybox.analysis.model.bias import Bias, FirstPositionRate, SwapConsistency
from jurybox.analysis.model.human import HumanCalibration
from jurybox.analysis.model.metrics import KappaMetric
from jurybox.analysis.model.reliability import Reliability
from jurybox.analysis.model.self_enhancement import SelfScores
from jurybox.analysis.model.summary import Summary
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import pairwise_records
from jurybox.analysis.trust import BiasTest, Estimate, JudgeEvidence, PassFailAgreement

_RawTest = tuple[float, float, bool]  # (effect, raw p-value, conditioned on the truth)
PASS_FAIL_METHOD = "min(TPR, TNR); each rate clustered_proportion: Agresti–Coull over items"


@dataclass(frozen=True)
class Families:
    """The computed sections the evidence reads."""

    summary: Summary
    bias: Bias
    reliability: Reliability
    human_calibration: HumanCalibration
    accuracy_vs_gold: AccuracyVsGold


def _estimate(value: float | None, low: float | None, high: float | None) -> Estimate | None:
    if value is None or low is None or high is None:
        return None
    # A bootstrap interval may miss its own point estimate by a hair; widen it to hold it.
    return Estimate(value, min(low, value), max(high, value))


def _accuracy(f: Families, judge: str) -> tuple[Estimate | None, ...]:
    acc = f.accuracy_vs_gold
    weighted = _design_accuracy(f, judge, acc.n_labelled or 0)
    if weighted is not None:  # labels chosen by `jurybox label`: weighted by their design
        return weighted
    entry = (acc.judges or {}).get(judge) if acc.computed else None
    if entry is None:
        return None, None
    pooled = entry.pooled
    counted = _estimate(
        pooled.accuracy_all, pooled.accuracy_all_ci_low, pooled.accuracy_all_ci_high
    )
    return counted, _estimate(pooled.value, pooled.ci_low, pooled.ci_high)


def _design_accuracy(f: Families, judge: str, n_plain: int) -> tuple[Estimate | None, ...] | None:
    """The stratum-weighted accuracy (``analysis.labelling``) when it could be computed and
    rests on at least as many labelled items as the plain one (both are unbiased: the plain
    one reads no targeted label; the choice depends on counts only, never on the figures)."""
    design = f.accuracy_vs_gold.design
    entry = (design.judges or {}).get(judge) if design is not None and design.computed else None
    if entry is None or entry.counted.value is None or entry.counted.n < n_plain:
        return None
    counted, parsed = entry.counted, entry.parsed
    return (
        _estimate(counted.value, counted.ci_low, counted.ci_high),
        _estimate(parsed.value, parsed.ci_low, parsed.ci_high),
    )


def _kappa(f: Families, judge: str) -> tuple[Estimate | None, bool]:
    """Quadratic-weighted kappa of the total against the human scores, or, where the human
    scores are fractional (kappa undefined), the ICC(2,1) of the total: (estimate, is ICC)."""
    human = f.human_calibration
    scores = human.scores if human.computed else None
    entry = (scores.judges or {}).get(judge) if scores is not None and scores.computed else None
    if entry is None or not entry.dimensions:
        return None, False
    dim = TOTAL if TOTAL in entry.dimensions else next(iter(entry.dimensions))
    if entry.dimensions[dim].continuous and entry.total_icc is not None:
        icc = entry.total_icc
        return _estimate(icc.value, icc.ci_low, icc.ci_high), True
    metric = entry.dimensions[dim].weighted_quadratic
    if not isinstance(metric, KappaMetric):
        return None, False
    return _estimate(metric.value, metric.ci_low, metric.ci_high), False


def _swap(f: Families, judge: str) -> tuple[float | None, float | None, Estimate | None]:
    """Swap consistency failures counted (and its interval over items), and over parsed pairs."""
    position = f.bias.position if f.bias.computed else None
    entry = (position.judges or {}).get(judge) if position and position.computed else None
    swap = entry.swap_consistency if entry is not None else None
    if not isinstance(swap, SwapConsistency):
        return None, None, None
    counted = swap.value_failures_counted
    interval = _estimate(counted, swap.failures_counted_ci_low, swap.failures_counted_ci_high)
    return counted, swap.value, interval


def _decided(frame: AnalysisFrame, judge: str) -> pd.DataFrame:
    """The judge's decisive two-way verdicts that saw both responses, with gold where known."""

    def build() -> pd.DataFrame:
        recs = pairwise_records(frame)
        recs = recs[recs["ok"] & recs["preference"].isin(["A", "B"])]
        return recs.assign(gold=recs["query_id"].map(gold_preferences(frame)))

    return judge_rows(frame, "evidence_decided", build, judge)


def _conditional(
    test: Callable[..., stats.ConditionalPreference],
    picked: pd.Series,
    gold: pd.Series,
    items: pd.Series,
) -> _RawTest | None:
    try:
        found = test(picked.to_numpy(bool), gold.to_numpy(bool), clusters=items.to_numpy())
    except ValueError:  # nothing decided, or the gold always on one side: not testable
        return None
    return found.difference, found.p_value, True


def _position(frame: AnalysisFrame, f: Families, judge: str) -> _RawTest | None:
    rows = _decided(frame, judge)
    rows = rows[rows["positions_shown"]]
    labelled = rows[rows["gold"].notna() & (rows["gold"] != "tie")]
    if not labelled.empty:
        picked = labelled["preference"] == "A"
        return _conditional(
            stats.position_preference_given_truth,
            picked,
            labelled["gold"] == labelled["first_arm"],
            labelled["query_id"],
        )
    position = f.bias.position if f.bias.computed else None
    entry = (position.judges or {}).get(judge) if position and position.computed else None
    # The binomial test there already divides its counts by the design effect over items.
    first = entry.first_position_rate if entry is not None else None
    if not isinstance(first, FirstPositionRate) or first.value is None or first.p_value is None:
        return None
    return 2 * first.value - 1, first.p_value, False


def _length(frame: AnalysisFrame, judge: str) -> _RawTest | None:
    longer = longer_arm(frame)
    rows = _decided(frame, judge)
    rows = rows.assign(longer=rows["query_id"].map(longer)).dropna(subset=["longer"])
    if rows.empty:
        return None
    picked = rows["preferred_arm"] == rows["longer"]
    labelled = rows["gold"].notna() & (rows["gold"] != "tie")
    if labelled.any():
        gold_longer = rows.loc[labelled, "gold"] == rows.loc[labelled, "longer"]
        return _conditional(
            stats.length_preference_given_truth,
            picked[labelled],
            gold_longer,
            rows.loc[labelled, "query_id"],
        )
    share = stats.binomial_test(
        int(picked.sum()), len(picked), design_effect=design_effect(picked, rows["query_id"])
    )
    return 2 * share.proportion - 1, share.p_value, False


def _score_length(frame: AnalysisFrame, judge: str) -> _RawTest | None:
    """Judge's total score vs response length, one value per item (``_per_item``); beyond the
    human scores where they exist."""
    own = judge_rows(frame, "evidence_scores", lambda: judge_scores(frame), judge)
    own = own.merge(keyed_like(frame.items, own), on=["query_id", "arm"])
    own = own.dropna(subset=["length", "score"])
    human = frame.memo("evidence_human_scores", lambda: _human_scores(frame))
    labelled = own.merge(human, on=["query_id", "arm"], suffixes=("", "_human"))
    try:
        if len(labelled) >= 4:
            x, y, z = _per_item(labelled, ["length", "score", "score_human"])
            if len(x) >= 4:
                found = stats.partial_spearman(x, y, z)
                return found.rho, found.p_value, True
        x, y = _per_item(own, ["length", "score"])
        if len(x) < 4:
            return None
        found = stats.spearman(x, y)
    except ValueError:  # constant scores or lengths: no correlation to test
        return None
    return found.rho, found.p_value, False


def _per_item(rows: pd.DataFrame, columns: list[str]) -> list[NDArray[np.float64]]:
    """One value per item of each column, so that an item's orders, repeats and responses
    count once. Each response's mean over its judgments; then an item of one response is that
    response, an item of two (every item) the difference between them (a contrast within the
    item: what the item shares cancels); with more, each response's deviation from its item's
    mean (items of a single response left out)."""
    by_response = rows.groupby(["query_id", "arm"], observed=True)[columns].mean()
    per_item = by_response.groupby(level="query_id", observed=True)
    sizes = per_item[columns[0]].transform("size").to_numpy()
    if (sizes == 1).all():
        values = by_response
    elif (sizes == 2).all():
        values = per_item.first() - per_item.last()
    else:
        values = (by_response - per_item.transform("mean"))[sizes > 1]
    return [values[c].to_numpy(float) for c in columns]


def _human_scores(frame: AnalysisFrame) -> pd.DataFrame:
    """The mean human score of each response (the total where labelled, else every dimension)."""
    labels = frame.labels.scores
    if TOTAL in set(labels["dimension"]):
        labels = labels[labels["dimension"] == TOTAL]
    return labels.groupby(["query_id", "arm"], as_index=False).agg(score=("score", "mean"))


def _self_preference(f: Families, judge: str) -> _RawTest | None:
    bias = f.bias
    found = bias.self_enhancement if bias.computed else None
    if found is None or not found.computed:
        return None
    prefs = found.preferences
    by_pref = (prefs.judges or {}) if prefs is not None and prefs.computed else {}
    entry = by_pref.get(judge)
    if entry is not None:
        p, excess = entry.relative_test.p_value, entry.excess
    else:
        scores = (found.judges or {}).get(judge)
        if not isinstance(scores, SelfScores):
            return None
        p, excess = scores.relative_test.p_value, scores.relative_test.excess
    if p is None or excess is None:
        return None
    # Score excesses are in score points: clipped to the [-1, 1] the bias limits are set on.
    return excess, p, False


def _retest_shares(frame: AnalysisFrame) -> dict[str, float]:
    """Per judge with repeated preferences, the share of retests with the test's verdict."""
    ok = frame.ok
    ok = ok[ok["preferred_arm"].notna()]
    test = ok[~ok["retest"]][["judge", "key", "preferred_arm"]]
    again = ok[ok["retest"]][["judge", "base_key", "preferred_arm"]]
    again = again.rename(columns={"base_key": "key"})
    pairs = test.merge(again, on=["judge", "key"], suffixes=("_test", "_retest"))
    same = pairs["preferred_arm_test"] == pairs["preferred_arm_retest"]
    return {str(j): float(share) for j, share in same.groupby(pairs["judge"]).mean().items()}


def _retest(frame: AnalysisFrame, f: Families, judge: str) -> tuple[float | None, bool]:
    """(agreement, whether it is the ICC of scores rather than a share of equal verdicts)."""
    shares = frame.memo("retest_shares", lambda: _retest_shares(frame))
    if judge in shares:
        return shares[judge], False
    rel = f.reliability
    retest = rel.test_retest if rel.computed else None
    judges = (retest.judges or {}) if retest is not None and retest.computed else {}
    icc = value_of(judges[judge]) if judge in judges else None
    return (None, False) if icc is None else (min(1.0, max(0.0, icc)), True)


def _pass_fail(frame: AnalysisFrame, judge: str, confidence: float) -> PassFailAgreement | None:
    """TPR and TNR of the judge's Pass/Fail verdicts on the human-labelled responses, a failed
    call counted as wrong in either; None unless both classes are labelled (one class alone
    cannot tell a judge that always gives it from a good one)."""
    own = _records(frame, judge)
    own = own[(own["mode"] == "criterion") & ~own["retest"] & own["target_arm"].notna()]
    human = frame.labels.verdicts.rename(columns={"verdict": "human", "arm": "target_arm"})
    rows = own.merge(
        human.drop_duplicates(["query_id", "target_arm"]), on=["query_id", "target_arm"]
    )
    positive = rows["human"] == "Pass"
    if not positive.any() or positive.all():
        return None
    right = rows["ok"] & (rows["verdict"] == rows["human"])

    def rate(part: pd.Series) -> Estimate:
        found = stats.clustered_proportion(
            right[part].to_numpy(float),
            rows.loc[part, "query_id"].to_numpy(),
            confidence=confidence,
        )
        return Estimate(found.estimate, found.ci_low, found.ci_high)

    return PassFailAgreement(
        tpr=rate(positive),
        tnr=rate(~positive),
        n_items=int(rows["query_id"].nunique()),
        method=PASS_FAIL_METHOD,
    )


def _has_labels(frame: AnalysisFrame, judge: str) -> bool:
    labels = frame.labels
    # The distinct ids first, as a list made in one call: a set of the column would box a
    # Python string per record, and iterating an Arrow-backed array boxes one per call.
    own = set(_records(frame, judge)["query_id"].unique().tolist())
    labelled = frame.memo(
        "evidence_labelled",
        lambda: (
            set(labels.preferences["query_id"].tolist())
            | set(labels.scores["query_id"].tolist())
            | set(labels.verdicts["query_id"].tolist())
        ),
    )
    return bool(own & labelled)


def _records(frame: AnalysisFrame, judge: str) -> pd.DataFrame:
    return judge_rows(frame, "records", lambda: frame.records, judge)


def _base(frame: AnalysisFrame, f: Families, judge: str, confidence: float) -> JudgeEvidence:
    failures = f.summary.failures.get(judge)
    skipped = failures.by_status.get("skipped", 0) if failures else 0
    n_judgments = failures.n_records - skipped if failures else 0
    own = _records(frame, judge)
    two_way = own[own["n_positions"] == 2]
    shown = two_way.empty or bool(two_way["positions_shown"].any())
    accuracy, accuracy_parsed = _accuracy(f, judge)
    kappa, kappa_is_icc = _kappa(f, judge)
    swap, swap_parsed, swap_interval = _swap(f, judge) if shown else (None, None, None)
    retest, retest_is_icc = _retest(frame, f, judge)
    pass_fail = _pass_fail(frame, judge, confidence)
    return JudgeEvidence(
        judge=judge,
        n_items=int(own["query_id"].nunique()),
        n_judgments=n_judgments,
        failure_rate=(failures.failure_rate or 0.0) if failures else 0.0,
        has_labels=_has_labels(frame, judge) or accuracy is not None or kappa is not None,
        pass_fail=pass_fail,
        positions_shown=shown,
        accuracy=accuracy,
        accuracy_parsed=accuracy_parsed,
        kappa=kappa,
        kappa_is_icc=kappa_is_icc,
        swap_consistency=swap,
        swap_consistency_parsed=swap_parsed,
        swap_interval=swap_interval,
        retest_agreement=retest,
        retest_is_icc=retest_is_icc,
    )


def _stopped(ev: JudgeEvidence, options: AnalysisOptions) -> JudgeEvidence:
    """A judge of a ``--until decided`` run (stopped or not: the run looked after every block):
    the manifest's anytime-valid accuracy interval, read by the accuracy check in place of the
    fixed-n one."""
    entry = (options.stopping or {}).get("judges", {}).get(ev.judge)
    if ev.accuracy is None or not entry or (options.stopping or {}).get("metric") != "accuracy":
        return ev
    value, low, high = entry.get("estimate"), entry.get("ci_low"), entry.get("ci_high")
    anytime = _estimate(value, low, high)
    return replace(ev, accuracy_anytime=anytime) if anytime is not None else ev


def judge_evidence(
    frame: AnalysisFrame, families: Families, options: AnalysisOptions
) -> list[JudgeEvidence]:
    """One ``JudgeEvidence`` per judge of the frame, bias p-values Holm-adjusted together."""
    judges = list(frame.judges)
    base = [
        _stopped(_base(frame, families, judge, options.confidence), options) for judge in judges
    ]
    raw: list[tuple[int, str, _RawTest]] = []
    for index, judge in enumerate(judges):
        found = {
            "position": _position(frame, families, judge),
            "length": _length(frame, judge) or _score_length(frame, judge),
            "self_preference": _self_preference(families, judge),
        }
        raw += [
            (index, kind, test)
            for kind, test in found.items()
            if test is not None and math.isfinite(test[0]) and math.isfinite(test[1])
        ]
    if not raw:
        return base
    adjusted = stats.holm([test[1] for _, _, test in raw]).adjusted
    tests: list[dict[str, BiasTest]] = [{} for _ in judges]
    for (index, kind, (effect, _, conditioned)), p in zip(raw, adjusted, strict=True):
        tests[index][kind] = BiasTest(
            effect=max(-1.0, min(1.0, effect)),
            p_adjusted=min(1.0, float(p)),
            conditioned_on_truth=conditioned,
        )
    return [
        replace(
            ev,
            position=found.get("position"),
            length=found.get("length"),
            self_preference=found.get("self_preference"),
        )
        for ev, found in zip(base, tests, strict=True)
    ]
