"""Reliability: test-retest, internal consistency, confidence calibration.

Test-retest pairs each retest record with the original record of the same key minus
``|retest`` (same judge, item, order and repeat) and computes ICC(2,1) (two-way random,
absolute agreement: a retest that drifts in level is unreliable) per dimension; preferences and
verdicts get percent agreement and Cohen's kappa. Internal consistency is Cronbach's alpha across
rubric dimensions (subjects = record x arm). Confidence calibration asks whether stated
confidence tracks being right: correctness against human gold where there is some, else whether
the verdict survived the order swap; for scores, the absolute error against the human score or,
without one, against the other judges' mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    attempt,
    extend,
    fresh_records,
    fresh_scores,
    icc_over_items,
    in_values,
    wilson_share,
)
from jurybox.analysis.agreement import pair_over_items
from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model.metrics import (
    CorrelationMetric,
    CronbachAlphaMetric,
    ICCMetric,
)
from jurybox.analysis.model.reliability import (
    ConfidenceBin,
    ConfidenceCalibration,
    InternalConsistency,
    LabelRetest,
    PreferenceCalibration,
    PreferenceCalibrationSection,
    Reliability,
    ScoreCalibration,
    ScoreCalibrationSection,
    TestRetest,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import order_pairs

_CONFIDENCE_LEVELS = {"very low": 0.0, "low": 1.0, "medium": 2.0, "high": 3.0, "very high": 4.0}


def _retest_icc_by(
    scores: pd.DataFrame, column: str, options: AnalysisOptions
) -> dict[str, ICCMetric]:
    """ICC(2,1) of test vs retest scores for each value of ``column``, its interval over items
    where an item holds several scored responses or orders."""
    return {
        str(key): icc_over_items(
            rows[["score_test", "score_retest"]].to_numpy(),
            rows["query_id"].astype(str).to_numpy(),
            options,
        )
        for key, rows in scores.groupby(column)
    }


def _retest_scores(frame: AnalysisFrame) -> pd.DataFrame:
    """Each retest score row beside the original's (same key minus ``|retest``, arm and
    dimension), in the originals' row order. Keys are unique, so the original is matched by
    its row number (``rec``): the merge joins integers, not a million key strings. Only the
    retest records' base keys are looked up among the keys (pandas' hash table of them, built
    once by the uniqueness check), not every record's."""
    records = frame.records
    keys = pd.Index(records["key"])
    if not keys.is_unique:  # records handed over as they are may repeat a key
        return _retest_scores_by_key(frame)
    retests = np.flatnonzero(records["retest"].to_numpy(dtype=bool))
    original = keys.get_indexer(records["base_key"].take(retests))  # -1: no original
    rec = records["rec"].to_numpy()
    original_rec = np.full(len(records), -1, dtype=np.int64)
    original_rec[retests] = np.where(original >= 0, rec[np.maximum(original, 0)], -1)
    scores = frame.scores
    score_rec = scores["rec"].to_numpy()
    is_retest = scores["retest"].to_numpy(dtype=bool)
    row_of = pd.Index(rec).get_indexer(score_rec[is_retest])
    retest = scores.loc[is_retest, ["rec", "arm", "dimension", "score"]]
    retest = retest.assign(rec=original_rec[row_of])
    # Only the originals of retests can match: taking just their rows keeps the inner merge's
    # rows and order, and copies a tenth of the table.
    originals = np.isin(score_rec, retest["rec"].to_numpy()) & ~is_retest
    kept = ["rec", "query_id", "judge", "arm", "dimension", "score"]
    test: pd.DataFrame = scores.loc[originals, kept]
    return test.merge(retest, on=["rec", "arm", "dimension"], suffixes=("_test", "_retest"))


def _retest_scores_by_key(frame: AnalysisFrame) -> pd.DataFrame:
    """``_retest_scores`` where keys repeat: every original of a key beside every retest."""
    keys = frame.records.set_index("rec")[["key", "base_key"]]
    read = ["rec", "retest", "query_id", "judge", "arm", "dimension", "score"]
    scores = frame.scores[read].join(keys, on="rec")
    test = scores[~scores["retest"]][["key", "query_id", "judge", "arm", "dimension", "score"]]
    retest = scores[scores["retest"]][["base_key", "arm", "dimension", "score"]]
    return test.merge(
        retest.rename(columns={"base_key": "key"}),
        on=["key", "arm", "dimension"],
        suffixes=("_test", "_retest"),
    )


def _label_retests(frame: AnalysisFrame, column: str) -> pd.DataFrame:
    ok = frame.ok.dropna(subset=[column])
    test = ok[~ok["retest"]][["key", "query_id", column]]
    retest = ok[ok["retest"]][["base_key", column]].rename(columns={"base_key": "key"})
    return test.merge(retest, on="key", suffixes=("_test", "_retest"))


def _label_block(pairs: pd.DataFrame, column: str, options: AnalysisOptions) -> LabelRetest:
    """Agreement of test and retest labels; intervals over items (an item's orders and
    repeats are one cluster)."""
    a, b = pairs[f"{column}_test"], pairs[f"{column}_retest"]
    kappa, share = pair_over_items(a, b, pairs["query_id"].to_numpy(), options)
    return LabelRetest(n_pairs=len(pairs), percent_agreement=share, cohen_kappa=kappa)


def analyze_test_retest(frame: AnalysisFrame, options: AnalysisOptions) -> TestRetest:
    """ICC per dimension (and per judge on the total) between original and retest judgments."""
    n_retest = int(frame.records["retest"].sum())
    if n_retest == 0:
        return TestRetest.skip("no retest records (pipeline.test_retest_count is 0)")
    scores = _retest_scores(frame)
    out: dict[str, object] = {"n_retest_records": n_retest}
    if not scores.empty:
        out["dimensions"] = _retest_icc_by(scores, "dimension", options)
        out["judges"] = _retest_icc_by(scores[scores["dimension"] == TOTAL], "judge", options)
    for column, name in (("preferred_arm", "preferences"), ("verdict", "verdicts")):
        pairs = _label_retests(frame, column)
        if not pairs.empty:
            out[name] = _label_block(pairs, column, options)
    if len(out) == 1:
        return TestRetest.skip(
            "no retest record has a successful original to compare with", n_retest_records=n_retest
        )
    return TestRetest.model_validate({"status": "computed", "reason": None, **out})


def _dimension_matrix(dims: pd.DataFrame) -> pd.DataFrame | None:
    """``dims.pivot_table(index=["rec", "arm", "judge"], columns="dimension", values="score")``
    for its values, row order, judge of each row and columns, from one integer per (record, arm,
    dimension): the pivot's grouping by four keys runs out of a 4 GB address space at a million
    records. A record has one judge, so (record, arm) orders the rows as the pivot does. None
    where arm or dimension is not categorical."""
    arm, dim = dims["arm"], dims["dimension"]
    if not all(isinstance(c.dtype, pd.CategoricalDtype) for c in (arm, dim)):
        return None
    arms, names = arm.cat.codes.to_numpy(np.int64), dim.cat.categories
    keep = (arms >= 0) & (dim.cat.codes.to_numpy() >= 0) & dims["judge"].notna().to_numpy()
    unit = dims["rec"].to_numpy(np.int64)[keep] * (len(arm.cat.categories) + 1) + arms[keep]
    key = unit * len(names) + dim.cat.codes.to_numpy(np.int64)[keep]
    del unit, arms
    cells, means, firsts = _cell_means(key, dims["score"][keep], len(names))
    units, row = np.unique(cells // len(names), return_inverse=True)
    matrix = np.full((len(units), len(names)), np.nan)
    matrix[row, cells % len(names)] = means
    judges = dims["judge"][keep].iloc[firsts]
    present = np.unique(cells % len(names))
    return pd.DataFrame(
        matrix[:, present],
        index=pd.Index(judges.to_numpy(), name="judge", dtype=dims["judge"].dtype),
        columns=pd.Index(names[present], name="dimension"),
    )


def _cell_means(
    key: np.ndarray[Any, np.dtype[np.int64]], scores: pd.Series, n_names: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The distinct keys (sorted), each one's mean score, and per unit (``key // n_names``)
    the position of its first row. Where no key repeats (one score per record, arm and
    dimension, as records give them) by one stable sort, the mean of one score being the score:
    a fraction of the memory of a groupby, whose hashing of millions of keys peaked the
    reliability family by hundreds of megabytes at a million records."""
    order = np.argsort(key, kind="stable")
    cells = key[order]
    if len(cells) and (cells[1:] == cells[:-1]).any():  # a repeated cell: average them
        grouped = scores.groupby(key).mean()  # sorted: unit by unit, dimension order
        first = pd.Series(key // n_names).drop_duplicates()
        firsts = first.index.to_numpy()[np.argsort(first.to_numpy())]
        return grouped.index.to_numpy(), grouped.to_numpy(), firsts
    unit = cells // n_names
    starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]]) if len(unit) else unit
    firsts = np.minimum.reduceat(order, starts) if len(order) else order
    return cells, scores.to_numpy(dtype=float)[order], firsts


def analyze_internal_consistency(
    frame: AnalysisFrame, options: AnalysisOptions
) -> InternalConsistency:
    """Cronbach's alpha across rubric dimensions, pooled and per judge."""
    if len(frame.dimensions) < 2:
        return InternalConsistency.skip(
            f"{len(frame.dimensions)} rubric dimension(s): Cronbach's alpha needs two"
        )
    fresh = fresh_scores(frame, columns=["rec", "arm", "judge", "dimension", "score"])
    dims = fresh[fresh["dimension"] != TOTAL]
    del fresh  # not held through the matrix: a few hundred megabytes at a million records
    wide = _dimension_matrix(dims)
    if wide is None:
        wide = dims.pivot_table(index=["rec", "arm", "judge"], columns="dimension", values="score")
    wide = wide.dropna()
    pooled = attempt(
        CronbachAlphaMetric,
        stats.cronbach_alpha,
        wide.to_numpy(),
        n=len(wide),
        confidence=options.confidence,
    )
    judges = {
        str(j): attempt(
            CronbachAlphaMetric,
            stats.cronbach_alpha,
            rows.to_numpy(),
            n=len(rows),
            confidence=options.confidence,
        )
        for j, rows in wide.groupby(level="judge")
    }
    return InternalConsistency.of(
        subjects="record x arm",
        dimensions=[str(d) for d in wide.columns],
        pooled=pooled,
        judges=judges,
    )


def _confidence_number(values: pd.Series) -> pd.Series:
    text = values.astype(str).str.strip().str.lower()
    return text.map(_CONFIDENCE_LEVELS).fillna(pd.to_numeric(values, errors="coerce"))


def _spearman(x: pd.Series, y: pd.Series, options: AnalysisOptions) -> CorrelationMetric:
    x_values, y_values, conf = x.to_numpy(float), y.to_numpy(float), options.confidence
    return attempt(CorrelationMetric, stats.spearman, x_values, y_values, n=len(x), confidence=conf)


def _bins(level: pd.Series, hit: pd.Series, options: AnalysisOptions) -> list[ConfidenceBin]:
    out = []
    for value, hits in hit.groupby(level):
        metric = wilson_share(int(hits.sum()), len(hits), options)
        out.append(extend(ConfidenceBin, metric, stated_confidence=float(value)))
    return out


def _preference_targets(frame: AnalysisFrame) -> tuple[pd.DataFrame, str] | None:
    ok = fresh_records(frame)
    ok = ok[ok["preferred_arm"].notna()]
    ok = ok.assign(level=_confidence_number(ok["confidence"])).dropna(subset=["level"])
    gold = frame.labels.preferences.drop_duplicates("query_id").set_index("query_id")["label"]
    if ok.empty:
        return None
    if len(gold) and ok["query_id"].isin(gold.index).any():
        ok = ok[ok["query_id"].isin(gold.index)]
        return ok.assign(hit=ok["preferred_arm"] == ok["query_id"].map(gold)), "correct_vs_human"
    pairs = order_pairs(frame)
    if pairs.empty:
        return None
    both = pairs[pairs["ok_1"] & pairs["ok_2"]]
    stable = pd.Series(
        (both["pref_1"] == both["pref_2"]).to_numpy(),
        index=pd.MultiIndex.from_frame(both[["judge", "query_id", "repeat"]]),
    )
    keys = pd.MultiIndex.from_frame(ok[["judge", "query_id", "repeat"]])
    ok = ok.assign(hit=stable.reindex(keys).to_numpy()).dropna(subset=["hit"])
    return ok.assign(hit=ok["hit"].astype(bool)), "consistent_across_orders"


def _calibration_preferences(
    frame: AnalysisFrame, options: AnalysisOptions
) -> PreferenceCalibrationSection:
    found = _preference_targets(frame)
    if found is None:
        return PreferenceCalibrationSection.skip(
            "no pairwise verdict with a confidence and a target (human gold or "
            "both presentation orders)"
        )
    rows, target = found
    judges = {}
    for judge, part in rows.groupby("judge"):
        judges[str(judge)] = PreferenceCalibration(
            spearman=_spearman(part["level"], part["hit"], options),
            bins=_bins(part["level"], part["hit"], options),
        )
    return PreferenceCalibrationSection.of(
        target=target, confidence_levels=dict(_CONFIDENCE_LEVELS), judges=judges
    )


def _score_errors(frame: AnalysisFrame) -> tuple[pd.DataFrame, str]:
    read = ["query_id", "arm", "dimension", "judge", "score", "confidence"]  # what is used
    allrows = fresh_scores(frame, columns=read)
    rows = allrows[allrows["confidence"].notna()]
    human = frame.labels.scores
    if not human.empty:
        # Only humanly scored items can match: dropping the others first keeps the merge's
        # rows and order and saves hashing every score row's keys.
        labelled = rows[in_values(rows["query_id"], human["query_id"].unique())]
        merged = labelled.merge(human, on=["query_id", "arm", "dimension"], suffixes=("", "_human"))
        if not merged.empty:
            return merged.assign(error=(merged["score"] - merged["score_human"]).abs()), "human"
    grouped = allrows.groupby(["query_id", "arm", "dimension", "judge"])["score"].mean()
    del allrows  # every score row: let go before the joins below copy the rows with confidence
    per_item = grouped.groupby(level=[0, 1, 2]).agg(["sum", "size"])
    keyed = rows.join(per_item, on=["query_id", "arm", "dimension"])
    own = rows.join(grouped.rename("own"), on=["query_id", "arm", "dimension", "judge"])["own"]
    others = (keyed["sum"] - own) / (keyed["size"] - 1).where(keyed["size"] > 1)
    return keyed.assign(error=(keyed["score"] - others).abs()).dropna(
        subset=["error"]
    ), "other_judges_mean"


def _calibration_scores(frame: AnalysisFrame, options: AnalysisOptions) -> ScoreCalibrationSection:
    rows, target = _score_errors(frame)
    if rows.empty:
        return ScoreCalibrationSection.skip(
            "no score with a stated confidence and a reference (human score or another judge)"
        )
    judges = {}
    for judge, part in rows.groupby("judge"):
        judges[str(judge)] = ScoreCalibration(
            spearman=_spearman(part["confidence"], part["error"], options),
            bins=_bins(part["confidence"], part["error"] <= 1.0, options),
            mean_abs_error=float(part["error"].mean()),
        )
    return ScoreCalibrationSection.of(
        target=f"absolute error vs {target}; bins: share within one point",
        expected_sign="negative (more confident, smaller error)",
        judges=judges,
    )


def analyze_confidence(frame: AnalysisFrame, options: AnalysisOptions) -> ConfidenceCalibration:
    """Confidence calibration of verdicts and of dimension scores."""
    has_pref = frame.ok["confidence"].notna().any()
    has_score = frame.scores["confidence"].notna().any()
    if not has_pref and not has_score:
        return ConfidenceCalibration.skip(
            "no judgment states a confidence (scoring.request_confidence is off)"
        )
    return ConfidenceCalibration.of(
        preferences=_calibration_preferences(frame, options)
        if has_pref
        else PreferenceCalibrationSection.skip("no pairwise verdict states a confidence"),
        scores=_calibration_scores(frame, options)
        if has_score
        else ScoreCalibrationSection.skip("no dimension score states a confidence"),
    )


def analyze_reliability(frame: AnalysisFrame, options: AnalysisOptions) -> Reliability:
    """The reliability family."""
    if frame.ok.empty:
        return Reliability.skip("no successful judgment")
    return Reliability.of(
        test_retest=analyze_test_retest(frame, options),
        internal_consistency=analyze_internal_consistency(frame, options),
        confidence_calibration=analyze_confidence(frame, options),
    )
