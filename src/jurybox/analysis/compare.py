"""Two runs over the same items, paired item by item: what changed and is the change real.

Accuracy pairs *items*: per item, each run's share of right judgments over all of its
judgments of the item (both orders, retests), the change the mean per-item difference with
an adjusted Wald interval over items and the sign test over the items whose share moved; the
orders of an item usually agree, so they are not independent units (issue 33). Verdict
agreement and the changed-verdict list pair *units* (an item in one presentation order and
criterion, first repeat); their intervals count items: percent agreement's the design effect
over items, Cohen's kappa's a bootstrap drawing items (``CompareOptions.n_bootstrap``, ``seed``).
Scores are paired per response (item × arm, mean over orders) and tested per item (the mean over
its responses): paired t, Hodges–Lehmann shift, Wilcoxon, Spearman.
Judges are matched by name; judges whose names appear in one run only are paired by their order
of appearance, and the pairing says which.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from jurybox.analysis._common import TOTAL, attempt, with_fields
from jurybox.analysis.compare_answer import config_changes, headlines, trust_levels
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model.compare import (
    COMPARE_SCHEMA_VERSION,
    AccuracyComparison,
    ChangedUnit,
    CompareReport,
    GeneratedBy,
    JudgeComparison,
    JudgePairing,
    JudgeTrust,
    MeanDifferenceMetric,
    PairedDifferenceMetric,
    PositionComparison,
    RunComparison,
    RunSummary,
    ScoreComparison,
    ScoreStudy,
    ShareDifferenceMetric,
    ShiftMetric,
    VerdictComparison,
)
from jurybox.analysis.model.metrics import (
    ClusteredProportionMetric,
    CorrelationMetric,
    KappaMetric,
    McNemarMetric,
    PercentAgreementMetric,
    ProportionMetric,
    RankBiserialMetric,
    WilcoxonMetric,
)
from jurybox.analysis.score_study import compare_studies, score_study
from jurybox.stats import (
    clustered_proportion,
    cohen_kappa,
    mcnemar,
    percent_agreement,
    rank_biserial,
    spearman,
    wilcoxon_signed_rank,
    wilson_interval,
)
from jurybox.stats.paired import (
    hodges_lehmann,
    mean_difference,
    paired_proportion_difference,
    paired_share_difference,
)
from jurybox.versions import jurybox_version

UNIT = ["query_id", "order", "criterion"]
EXACT_MCNEMAR_MAX = 25  # discordant units up to which McNemar's exact binomial form is used


@dataclass(frozen=True)
class RunInput:
    """One run to compare: its label (A, B, ...), where it came from, and its tidy frame."""

    label: str
    source: str
    frame: AnalysisFrame
    n_records: int
    items_source: str | None = None  # where the items (lengths, labels) came from
    manifest: Mapping[str, Any] | None = None  # the run's manifest.json (None: an import)
    report: str | None = None  # the run's report.html, for links into its item explorer


@dataclass(frozen=True)
class CompareOptions:
    confidence: float = 0.95
    n_bootstrap: int = 1000
    seed: int = 0
    max_changed: int = 500  # changed units listed per judge pair (the rest counted)


def compare_runs(runs: Sequence[RunInput], options: CompareOptions | None = None) -> CompareReport:
    """Every run after the first compared with the first (the baseline)."""
    if len(runs) < 2:
        raise ValueError(f"compare needs at least two runs, got {len(runs)}")
    options = options or CompareOptions()
    studies = {run.label: score_study(run, options) for run in runs}
    trust = {run.label: trust_levels(run.frame) for run in runs}
    comparisons = [_compare_pair(runs[0], run, studies, trust, options) for run in runs[1:]]
    return CompareReport(
        schema_version=COMPARE_SCHEMA_VERSION,
        generated_by=GeneratedBy(package="jurybox", version=jurybox_version()),
        confidence=options.confidence,
        runs=[_summary(run, trust[run.label]) for run in runs],
        comparisons=comparisons,
        studies=[study for study in studies.values() if study is not None],
        notes=[
            f"Differences read B − A, A being the first run ({runs[0].label}).",
            "Judges are paired by name; judges found in one run only are paired by order of "
            "appearance (matched_by: order).",
            "Accuracy counts items: each run's share of right judgments of an item (both "
            "orders, retests), B − A the mean per-item difference.",
            f"McNemar's test (for accuracy: the sign test over items, its form) is exact "
            f"(binomial) up to {EXACT_MCNEMAR_MAX} discordant units, asymptotic chi-square "
            "beyond; each result names its variant.",
            "Better / worse: the headline test's p-value, Holm-adjusted over the judges "
            f"compared, below {1 - options.confidence:.2g}; otherwise no evidence. Trust "
            "levels as jurybox analyze gives them, with its default thresholds.",
        ],
    )


def run_judges(frame: AnalysisFrame) -> list[str]:
    """Judges in order of first appearance (the config's order for a jurybox run)."""
    return [str(j) for j in pd.unique(frame.records["judge"])]


def pair_judges(a: Sequence[str], b: Sequence[str]) -> tuple[list[JudgePairing], list[str]]:
    """Same names paired by name, the remaining ones by order; returns pairs and the unpaired."""
    common = [j for j in a if j in set(b)]
    pairs = [JudgePairing(judge_a=j, judge_b=j, matched_by="name") for j in common]
    rest_a = [j for j in a if j not in common]
    rest_b = [j for j in b if j not in common]
    pairs += [
        JudgePairing(judge_a=x, judge_b=y, matched_by="order")
        for x, y in zip(rest_a, rest_b, strict=False)
    ]
    unpaired = [f"A:{j}" for j in rest_a[len(rest_b) :]] + [f"B:{j}" for j in rest_b[len(rest_a) :]]
    return pairs, unpaired


def _summary(run: RunInput, trust: list[JudgeTrust]) -> RunSummary:
    frame = run.frame
    found = {"report": run.report} if run.report is not None else {}  # dumped only when found
    return RunSummary(
        label=run.label,
        source=run.source,
        n_records=run.n_records,
        n_ok=int(frame.records["ok"].sum()),
        n_items=int(frame.records["query_id"].nunique()),
        judges=run_judges(frame),
        modes=sorted({str(m) for m in frame.records["mode"].dropna()}),
        dimensions=list(frame.dimensions),
        has_gold=not frame.labels.empty,
        items_source=run.items_source,
        trust=trust,
        **found,
    )


def _compare_pair(
    a: RunInput,
    b: RunInput,
    studies: Mapping[str, ScoreStudy | None],
    trust: Mapping[str, list[JudgeTrust]],
    options: CompareOptions,
) -> RunComparison:
    pairs, unpaired = pair_judges(run_judges(a.frame), run_judges(b.frame))
    shared = set(a.frame.records["query_id"]) & set(b.frame.records["query_id"])
    study, reason = compare_studies(a, b, pairs, studies, options)
    judges = [_compare_judge(a.frame, b.frame, pair, options) for pair in pairs]
    levels = (trust[a.label], trust[b.label])
    changes, unchanged_why = config_changes(a.manifest, b.manifest)
    return RunComparison.given(
        run_a=a.label,
        run_b=b.label,
        n_shared_items=len(shared),
        pairing=pairs,
        unpaired_judges=unpaired,
        judges=judges,
        study=study,
        study_skipped=reason,
        headlines=headlines(judges, (a.frame, b.frame), levels, options.confidence),
        config_changes=changes if unchanged_why is None else None,
        config_skipped=unchanged_why,
    )


def _compare_judge(
    a: AnalysisFrame, b: AnalysisFrame, pair: JudgePairing, options: CompareOptions
) -> JudgeComparison:
    return JudgeComparison.given(
        judge_a=pair.judge_a,
        judge_b=pair.judge_b,
        matched_by=pair.matched_by,
        verdicts=_compare_verdicts(a, b, pair, options),
        scores=[
            _compare_scores(a, b, pair, dim, options.confidence) for dim in _shared_dimensions(a, b)
        ],
    )


# --- verdicts --------------------------------------------------------------------------------


def _judgments(frame: AnalysisFrame, judge: str) -> pd.DataFrame:
    """One row per parsed judgment of this judge (every order, repeat and retest): label, gold
    and ``first`` (the first repeat of a unit, not a retest)."""
    rec = frame.ok
    rec = rec[rec["judge"] == judge]
    label = rec["preferred_arm"].where(rec["mode"] == "pairwise", rec["verdict"])
    table = pd.DataFrame(
        {
            "query_id": rec["query_id"].astype(str),
            "order": rec["order"].astype(str),
            "criterion": rec["criterion"].fillna("").astype(str),
            "arm": rec["target_arm"],
            "pairwise": rec["mode"] == "pairwise",
            "label": label,
            "first": ~rec["retest"].astype(bool) & (rec["repeat"] == 0),
        }
    ).dropna(subset=["label"])
    return table.assign(gold=_gold(frame, table))


def _verdicts(judgments: pd.DataFrame) -> pd.DataFrame:
    """One row per unit (first repeat, retests left out)."""
    first = judgments[judgments["first"]]
    return first.drop_duplicates(UNIT, keep="last")


def _gold(frame: AnalysisFrame, table: pd.DataFrame) -> pd.Series:
    """The human label of each unit: the preferred arm (pairwise) or the arm's Pass/Fail."""
    labels = frame.labels
    prefs = dict(zip(labels.preferences["query_id"], labels.preferences["label"], strict=False))
    verdicts = {
        (str(q), str(arm)): v
        for q, arm, v in labels.verdicts[["query_id", "arm", "verdict"]].itertuples(index=False)
    }
    gold = [
        verdicts.get((q, str(arm))) if isinstance(arm, str) else prefs.get(q)
        for q, arm in zip(table["query_id"], table["arm"], strict=True)
    ]
    return pd.Series(gold, index=table.index, dtype=object)


def _compare_verdicts(
    a: AnalysisFrame, b: AnalysisFrame, pair: JudgePairing, options: CompareOptions
) -> VerdictComparison | None:
    ja, jb = _judgments(a, pair.judge_a), _judgments(b, pair.judge_b)
    va, vb = _verdicts(ja), _verdicts(jb)
    if va.empty or vb.empty:
        return None  # score-only judges: their comparison is in ``scores``
    both = va.merge(vb[[*UNIT, "label", "gold"]], on=UNIT, suffixes=("_a", "_b"))
    if both.empty:
        return None
    both["gold"] = both["gold_a"].where(both["gold_a"].notna(), both["gold_b"])
    la, lb = both["label_a"].astype(str), both["label_b"].astype(str)
    changed = both[la != lb].sort_values(UNIT)
    n, items = len(both), both["query_id"].to_numpy()
    accuracy, why = _accuracy(ja, jb, options.confidence)
    return VerdictComparison.given(
        n_units=n,
        n_items=int(both["query_id"].nunique()),
        n_changed=len(changed),
        agreement=attempt(
            PercentAgreementMetric,
            percent_agreement,
            la,
            lb,
            n=n,
            confidence=options.confidence,
            clusters=items,
        ),
        kappa=attempt(
            KappaMetric,
            cohen_kappa,
            la,
            lb,
            n=n,
            confidence=options.confidence,
            clusters=items,
            n_bootstrap=options.n_bootstrap,
            rng=options.seed,
        ),
        accuracy=accuracy,
        accuracy_skipped=why,
        position=_position(va, vb, options.confidence),
        changed=[_changed(row) for row in changed.head(options.max_changed).to_dict("records")],
        changed_omitted=max(0, len(changed) - options.max_changed),
    )


def _changed(row: Mapping[Hashable, Any]) -> ChangedUnit:
    gold = row["gold"]
    return ChangedUnit(
        item_id=str(row["query_id"]),
        order=str(row["order"]),
        verdict_a=str(row["label_a"]),
        verdict_b=str(row["label_b"]),
        gold=None if pd.isna(gold) else str(gold),
    )


def paired_binary(
    x: np.ndarray, y: np.ndarray, confidence: float
) -> tuple[ProportionMetric, ProportionMetric, PairedDifferenceMetric, McNemarMetric]:
    """Both proportions, their paired difference (y − x) and McNemar's test, on n units."""
    n = int(x.size)
    table = [[int(np.sum(x & y)), int(np.sum(x & ~y))], [int(np.sum(~x & y)), int(np.sum(~x & ~y))]]
    discordant = table[0][1] + table[1][0]
    method = "exact" if discordant <= EXACT_MCNEMAR_MAX else "asymptotic"
    return (
        attempt(ProportionMetric, wilson_interval, int(x.sum()), n, confidence, n=n),
        attempt(ProportionMetric, wilson_interval, int(y.sum()), n, confidence, n=n),
        attempt(
            PairedDifferenceMetric, paired_proportion_difference, x, y, confidence=confidence, n=n
        ),
        attempt(McNemarMetric, mcnemar, table, method, n=n),
    )


def _item_shares(judgments: pd.DataFrame) -> pd.DataFrame:
    """Per item with a label: its judgments' share right (``share``) and their number."""
    scored = judgments[judgments["gold"].notna()]
    right = scored["label"].astype(str) == scored["gold"].astype(str)
    by_item = right.groupby(scored["query_id"])
    return pd.DataFrame({"share": by_item.mean(), "n": by_item.size()})


def _accuracy(
    ja: pd.DataFrame, jb: pd.DataFrame, confidence: float
) -> tuple[AccuracyComparison | None, str | None]:
    """Accuracy of each run and B − A over the items both judged, the item the unit."""
    sa, sb = _item_shares(ja), _item_shares(jb)
    items = sa.index.intersection(sb.index)
    if items.empty:
        return None, "no gold or human label for the items both runs judged"
    x, y = sa.loc[items, "share"].to_numpy(float), sb.loc[items, "share"].to_numpy(float)
    n = len(items)
    diff = attempt(ShareDifferenceMetric, paired_share_difference, x, y, confidence=confidence, n=n)
    a_higher, b_higher = int(np.sum(x > y)), int(np.sum(y > x))
    method = "exact" if a_higher + b_higher <= EXACT_MCNEMAR_MAX else "asymptotic"
    table = [[n - a_higher - b_higher, a_higher], [b_higher, 0]]
    test = attempt(McNemarMetric, mcnemar, table, method, n=n)
    if test.method is not None:
        sign = "sign test over items (b, c: items whose share is higher in A, in B), as "
        test = with_fields(test, method=sign + test.method)
    comparison = AccuracyComparison(
        n_items=n,
        n_judgments_a=int(sa.loc[items, "n"].sum()),
        n_judgments_b=int(sb.loc[items, "n"].sum()),
        accuracy_a=_clustered(ja, items, confidence),
        accuracy_b=_clustered(jb, items, confidence),
        difference=diff,
        mcnemar=test,
    )
    return comparison, None


def _clustered(
    judgments: pd.DataFrame, items: pd.Index, confidence: float
) -> ClusteredProportionMetric:
    """A run's share of right judgments on these items, the interval counting items."""
    scored = judgments[judgments["gold"].notna() & judgments["query_id"].isin(items)]
    right = (scored["label"].astype(str) == scored["gold"].astype(str)).to_numpy(float)
    ids = scored["query_id"].to_numpy()
    return attempt(
        ClusteredProportionMetric,
        clustered_proportion,
        right,
        ids,
        confidence=confidence,
        n=len(scored),
    )


def _consistent(verdicts: pd.DataFrame) -> pd.Series:
    """Pairs judged in two or more orders: True when every order gave the same winner (a
    criterion's units are one per arm, not orders of one pair, so they have no consistency)."""
    by_item = verdicts[verdicts["pairwise"]].groupby(["query_id", "criterion"])["label"]
    sizes, distinct = by_item.size(), by_item.nunique()
    return (distinct == 1)[sizes >= 2]


def _position(va: pd.DataFrame, vb: pd.DataFrame, confidence: float) -> PositionComparison | None:
    ca, cb = _consistent(va), _consistent(vb)
    shared = ca.index.intersection(cb.index)
    if shared.empty:
        return None  # not judged in both orders
    x, y = ca.loc[shared].to_numpy(bool), cb.loc[shared].to_numpy(bool)
    cons_a, cons_b, diff, test = paired_binary(x, y, confidence)
    return PositionComparison(
        n_items=len(shared),
        consistency_a=cons_a,
        consistency_b=cons_b,
        difference=diff,
        mcnemar=test,
    )


# --- scores ----------------------------------------------------------------------------------


def _shared_dimensions(a: AnalysisFrame, b: AnalysisFrame) -> list[str]:
    if a.scores.empty or b.scores.empty:
        return []
    return [d for d in a.dimensions if d in b.dimensions] + [TOTAL]


def paired_scores(
    a: AnalysisFrame, judge_a: str, b: AnalysisFrame, judge_b: str, dimension: str
) -> pd.DataFrame:
    """Scores of the same responses (item × arm) by the two judges: columns score_a, score_b."""
    sa = judge_scores(a, dimension)
    sb = judge_scores(b, dimension)
    sa = sa[sa["judge"] == judge_a][["query_id", "arm", "score"]]
    sb = sb[sb["judge"] == judge_b][["query_id", "arm", "score"]]
    return sa.merge(sb, on=["query_id", "arm"], suffixes=("_a", "_b"))


def _compare_scores(
    a: AnalysisFrame, b: AnalysisFrame, pair: JudgePairing, dimension: str, confidence: float
) -> ScoreComparison:
    both = paired_scores(a, pair.judge_a, b, pair.judge_b, dimension)
    # the item is the unit: its responses (arms) share its question, so their scores are not
    # independent; with one response per item this is the response itself
    by_item = both.groupby("query_id")[["score_a", "score_b"]].mean()
    x, y = by_item["score_a"].to_numpy(float), by_item["score_b"].to_numpy(float)
    n = len(by_item)
    return ScoreComparison(
        dimension=dimension,
        n_units=len(both),
        n_items=n,
        mean_a=float(x.mean()) if n else None,
        mean_b=float(y.mean()) if n else None,
        mean_difference=attempt(
            MeanDifferenceMetric, mean_difference, y, x, n=n, confidence=confidence
        ),
        shift=attempt(ShiftMetric, hodges_lehmann, y, x, n=n, confidence=confidence),
        wilcoxon=attempt(WilcoxonMetric, wilcoxon_signed_rank, y, x, n=n),
        rank_biserial=attempt(RankBiserialMetric, rank_biserial, y, x, n=n),
        correlation=attempt(CorrelationMetric, spearman, x, y, n=n, confidence=confidence),
    )
