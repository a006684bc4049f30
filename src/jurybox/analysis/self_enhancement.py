"""Self-enhancement: does a judge favour responses written by its own model family?

A judge's family (``AnalysisOptions.judge_families``, else ``judge_vendor``) matches an author
when the author starts with the family (case-insensitive: family "claude" matches author
"claude-3-opus"). Raw own-vs-other comparisons are confounded with response quality, so both
tests are relative to *neutral* judges (those whose family wrote neither response), which also
keeps one judge's self-preference from leaking into another's baseline.

Scores (``judges``): the judge's score minus the neutral judges' mean on the same response,
own-family responses against the rest (Kruskal-Wallis); "detected" needs a positive excess and
Holm-adjusted p < alpha over every judge's score and preference tests (``p_holm``).
``by_author``: Kruskal-Wallis across judges of the scores of each author's responses;
``by_author_friedman``: Friedman with Kendall's W on the responses every judge scored (the judges
scored the same responses: related samples, the primary test).

Preferences (``preferences``): on pairs where exactly one response is the judge's family's,
the judge's pick of that response (1, tie 0.5, 0; consolidated verdicts, flip = tie) against the
neutral judges' mean pick of the same response, Wilcoxon signed-rank over items.
"""

from __future__ import annotations

import pandas as pd

from jurybox import stats
from jurybox.analysis._common import (
    attempt,
    json_safe,
    keyed_like,
    skipped,
    unavailable,
    win_rate,
    with_fields,
)
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.metrics import (
    FriedmanMetric,
    KruskalMetric,
    WilcoxonMetric,
    WinRateMetric,
)
from jurybox.analysis.model.self_enhancement import (
    RelativeTest,
    SelfEnhancement,
    SelfPreference,
    SelfPreferences,
    SelfScores,
    SelfScoresSkipped,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import consolidated


def _own_mask(family: pd.Series, author: pd.Series) -> pd.Series:
    """Author starts with the judge's family (both case-folded); vectorised per family."""
    own = pd.Series(False, index=family.index)
    folded = author.fillna("").astype(str).str.casefold()
    for fam in family.unique():
        if fam:
            mask = family == fam
            own[mask] = folded[mask].str.startswith(str(fam).casefold())
    return own


def _relative_delta(scores: pd.DataFrame) -> pd.Series:
    """Score minus the mean of the *neutral* other judges on the same response (NaN if none).

    Neutral judges are those whose family did not author the response: another judge's own
    self-preference must not leak into the baseline (it would make every other judge look
    self-preferring on their own family's responses by contrast).
    """
    neutral = (~scores["own"]).astype(float)
    weighted = scores["score"] * neutral
    keys = [scores["query_id"], scores["arm"]]
    total = weighted.groupby(keys).transform("sum") - weighted
    count = neutral.groupby(keys).transform("sum") - neutral
    return scores["score"] - total / count.where(count > 0)


def _relative_test(rows: pd.DataFrame) -> RelativeTest:
    """Kruskal-Wallis of the score minus the neutral judges' mean, own family vs others."""
    rel = rows.dropna(subset=["delta"])
    d_own, d_other = rel.loc[rel["own"], "delta"], rel.loc[~rel["own"], "delta"]
    both = bool(len(d_own) and len(d_other))
    relative = (
        attempt(
            RelativeTest, stats.kruskal_wallis, d_own.to_numpy(), d_other.to_numpy(), n=len(rel)
        )
        if both
        else unavailable(
            RelativeTest,
            "needs another judge scoring both own-family and other responses",
            len(rel),
        )
    )
    return with_fields(
        relative,
        excess=float(d_own.mean() - d_other.mean()) if both else None,
        method="Kruskal-Wallis of (judge score - neutral other judges' mean on the same "
        f"response), own family vs others; {relative.method}",
    )


def _self_entry(rows: pd.DataFrame, family: str, options: AnalysisOptions) -> SelfScores:
    own, other = rows[rows["own"]], rows[~rows["own"]]
    own_mean, other_mean = float(own["score"].mean()), float(other["score"].mean())
    n = len(rows)
    relative = _relative_test(rows)
    p, excess = relative.p_value, relative.excess
    raw = attempt(
        KruskalMetric, stats.kruskal_wallis, own["score"].to_numpy(), other["score"].to_numpy(), n=n
    )
    fields = {
        "family": family,
        "own_mean": own_mean,
        "other_mean": other_mean,
        "n_own": len(own),
        "n_other": len(other),
        "n": n,
        "difference": own_mean - other_mean,
        "ratio": own_mean / other_mean if other_mean else None,
        "raw_test": raw,
        "relative_test": relative,
        "detected": None if p is None or excess is None else bool(p < options.alpha and excess > 0),
    }
    return SelfScores.model_validate(json_safe(fields))


def _by_author(scores: pd.DataFrame) -> dict[str, KruskalMetric]:
    out: dict[str, KruskalMetric] = {}
    for author, rows in scores.groupby("author"):
        groups = [g["score"].to_numpy() for _, g in rows.groupby("judge")]
        out[str(author)] = (
            attempt(KruskalMetric, stats.kruskal_wallis, *groups, n=len(rows))
            if len(groups) >= 2
            else unavailable(KruskalMetric, "a single judge scored these responses", len(rows))
        )
    return out


def _by_author_friedman(scores: pd.DataFrame) -> dict[str, FriedmanMetric | Skipped]:
    """Per author: Friedman across judges on the responses every judge scored. The judges
    scored the same responses (related samples), which Kruskal-Wallis treats as independent."""
    out: dict[str, FriedmanMetric | Skipped] = {}
    for author, rows in scores.groupby("author"):
        matrix = rows.pivot_table(index=["query_id", "arm"], columns="judge", values="score")
        common = matrix.dropna()
        out[str(author)] = (
            attempt(FriedmanMetric, stats.friedman, common.to_numpy(dtype=float), n=len(common))
            if matrix.shape[1] >= 3
            else skipped(f"{matrix.shape[1]} judge(s): Friedman's test needs three")
        )
    return out


def _score_section(frame: AnalysisFrame, options: AnalysisOptions) -> SelfEnhancement:
    """The score part of self-enhancement (``judges``, ``by_author``), as its own section."""
    scores = judge_scores(frame)
    authors = keyed_like(frame.items[["query_id", "arm", "author"]].dropna(), scores)
    scores = scores.merge(authors, on=["query_id", "arm"])
    if scores.empty:
        return SelfEnhancement.skip("no score of a response with a known author")
    scores = scores.assign(own=_own_mask(scores["family"], scores["author"]))
    scores = scores.assign(delta=_relative_delta(scores))
    judges: dict[str, SelfScores | SelfScoresSkipped] = {}
    for judge, rows in scores.groupby("judge"):
        family = str(rows["family"].iloc[0])
        if rows["own"].any() and (~rows["own"]).any():
            judges[str(judge)] = _self_entry(rows, family, options)
        else:
            judges[str(judge)] = SelfScoresSkipped(
                status="skipped",
                reason=f"family '{family}' authored {'all' if rows['own'].all() else 'none'} "
                "of the responses this judge scored",
                family=family,
            )
    return SelfEnhancement.of(
        judges=judges, by_author=_by_author(scores), by_author_friedman=_by_author_friedman(scores)
    )


def _own_rows(frame: AnalysisFrame) -> pd.DataFrame:
    """(judge, family, query_id, arm) for every response written by the judge's family."""
    families = frame.records.drop_duplicates("judge")[["judge", "family"]]
    families = families[families["family"] != ""]
    authors = frame.items[["query_id", "arm", "author"]].dropna()
    cross = families.merge(authors, how="cross")
    return cross[_own_mask(cross["family"], cross["author"])]


def _pick(label: pd.Series, arm: pd.Series) -> pd.Series:
    return (label == arm).astype(float) + 0.5 * (label == "tie").astype(float)


def _preference_pairs(frame: AnalysisFrame) -> pd.DataFrame:
    """Per (judge, item, repeat) with exactly one own-family arm: the judge's pick of it and the
    neutral judges' mean pick of the same arm (NaN when no neutral judge saw the item)."""
    cons, own = consolidated(frame), _own_rows(frame)
    touched = own[["judge", "query_id"]].drop_duplicates().assign(touched=True)
    single = own[own.groupby(["judge", "query_id"])["arm"].transform("size") == 1]
    mine = cons.merge(single[["judge", "family", "query_id", "arm"]], on=["judge", "query_id"])
    mine = mine.assign(pick=_pick(mine["label"], mine["arm"]))
    neutral = cons.merge(touched, on=["judge", "query_id"], how="left")
    neutral = neutral[neutral["touched"].isna()].rename(columns={"judge": "other", "label": "o"})
    both = mine.merge(neutral[["other", "query_id", "repeat", "o"]], on=["query_id", "repeat"])
    both = both[both["other"] != both["judge"]]
    others = (
        _pick(both["o"], both["arm"])
        .groupby([both["judge"], both["query_id"], both["repeat"]])
        .mean()
    )
    keys = pd.MultiIndex.from_frame(mine[["judge", "query_id", "repeat"]])
    return mine.assign(others=others.reindex(keys).to_numpy())


def _preference_entry(rows: pd.DataFrame, options: AnalysisOptions) -> SelfPreference:
    wins = int((rows["label"] == rows["arm"]).sum())
    ties = int((rows["label"] == "tie").sum())
    paired = rows.dropna(subset=["others"])
    test = (
        attempt(
            WilcoxonMetric,
            stats.wilcoxon_signed_rank,
            paired["pick"].to_numpy(),
            paired["others"].to_numpy(),
            n=len(paired),
        )
        if len(paired)
        else unavailable(
            WilcoxonMetric,
            "no neutral judge (whose family wrote neither response) to compare",
            0,
        )
    )
    excess = float((paired["pick"] - paired["others"]).mean()) if len(paired) else None
    p = test.p_value
    own_win_rate = win_rate(WinRateMetric, wins, len(rows) - wins - ties, ties, options)
    fields = {
        "family": str(rows["family"].iloc[0]),
        "own_win_rate": own_win_rate,
        "neutral_pick_rate": float(paired["others"].mean()) if len(paired) else None,
        "excess": excess,
        "relative_test": test,
        "detected": None if p is None or excess is None else bool(p < options.alpha and excess > 0),
    }
    return SelfPreference.model_validate(json_safe(fields))


def _preference_section(frame: AnalysisFrame, options: AnalysisOptions) -> SelfPreferences:
    if consolidated(frame).empty:
        return SelfPreferences.skip("no pairwise preferences")
    rows = _preference_pairs(frame)
    if rows.empty:
        return SelfPreferences.skip("no pair with exactly one response by a judge's own family")
    judges = {str(j): _preference_entry(part, options) for j, part in rows.groupby("judge")}
    return SelfPreferences.of(
        judges=judges,
        method="pick = 1 own-family response preferred, 0.5 tie, 0 other; excess = judge's pick "
        "minus the neutral judges' mean pick of the same response",
    )


def analyze_self(frame: AnalysisFrame, options: AnalysisOptions) -> SelfEnhancement:
    """Self-enhancement per judge family (see module docstring)."""
    if frame.items.empty or frame.items["author"].isna().all():
        return SelfEnhancement.skip(
            "no response authors (dataset `authors`): self-enhancement needs them"
        )
    if not (frame.records["family"] != "").any():
        return SelfEnhancement.skip(
            "no judge family: set judge_vendor or AnalysisOptions.judge_families"
        )
    scores = _score_section(frame, options)
    prefs = _preference_section(frame, options)
    if scores.status == "skipped" and prefs.status == "skipped":
        return SelfEnhancement.skip(f"{scores.reason}; {prefs.reason}")
    judges, prefs = _holm(scores.judges or {}, prefs, options)
    return SelfEnhancement.of(
        judges=judges,
        by_author=scores.by_author or {},
        by_author_friedman=scores.by_author_friedman or {},
        scores_reason=scores.reason,
        preferences=prefs,
        multiplicity="detected: positive excess and Holm-adjusted p (p_holm) < alpha over every "
        "judge's score and preference tests together",
    )


def _holm(
    judges: dict[str, SelfScores | SelfScoresSkipped],
    prefs: SelfPreferences,
    options: AnalysisOptions,
) -> tuple[dict[str, SelfScores | SelfScoresSkipped], SelfPreferences]:
    """The "detected" flags with Holm's correction over the whole family of tests."""
    entries: list[tuple[str, SelfScores | SelfPreference]] = [
        (j, e) for j, e in judges.items() if isinstance(e, SelfScores)
    ]
    entries += list((prefs.judges or {}).items())
    tested = [(j, e) for j, e in entries if e.relative_test.p_value is not None]
    if not tested:
        return judges, prefs
    holm = stats.holm(
        [float(e.relative_test.p_value or 0) for *_, e in tested], alpha=options.alpha
    )
    out_scores, out_prefs = dict(judges), dict(prefs.judges or {})
    for (judge, entry), adjusted in zip(tested, holm.adjusted, strict=True):
        excess = entry.excess if isinstance(entry, SelfPreference) else entry.relative_test.excess
        detected = None if excess is None else bool(adjusted < options.alpha and excess > 0)
        if isinstance(entry, SelfPreference):
            out_prefs[judge] = with_fields(entry, p_holm=adjusted, detected=detected)
        else:
            out_scores[judge] = with_fields(entry, p_holm=adjusted, detected=detected)
    if prefs.judges is not None:
        prefs = with_fields(prefs, judges=out_prefs)
    return out_scores, prefs
