"""Agreement between judges: Krippendorff's alpha, Fleiss' kappa, Cohen's kappa per judge pair,
percent agreement.

A unit is what every judge saw identically: item x presentation order x repeat (x arm for
scores); retests are left to reliability. Preferences are nominal (arm or tie), scores ordinal.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from jurybox import stats
from jurybox.analysis._common import TOTAL, attempt, with_fields
from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model.agreement import (
    Agreement,
    AgreementBlock,
    AgreementUnits,
    PairAgreement,
    ScoreAgreement,
)
from jurybox.analysis.model.metrics import (
    AlphaMetric,
    FleissKappaMetric,
    KappaMetric,
    PercentAgreementMetric,
    ProportionMetric,
)
from jurybox.analysis.options import AnalysisOptions

B = TypeVar("B", bound=AgreementBlock)

PREF_UNIT = ["query_id", "order", "repeat"]
SCORE_UNIT = ["query_id", "order", "arm", "repeat"]


def preference_matrix(frame: AnalysisFrame) -> pd.DataFrame:
    """Units (item x order x repeat) x judges of preferred arms ("tie" included), NaN = missing."""
    ok = frame.ok
    ok = ok[~ok["retest"] & ok["preferred_arm"].notna()]
    ok = ok.drop_duplicates([*PREF_UNIT, "judge"])
    return ok.pivot(index=PREF_UNIT, columns="judge", values="preferred_arm")


def verdict_matrix(frame: AnalysisFrame) -> pd.DataFrame:
    """Units (item x arm x criterion x repeat) x judges of Pass/Fail verdicts."""
    ok = frame.ok
    ok = ok[~ok["retest"] & ok["verdict"].notna() & ok["target_arm"].notna()]
    ok = ok.assign(criterion=ok["criterion"].fillna(""))
    unit = ["query_id", "target_arm", "criterion", "repeat"]
    return ok.drop_duplicates([*unit, "judge"]).pivot(index=unit, columns="judge", values="verdict")


def score_matrix(frame: AnalysisFrame, dimension: str) -> pd.DataFrame:
    """Units (item x order x arm x repeat) x judges of one dimension's scores."""
    rows = frame.scores[(frame.scores["dimension"] == dimension) & ~frame.scores["retest"]]
    rows = rows.drop_duplicates([*SCORE_UNIT, "judge"])
    return rows.pivot(index=SCORE_UNIT, columns="judge", values="score")


def _pair_metrics(matrix: pd.DataFrame, confidence: float) -> list[PairAgreement]:
    out = []
    for first, second in combinations(matrix.columns, 2):
        both = matrix[[first, second]].dropna()
        a, b = both[first].to_numpy(), both[second].to_numpy()
        n = len(both)
        out.append(
            PairAgreement(
                raters=[str(first), str(second)],
                cohen_kappa=attempt(
                    KappaMetric, stats.cohen_kappa, a, b, n=n, confidence=confidence
                ),
                percent_agreement=attempt(
                    PercentAgreementMetric,
                    stats.percent_agreement,
                    a,
                    b,
                    n=n,
                    confidence=confidence,
                ),
            )
        )
    return out


def _factorized(matrix: pd.DataFrame) -> tuple[np.ndarray[Any, np.dtype[np.intp]], int]:
    """Units x raters label codes (-1 = missing) and the number of distinct labels."""
    codes, uniques = pd.factorize(matrix.to_numpy().ravel(), use_na_sentinel=True)
    return codes.reshape(matrix.shape), len(uniques)


def _codes(matrix: pd.DataFrame, level: str) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Raters x units numbers for Krippendorff (NaN missing); nominal labels get arbitrary codes."""
    if level != "nominal":
        return matrix.T.to_numpy(dtype=float)
    codes, _ = _factorized(matrix)
    return np.where(codes < 0, np.nan, codes.astype(float)).T


def _fleiss(matrix: pd.DataFrame) -> FleissKappaMetric:
    """Fleiss' kappa over the units every judge rated (it needs equal raters per unit)."""
    complete = matrix.dropna()
    codes, n_labels = _factorized(complete)
    counts = np.zeros((len(complete), n_labels), dtype=int)
    rows = np.repeat(np.arange(len(complete)), complete.shape[1])
    np.add.at(counts, (rows, codes.ravel()), 1)
    return attempt(FleissKappaMetric, stats.fleiss_kappa, counts, n=len(complete))


def _all_agree(matrix: pd.DataFrame, confidence: float) -> ProportionMetric:
    complete = matrix.dropna()
    agree = int(complete.eq(complete.iloc[:, 0], axis=0).all(axis=1).sum()) if len(complete) else 0
    result = attempt(
        ProportionMetric,
        stats.wilson_interval,
        agree,
        len(complete),
        n=len(complete),
        confidence=confidence,
    )
    return with_fields(
        result, method=f"share of units on which every judge gives the same label; {result.method}"
    )


def agreement_block(matrix: pd.DataFrame, level: str, confidence: float, kind: type[B]) -> B:
    """Every agreement statistic of one units x raters matrix, as a ``kind`` section."""
    matrix = matrix.dropna(how="all")
    if matrix.shape[1] < 2:
        return kind.skip("fewer than two judges rated these units")
    if matrix.empty:
        return kind.skip("no unit was rated")
    coded = _codes(matrix, level)
    return kind.of(
        level=level,
        n_units=len(matrix),
        n_complete_units=len(matrix.dropna()),
        krippendorff_alpha=attempt(
            AlphaMetric, stats.krippendorff_alpha, coded, level, n=len(matrix)
        ),
        fleiss_kappa=_fleiss(matrix),
        percent_agreement=_all_agree(matrix, confidence),
        pairs=_pair_metrics(matrix, confidence),
    )


def analyze_agreement(frame: AnalysisFrame, options: AnalysisOptions) -> Agreement:
    """The agreement family (see module docstring)."""
    judges = frame.ok["judge"].unique()
    if len(judges) < 2:
        return Agreement.skip(
            f"a single judge ({', '.join(map(str, judges)) or 'none'}): agreement "
            "between judges needs at least two"
        )
    prefs = preference_matrix(frame)
    verdicts = verdict_matrix(frame)
    dims = (*frame.dimensions, TOTAL)
    score_blocks: dict[str, AgreementBlock] = {
        dim: agreement_block(
            score_matrix(frame, dim), "ordinal", options.confidence, AgreementBlock
        )
        for dim in dims
        if (frame.scores["dimension"] == dim).any()
    }
    return Agreement.of(
        unit=AgreementUnits(
            preferences="item x presentation order x repeat",
            scores="item x presentation order x arm x repeat",
            verdicts="item x arm x criterion x repeat",
        ),
        judges=[str(j) for j in sorted(judges)],
        preferences=agreement_block(prefs, "nominal", options.confidence, AgreementBlock)
        if not prefs.empty
        else AgreementBlock.skip("no pairwise preferences in the records"),
        scores=ScoreAgreement.of(dimensions=score_blocks)
        if score_blocks
        else ScoreAgreement.skip("no scores in the records"),
        verdicts=agreement_block(verdicts, "nominal", options.confidence, AgreementBlock)
        if not verdicts.empty
        else AgreementBlock.skip("no criterion verdicts in the records"),
    )
