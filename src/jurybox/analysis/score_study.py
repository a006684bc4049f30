"""ADR-016's measures: does a dimensioned rubric make judges agree more than one holistic score?

Per run with scores from two or more judges (units = item × arm, each judge's score the mean over
orders): inter-judge reliability per dimension (Krippendorff's alpha, interval metric, with a
bootstrap interval; ICC(2,1) on the units every judge scored) and the mean inter-judge SD;
ranking stability (mean pairwise Kendall tau-b of the judges' total scores with a bootstrap
interval, and Kendall's W against its null 1/m with a permutation p-value and a decision); and
conciseness vs length: per item, the longer response's conciseness score minus the shorter's,
one-sided Wilcoxon (ADR-016 expects it below 0), with the Spearman correlation beside it. Across
a rubric run (A) and a holistic run (B) over the same items and judges: each dimension's
inter-reviewer variance against the holistic score's, paired by item (``lower_variance``), its
alpha against the holistic alpha, and the paired bootstrap difference of ranking stability.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from jurybox.analysis._common import TOTAL, attempt, with_fields
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model.compare import (
    AlphaDifferenceMetric,
    ConcisenessMetric,
    ConcordanceMetric,
    DimensionReliability,
    DimensionVersusHolistic,
    JudgePairing,
    RankingStabilityMetric,
    ScoreStudy,
    StudyComparison,
    VarianceDifferenceMetric,
)
from jurybox.analysis.model.metrics import (
    AlphaIntervalMetric,
    CorrelationMetric,
    ICCMetric,
)
from jurybox.stats import (
    alpha_difference,
    icc,
    krippendorff_alpha_ci,
    spearman,
    wilcoxon_signed_rank,
)
from jurybox.stats.paired import kendall_tau_difference, kendall_tau_panel
from jurybox.stats.study import concordance, variance_difference

if TYPE_CHECKING:
    from jurybox.analysis.compare import CompareOptions, RunInput

CONCISENESS = "concis"  # a dimension whose name contains this is the conciseness dimension


def score_matrix(frame: AnalysisFrame, dimension: str, judges: Sequence[str]) -> pd.DataFrame:
    """judges (rows, in the given order) × units (query_id, arm), NaN where a judge gave none."""
    scores = judge_scores(frame, dimension)
    wide = scores.pivot_table(index="judge", columns=["query_id", "arm"], values="score")
    return wide.reindex([j for j in judges if j in wide.index])


def _scoring_judges(frame: AnalysisFrame) -> list[str]:
    if frame.scores.empty:
        return []
    return [str(j) for j in pd.unique(frame.scores["judge"])]


def score_study(run: RunInput, options: CompareOptions) -> ScoreStudy | None:
    """ADR-016's measures for one run, or None when fewer than two judges gave scores."""
    frame = run.frame
    judges = _scoring_judges(frame)
    if len(judges) < 2:
        return None
    total = score_matrix(frame, TOTAL, judges).dropna(axis=1)
    conciseness = next((d for d in frame.dimensions if CONCISENESS in d.lower()), None)
    return ScoreStudy.given(
        run=run.label,
        n_judges=len(judges),
        reliability=[
            _reliability(frame, dim, judges, options) for dim in (*frame.dimensions, TOTAL)
        ],
        ranking_stability=attempt(
            RankingStabilityMetric,
            kendall_tau_panel,
            total.to_numpy(),
            n=total.shape[1],
            confidence=options.confidence,
            n_bootstrap=options.n_bootstrap,
            rng=options.seed,
        ),
        concordance=attempt(
            ConcordanceMetric,
            concordance,
            total.to_numpy(),
            n=total.shape[1],
            confidence=options.confidence,
            rng=options.seed,
        ),
        conciseness_length=_conciseness(frame, conciseness, options) if conciseness else None,
        conciseness_paired=_conciseness_paired(frame, conciseness) if conciseness else None,
        conciseness_dimension=conciseness,
    )


def _reliability(
    frame: AnalysisFrame, dimension: str, judges: Sequence[str], options: CompareOptions
) -> DimensionReliability:
    matrix = score_matrix(frame, dimension, judges)
    complete = matrix.dropna(axis=1).to_numpy()
    spread = np.std(complete, axis=0, ddof=1) if complete.shape[0] >= 2 else np.array([])
    return DimensionReliability(
        dimension=dimension,
        n_units=int(matrix.shape[1]),
        inter_judge_sd=float(spread.mean()) if spread.size else None,
        alpha=attempt(
            AlphaIntervalMetric,
            krippendorff_alpha_ci,
            matrix.to_numpy(),
            "interval",
            n=matrix.shape[1],
            confidence=options.confidence,
            n_bootstrap=max(options.n_bootstrap, 200),
            rng=options.seed,
        ),
        icc=attempt(
            ICCMetric, icc, complete.T, "2,1", n=complete.shape[1], confidence=options.confidence
        ),
    )


def _conciseness(
    frame: AnalysisFrame, dimension: str, options: CompareOptions
) -> CorrelationMetric:
    """Spearman of the judges' mean conciseness score of a response with its length."""
    both = _score_lengths(frame, dimension)
    if both is None:
        return attempt(CorrelationMetric, _no_lengths, n=0)
    return attempt(
        CorrelationMetric,
        spearman,
        both["score"].to_numpy(float),
        both["length"].to_numpy(float),
        n=len(both),
        confidence=options.confidence,
    )


def _conciseness_paired(frame: AnalysisFrame, dimension: str) -> ConcisenessMetric:
    """Per item with two responses of different lengths: the judges' mean conciseness score of
    the longer minus the shorter's; Wilcoxon signed-rank, one-sided ``less`` (items, not
    responses, are the replicates: the two responses of an item are not independent), and the
    median of those differences (the statistic alone has no sign to read)."""
    both = _score_lengths(frame, dimension)
    if both is None:
        return attempt(ConcisenessMetric, _no_lengths, n=0)
    diffs = [
        _longer_minus_shorter(part["length"].to_numpy(float), part["score"].to_numpy(float))
        for _, part in both.groupby(level="query_id", sort=True)
        if len(part) == 2 and part["length"].nunique() == 2
    ]
    test = attempt(
        ConcisenessMetric,
        wilcoxon_signed_rank,
        np.asarray(diffs),
        alternative="less",
        n=len(diffs),
    )
    if test.method is None:
        return test
    paired = "per item: conciseness of the longer response − the shorter's, one-sided (less); "
    median = float(np.median(diffs))
    return with_fields(test, method=paired + test.method, median_difference=median)


def _score_lengths(frame: AnalysisFrame, dimension: str) -> pd.DataFrame | None:
    """The judges' mean ``dimension`` score of each response beside its length (None: the
    lengths are unknown)."""
    if frame.items.empty:
        return None
    means = judge_scores(frame, dimension).groupby(["query_id", "arm"])["score"].mean()
    lengths = frame.items.set_index(["query_id", "arm"])["length"]
    return pd.concat([means.rename("score"), lengths], axis=1, join="inner").dropna()


def _longer_minus_shorter(lengths: np.ndarray, scores: np.ndarray) -> float:
    return float(scores[np.argmax(lengths)] - scores[np.argmin(lengths)])


def _no_lengths() -> None:
    raise ValueError("no response lengths: give the dataset (--dataset) so lengths are known")


def compare_studies(
    a: RunInput,
    b: RunInput,
    pairs: Sequence[JudgePairing],
    studies: Mapping[str, ScoreStudy | None],
    options: CompareOptions,
) -> tuple[StudyComparison | None, str | None]:
    """Rubric run A's dimensions against holistic run B's score, or why that does not apply."""
    study_a, study_b = studies.get(a.label), studies.get(b.label)
    if a.frame.scores.empty or b.frame.scores.empty:
        return None, None  # verdicts without scores: nothing to say about ADR-016
    if study_a is None or study_b is None:
        return None, "needs scores from two or more judges in both runs"
    if set(a.frame.dimensions) == set(b.frame.dimensions):
        return None, "both runs score the same dimensions: neither is a holistic run"
    if len(b.frame.dimensions) > len(a.frame.dimensions):
        return None, "the rubric run (more dimensions) must be given first, the holistic second"
    rows = [
        _versus(a, b, pairs, row.dimension, options)
        for row in study_a.reliability
        if row.dimension != TOTAL
    ]
    return (
        StudyComparison(
            rubric_run=a.label,
            holistic_run=b.label,
            holistic_dimension=b.frame.dimensions[0] if len(b.frame.dimensions) == 1 else TOTAL,
            dimensions=rows,
            ranking_stability_difference=_stability_difference(a, b, pairs, options),
        ),
        None,
    )


def _paired_matrices(
    a: RunInput, b: RunInput, pairs: Sequence[JudgePairing], dimension: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rubric ``dimension`` scores of run A and holistic total scores of run B: matched judges
    (rows, in pairing order) × the responses both runs have (columns, same order)."""
    ma = score_matrix(a.frame, dimension, [p.judge_a for p in pairs])
    mb = score_matrix(b.frame, TOTAL, [p.judge_b for p in pairs])
    kept = [p for p in pairs if p.judge_a in ma.index and p.judge_b in mb.index]
    units = ma.columns.intersection(mb.columns)
    return ma.loc[[p.judge_a for p in kept], units], mb.loc[[p.judge_b for p in kept], units]


def _versus(
    a: RunInput,
    b: RunInput,
    pairs: Sequence[JudgePairing],
    dimension: str,
    options: CompareOptions,
) -> DimensionVersusHolistic:
    """``lower_variance``: True when the interval of the inter-reviewer variance of the
    dimension minus the holistic score's, paired by item, lies below 0; False when above; None
    when it holds 0. The alpha difference is shown beside it."""
    ma, mb = _paired_matrices(a, b, pairs, dimension)
    complete = (ma.notna().all() & mb.notna().all()).to_numpy()
    variance = attempt(
        VarianceDifferenceMetric,
        variance_difference,
        ma.to_numpy()[:, complete],
        mb.to_numpy()[:, complete],
        ma.columns[complete].get_level_values("query_id").to_numpy(),
        n=int(complete.sum()),
        confidence=options.confidence,
        n_bootstrap=max(options.n_bootstrap, 200),
        rng=options.seed,
    )
    diff = attempt(
        AlphaDifferenceMetric,
        alpha_difference,
        mb.to_numpy(),
        ma.to_numpy(),
        n=ma.shape[1],
        confidence=options.confidence,
        n_bootstrap=max(options.n_bootstrap, 200),
        rng=options.seed,
    )
    return DimensionVersusHolistic(
        dimension=dimension,
        alpha=diff.alpha_y,
        holistic_alpha=diff.alpha_x,
        difference=diff,
        variance=variance,
        lower_variance={"lower": True, "higher": False}.get(variance.decision or ""),
    )


def _stability_difference(
    a: RunInput, b: RunInput, pairs: Sequence[JudgePairing], options: CompareOptions
) -> RankingStabilityMetric:
    """Ranking stability of the rubric run minus the holistic run, on units both scored."""
    ma, mb = _paired_matrices(a, b, pairs, TOTAL)
    complete = ma.notna().all().to_numpy() & mb.notna().all().to_numpy()
    return attempt(
        RankingStabilityMetric,
        kendall_tau_difference,
        mb.to_numpy()[:, complete],
        ma.to_numpy()[:, complete],
        n=int(complete.sum()),
        confidence=options.confidence,
        n_bootstrap=options.n_bootstrap,
        rng=options.seed,
    )
