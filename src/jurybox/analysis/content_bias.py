"""Content biases: verbosity and leniency (self-enhancement: ``self_enhancement``).

Verbosity: Spearman's rho of response length (characters) against a judge's total score, the
partial rho controlling for arm through one indicator per arm (a real treatment effect that
also lengthens answers must not read as verbosity bias), and OLS ``score ~ length + C(arm)``.
Pairwise: how often the longer response wins, and a logit of "treatment preferred" on the length
difference (its intercept absorbs the treatment effect).

Leniency: per-judge means on the responses every judge scored, their range, Friedman with
Kendall's W on those responses (related samples, the primary test), and Kruskal-Wallis
across judges.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import statsmodels.api as sm
from numpy.typing import NDArray
from statsmodels.tools.sm_exceptions import (
    ConvergenceWarning,
    PerfectSeparationError,
    PerfectSeparationWarning,
)

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    attempt,
    fresh_scores,
    json_safe,
    judge_rows,
    keyed_like,
    skipped,
    unavailable,
    with_fields,
)
from jurybox.analysis.agreement import score_matrix
from jurybox.analysis.frame import AnalysisFrame, judge_scores
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.bias import (
    Fit,
    JudgeMean,
    LengthFit,
    LengthGivenTruth,
    Leniency,
    LeniencyJudge,
    LeniencyRange,
    Verbosity,
    VerbosityJudge,
    VerbosityPreferences,
    VerbosityScores,
)
from jurybox.analysis.model.metrics import (
    BinomialTestMetric,
    CorrelationMetric,
    FriedmanMetric,
    KruskalMetric,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.pairs import consolidated

_FIT_ERRORS = (ValueError, np.linalg.LinAlgError, PerfectSeparationError)
# Raised as errors in a fit: a separated logit otherwise "succeeds" with a huge coefficient and a
# p-value near 1, which would silently clear a judge whose choice length predicts perfectly.
_FIT_WARNINGS = (RuntimeWarning, PerfectSeparationWarning, ConvergenceWarning)
F = TypeVar("F", bound=Fit)


def _fit(
    model: type[F],
    y: pd.Series,
    design: pd.DataFrame,
    term: str,
    *,
    kind: str,
    options: AnalysisOptions,
    items: pd.Series | None = None,
) -> F:
    """One statsmodels OLS / Logit fit (intercept added), reported as the coefficient of ``term``.

    The design matrix is built here rather than through a formula: patsy's per-value type
    sniffing dominates the run time on tens of thousands of rows. Where ``items`` repeat (an
    item's two responses, its repeats) the covariance is cluster-robust over items.
    """
    n = len(y)
    if n < 4 or design[term].nunique() < 2:
        return unavailable(model, f"too few observations or no variation in {term}", n)
    exog = sm.add_constant(design.astype(float), has_constant="add")
    robust: dict[str, Any] = {}
    if items is not None and items.nunique() < n:
        groups = pd.factorize(items)[0]
        robust = {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
    try:
        with warnings.catch_warnings():
            for category in _FIT_WARNINGS:
                warnings.simplefilter("error", category)
            if kind == "ols":
                fit = sm.OLS(y.astype(float), exog).fit(**robust)
            else:
                fit = sm.Logit(y.astype(float), exog).fit(disp=0, **robust)
    except (*_FIT_ERRORS, *_FIT_WARNINGS) as exc:
        return unavailable(model, f"{kind} fit failed: {exc}", n)
    low, high = fit.conf_int(alpha=1 - options.confidence).loc[term]
    terms = " + ".join(design.columns)
    fields = {
        "value": float(fit.params[term]),
        "n": int(fit.nobs),
        "p_value": float(fit.pvalues[term]),
        "ci_low": float(low),
        "ci_high": float(high),
        "r_squared": float(fit.rsquared if kind == "ols" else fit.prsquared),
        "method": f"{kind.upper()} {y.name} ~ {terms}; value = coefficient of {term}"
        + ("; cluster-robust covariance over items" if robust else ""),
        "reason": None,
    }
    return model.model_validate(json_safe(fields))


def _verbosity_scores(rows: pd.DataFrame, options: AnalysisOptions) -> VerbosityScores:
    x, y, n = rows["length"].to_numpy(float), rows["score"].to_numpy(float), len(rows)
    multi_arm = rows["arm"].nunique() > 1
    partial = (
        attempt(
            CorrelationMetric,
            stats.partial_spearman,
            x,
            y,
            _arm_indicators(rows["arm"]),
            n=n,
            confidence=options.confidence,
        )
        if multi_arm
        else unavailable(CorrelationMetric, "a single arm: nothing to control for", n)
    )
    design = pd.DataFrame({"length_units": rows["length"] / options.verbosity_unit_chars})
    if multi_arm:
        arms = pd.get_dummies(rows["arm"], prefix="arm", drop_first=True, dtype=float)
        design = pd.concat([design, arms], axis=1)
    ols = _fit(
        LengthFit,
        rows["score"],
        design,
        "length_units",
        kind="ols",
        options=options,
        items=rows["query_id"],
    )
    ols = with_fields(ols, length_unit_chars=options.verbosity_unit_chars)
    spear = attempt(CorrelationMetric, stats.spearman, x, y, n=n, confidence=options.confidence)
    test = partial if partial.value is not None else spear
    return VerbosityScores(
        spearman=spear,
        partial_spearman=partial,
        ols=ols,
        detected=_detected(test.p_value, options.alpha),
        direction=None if test.value is None else ("longer" if test.value > 0 else "shorter"),
    )


def _arm_indicators(arm: pd.Series) -> NDArray[np.float64]:
    """One 0/1 column per arm but the first: with three or more arms a single arm code would
    impose an order and spacing on them (ranking a 0/1 column keeps it a 0/1 contrast)."""
    return np.asarray(pd.get_dummies(arm, drop_first=True, dtype=float), dtype=np.float64)


def _detected(p: float | None, alpha: float) -> bool | None:
    return None if p is None else bool(p < alpha)


def longer_arm(frame: AnalysisFrame) -> pd.Series:
    """The longer response's arm per two-arm item (NaN when equally long)."""

    def build() -> pd.Series:
        lengths = frame.items.pivot_table(index="query_id", columns="arm", values="length")
        lengths = lengths[lengths.notna().sum(axis=1) == 2]
        longer = lengths.idxmax(axis=1)
        spread = lengths.max(axis=1) - lengths.min(axis=1)
        return longer.where(spread > 0)

    return frame.memo("longer_arm", build)


def design_effect(outcomes: pd.Series, items: pd.Series) -> float:
    """The design effect of judgments sharing items (``stats.effective_counts``): what a test
    counting them as independent divides its counts by; 1 for none."""
    if outcomes.empty:
        return 1.0
    return stats.effective_counts(outcomes.to_numpy(float), items.to_numpy()).design_effect


def _verbosity_prefs(
    rows: pd.DataFrame, frame: AnalysisFrame, options: AnalysisOptions
) -> VerbosityPreferences:
    longer = longer_arm(frame)
    rows = rows.assign(longer=rows["query_id"].map(longer))
    decisive = rows[(rows["label"] != "tie") & rows["longer"].notna()]
    longer_won = decisive["label"] == decisive["longer"]
    rate = attempt(
        BinomialTestMetric,
        stats.binomial_test,
        int(longer_won.sum()),
        len(decisive),
        0.5,
        n=len(decisive),
        confidence=options.confidence,
        design_effect=design_effect(longer_won, decisive["query_id"]),
    )
    rate = with_fields(
        rate,
        method=f"share of decisive consolidated verdicts won by the longer response; {rate.method}",
    )
    logit = _length_logit(rows, frame, options)
    given_truth = _length_given_truth(decisive, frame, options)
    p_value: float | None
    if given_truth is not None:  # labels known: only a pull beyond them is a bias
        detected_by, p_value = "given_truth", given_truth.p_value
    elif logit.p_value is not None:  # controls for a treatment effect; the raw rate does not
        detected_by, p_value = "logit", logit.p_value
    else:
        detected_by, p_value = "longer_preferred", rate.p_value
    detected = _detected(p_value, options.alpha)
    preferences = VerbosityPreferences(
        longer_preferred=rate, logit=logit, detected=detected, detected_by=detected_by
    )
    # Set only with labels, so a report without them keeps its old keys.
    if given_truth is None:
        return preferences
    return preferences.model_copy(update={"given_truth": given_truth})


def _length_given_truth(
    decisive: pd.DataFrame, frame: AnalysisFrame, options: AnalysisOptions
) -> LengthGivenTruth | None:
    """The truth-conditioned length test over the verdicts whose item has a gold winner."""
    gold = frame.memo(
        "gold_by_item", lambda: frame.labels.preferences.set_index("query_id")["label"]
    )
    rows = decisive.assign(gold=decisive["query_id"].map(gold))
    rows = rows[rows["gold"].notna() & (rows["gold"] != "tie")]
    if rows.empty:
        return None
    try:
        test = stats.length_preference_given_truth(
            rows["label"] == rows["longer"],
            rows["gold"] == rows["longer"],
            confidence=options.confidence,
            clusters=rows["query_id"].to_numpy(),
        )
    except ValueError:  # the gold is always (or never) the longer: no contrast to test
        return None
    return LengthGivenTruth(
        difference=test.difference,
        ci_low=test.ci_low,
        ci_high=test.ci_high,
        p_value=test.p_value,
        rate_toward=test.rate_toward,
        rate_away=test.rate_away,
        n=len(rows),
        method=test.method,
    )


def _length_logit(rows: pd.DataFrame, frame: AnalysisFrame, options: AnalysisOptions) -> Fit:
    """Logit of "treatment preferred" on the length difference (intercept: treatment effect)."""
    if len(frame.arms) < 2:
        return unavailable(Fit, "needs two arms", len(rows))
    lengths = frame.memo(
        "lengths_by_arm",
        lambda: frame.items.pivot(index="query_id", columns="arm", values="length"),
    )
    control, treatment = frame.arms[0], frame.arms[1]
    if not {control, treatment} <= set(lengths.columns):
        return unavailable(Fit, "needs two arms", len(rows))
    diff = (lengths[treatment] - lengths[control]) / options.verbosity_unit_chars
    data = rows[rows["label"].isin([control, treatment])]
    data = data.assign(
        prefers_treatment=(data["label"] == treatment).astype(float),
        length_diff=data["query_id"].map(diff),
    ).dropna(subset=["length_diff"])
    design = data[["length_diff"]]
    return _fit(
        Fit,
        data["prefers_treatment"],
        design,
        "length_diff",
        kind="logit",
        options=options,
        items=data["query_id"],
    )


def analyze_verbosity(frame: AnalysisFrame, options: AnalysisOptions) -> Verbosity:
    """Verbosity bias per judge (see module docstring)."""
    if frame.items.empty:
        return Verbosity.skip("no items given: response lengths are unknown")
    scores = judge_scores(frame)
    lengths = keyed_like(frame.items[["query_id", "arm", "length"]], scores)
    scores = scores.merge(lengths, on=["query_id", "arm"])
    judges: dict[str, VerbosityJudge] = {}
    for judge in frame.judges:
        own = judge_rows(frame, "verbosity_scores", lambda: scores, judge)
        own_prefs = judge_rows(frame, "consolidated", lambda: consolidated(frame), judge)
        if len(own) or len(own_prefs):
            judges[judge] = VerbosityJudge.given(
                scores=_verbosity_scores(own, options) if len(own) else None,
                preferences=_verbosity_prefs(own_prefs, frame, options) if len(own_prefs) else None,
            )
    if not judges:
        return Verbosity.skip("no score or preference matches an item's responses")
    return Verbosity.of(
        length_unit="characters",
        judges=_holm_verbosity(judges, options),
        multiplicity="detected: Holm-adjusted p (p_holm) < alpha over every judge's score and "
        "preference tests together",
    )


def _verbosity_p(part: VerbosityScores | VerbosityPreferences) -> float | None:
    """The p-value behind a part's "detected" flag (see the two builders above)."""
    if isinstance(part, VerbosityScores):
        test = part.partial_spearman if part.partial_spearman.value is not None else part.spearman
        return test.p_value
    if part.detected_by == "given_truth" and part.given_truth is not None:
        return part.given_truth.p_value
    chosen = part.logit if part.detected_by == "logit" else part.longer_preferred
    return chosen.p_value


def _holm_verbosity(
    judges: dict[str, VerbosityJudge], options: AnalysisOptions
) -> dict[str, VerbosityJudge]:
    """Every judge's "detected" flags with Holm's correction over the whole family of tests."""
    tests = [
        (judge, name, p)
        for judge, entry in judges.items()
        for name in ("scores", "preferences")
        if (part := getattr(entry, name)) is not None and (p := _verbosity_p(part)) is not None
    ]
    if not tests:
        return judges
    holm = stats.holm([p for _, _, p in tests], alpha=options.alpha)
    out = dict(judges)
    for (judge, name, _), adjusted in zip(tests, holm.adjusted, strict=True):
        part = getattr(out[judge], name)
        flagged = with_fields(part, p_holm=adjusted, detected=bool(adjusted < options.alpha))
        out[judge] = with_fields(out[judge], **{name: flagged})
    return out


def _means(rows: pd.DataFrame) -> dict[str, JudgeMean]:
    grouped = rows.groupby("judge")["score"]
    return {
        str(j): JudgeMean.model_validate(json_safe({"mean": float(m), "n": int(c)}))
        for (j, m), c in zip(grouped.mean().items(), grouped.size(), strict=True)
    }


def _lenient_judges(
    frame: AnalysisFrame, common: pd.DataFrame, means: pd.Series
) -> dict[str, LeniencyJudge]:
    read = ["judge", "score"]
    dims = {dim: _means(fresh_scores(frame, dim, columns=read)) for dim in frame.dimensions}
    return {
        str(j): LeniencyJudge(
            mean=_finite(float(means[j])),
            n=int(common[j].notna().sum()),
            dimensions={d: v.get(str(j)) for d, v in dims.items()},
        )
        for j in common.columns
    }


def analyze_leniency(frame: AnalysisFrame, options: AnalysisOptions) -> Leniency:
    """Leniency: per-judge means on commonly scored responses, range, Kruskal-Wallis."""
    del options  # no tunable here; kept for the family signature
    if frame.scores.empty:
        return Leniency.skip(
            "no scores: leniency compares judges' score levels (pairwise-only data)"
        )
    matrix = score_matrix(frame, TOTAL)
    common = matrix.dropna()
    method = "means over the units (item x order x arm x repeat) every judge scored"
    if common.empty or matrix.shape[1] < 2:
        common = matrix
        method = "means over every unit each judge scored (judges share no unit)"
    means = common.mean()
    judges = _lenient_judges(frame, common, means)
    if len(judges) < 2:
        return Leniency.of(
            judges=judges,
            method=method,
            range=skipped("a single judge: no range across judges"),
            kruskal_wallis=skipped("a single judge"),
            friedman=skipped("a single judge"),
        )
    groups = [common[j].dropna().to_numpy() for j in common.columns]
    spread = LeniencyRange(
        value=_finite(float(means.max() - means.min())),
        n=len(common),
        reason=None,
        most_lenient=str(means.idxmax()),
        most_severe=str(means.idxmin()),
        method="max minus min of per-judge mean total score",
    )
    return Leniency.of(
        judges=judges,
        method=method,
        range=spread,
        kruskal_wallis=attempt(
            KruskalMetric, stats.kruskal_wallis, *groups, n=int(sum(map(len, groups)))
        ),
        friedman=_friedman(matrix),
    )


def _friedman(matrix: pd.DataFrame) -> FriedmanMetric | Skipped:
    """Friedman on the units every judge scored: the judges scored the same items (related
    samples), which Kruskal-Wallis treats as independent groups."""
    common = matrix.dropna()
    if matrix.shape[1] < 3:
        return skipped(f"{matrix.shape[1]} judges: Friedman's test needs three")
    return attempt(FriedmanMetric, stats.friedman, common.to_numpy(dtype=float), n=len(common))


def _finite(x: float) -> float | None:
    """None for NaN (a judge with no common unit): the report never holds NaN."""
    return x if math.isfinite(x) else None
