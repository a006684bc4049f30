"""Agreement between judges: Krippendorff's alpha, Fleiss' kappa, Cohen's kappa per judge pair,
percent agreement.

A unit is what every judge saw identically: item x presentation order x repeat (x arm for
scores); retests are left to reliability. Preferences and verdicts are nominal (arm or tie, Pass or
Fail); whole-number dimension scores are ordinal on the rubric's scale (linear-weighted kappa and
Gwet's AC2 over every point of it); the total, a weighted mean, is interval (alpha and ICC, never
kappa or shared labels on means). Alpha carries a BCa bootstrap interval over units.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from jurybox import stats
from jurybox.analysis._common import (
    TOTAL,
    attempt,
    fresh_records,
    fresh_scores,
    icc_over_items,
    score_categories,
    unavailable,
    with_fields,
)
from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model.agreement import (
    Agreement,
    AgreementBlock,
    AgreementUnits,
    PairAgreement,
    ScoreAgreement,
)
from jurybox.analysis.model.metrics import (
    AlphaIntervalMetric,
    AlphaMetric,
    ClusteredProportionMetric,
    FleissKappaMetric,
    GwetMetric,
    KappaMetric,
    PercentAgreementMetric,
)
from jurybox.analysis.options import AnalysisOptions

B = TypeVar("B", bound=AgreementBlock)
K = TypeVar("K", bound=KappaMetric)
# The alpha bootstrap (BCa, with a leave-one-unit-out jackknife) takes ~1.5 s at 1000 units.
ALPHA_CI_MAX_UNITS = 1000
# Judge pairs whose kappa is bootstrapped over items one by one (a panel of 10 judges); past
# that (65 judges: 2,080 pairs) every pair comes from one closed form with units independent.
PAIRS_OVER_ITEMS = 45
# (kappa/AC weights, the ordered categories they weigh over, where that scale came from)
Scale = tuple[Literal["linear"] | None, list[int] | None, str]

PREF_UNIT = ["query_id", "order", "repeat"]
SCORE_UNIT = ["query_id", "order", "arm", "repeat"]


def preference_matrix(frame: AnalysisFrame) -> pd.DataFrame:
    """Units (item x order x repeat) x judges of preferred arms ("tie" included), NaN = missing."""
    ok = fresh_records(frame)[[*PREF_UNIT, "judge", "preferred_arm"]]  # what the pivot reads
    ok = ok[ok["preferred_arm"].notna()]
    ok = ok.drop_duplicates([*PREF_UNIT, "judge"])
    return ok.pivot(index=PREF_UNIT, columns="judge", values="preferred_arm")


def verdict_matrix(frame: AnalysisFrame) -> pd.DataFrame:
    """Units (item x arm x criterion x repeat) x judges of Pass/Fail verdicts."""
    unit = ["query_id", "target_arm", "criterion", "repeat"]
    ok = fresh_records(frame)[[*unit, "judge", "verdict"]]  # what the pivot reads
    ok = ok[ok["verdict"].notna() & ok["target_arm"].notna()]
    ok = ok.assign(criterion=ok["criterion"].fillna(""))
    return ok.drop_duplicates([*unit, "judge"]).pivot(index=unit, columns="judge", values="verdict")


def score_matrix(frame: AnalysisFrame, dimension: str) -> pd.DataFrame:
    """Units (item x order x arm x repeat) x judges of one dimension's scores (the first row
    of each unit and judge), built once per frame and dimension: agreement and leniency both
    read the total's. Callers treat it as read-only."""

    def build() -> pd.DataFrame:
        rows = fresh_scores(frame, dimension, columns=[*SCORE_UNIT, "judge", "score"])
        return rows.drop_duplicates([*SCORE_UNIT, "judge"]).pivot(
            index=SCORE_UNIT, columns="judge", values="score"
        )

    return frame.memo(f"score_matrix|{dimension}", build)


def _pair_codes(
    matrix: pd.DataFrame | np.ndarray[Any, Any], categories: list[int] | None
) -> tuple[np.ndarray[Any, np.dtype[np.intp]], list[Any]] | None:
    """Units x raters codes into the ordered categories every pair's kappa uses (the scale, or
    the sorted labels, which order each pair's own labels alike), or None where the per-pair
    reference must run: labels off the scale, or labels that cannot be sorted."""
    values = matrix.to_numpy() if isinstance(matrix, pd.DataFrame) else matrix
    codes, uniques = pd.factorize(values.ravel(), use_na_sentinel=True)
    labels = uniques.tolist() if hasattr(uniques, "tolist") else list(uniques)
    try:
        cats = list(categories) if categories is not None else sorted(set(labels))
    except TypeError:
        return None
    position = {c: i for i, c in enumerate(cats)}
    if any(label not in position for label in labels):
        return None
    lookup = np.array([position[label] for label in labels] + [-1], dtype=np.intp)
    return lookup[codes].reshape(values.shape), cats


def kappa_metric(
    model: type[K],
    a: Any,
    b: Any,
    weights: Literal["linear", "quadratic"] | None = None,
    *,
    categories: list[int] | None = None,
    n: int,
    confidence: float,
    items: Any,
    rng: int | None,
) -> K:
    """``attempt(model, stats.cohen_kappa, a, b, weights, ...)``, its interval the bootstrap
    over ``items`` (the item of each rated unit)."""
    return attempt(
        model,
        stats.cohen_kappa,
        a,
        b,
        weights,
        categories=categories,
        n=n,
        confidence=confidence,
        clusters=items,
        rng=rng,
    )


def _known(result: Any) -> Any:
    """A statistic computed beforehand, through ``attempt`` like any other."""
    return result


def pair_over_items(
    a: Any,
    b: Any,
    items: Any,
    options: AnalysisOptions,
    *,
    weights: Literal["linear", "quadratic"] | None = None,
    categories: list[int] | None = None,
) -> tuple[KappaMetric, PercentAgreementMetric]:
    """Cohen's kappa (its interval a bootstrap over ``items``, the item of each unit) and the
    percent agreement (its interval counting items) of two raters' labels."""
    n, conf = len(a), options.confidence
    kappa = kappa_metric(
        KappaMetric,
        a,
        b,
        weights,
        categories=categories,
        n=n,
        confidence=conf,
        items=items,
        rng=options.seed,
    )
    share = attempt(
        PercentAgreementMetric, stats.percent_agreement, a, b, clusters=items, n=n, confidence=conf
    )
    return kappa, share


def _pairs_over_items(
    matrix: pd.DataFrame, options: AnalysisOptions, scale: Scale
) -> list[PairAgreement]:
    """Kappa and percent agreement of every judge pair with intervals over items: the
    bootstrap over items (kappa) and the design effect over items (agreement), pair by pair."""
    weights, categories, note = scale
    out = []
    for first, second in combinations(matrix.columns, 2):
        both = matrix[[first, second]].dropna()
        a, b, items = both[first].to_numpy(), both[second].to_numpy(), _items_of(both)
        kappa, share = pair_over_items(a, b, items, options, weights=weights, categories=categories)
        if note and kappa.method is not None:
            kappa = with_fields(kappa, method=f"{kappa.method}; {note}")
        out.append(
            PairAgreement(
                raters=[str(first), str(second)], cohen_kappa=kappa, percent_agreement=share
            )
        )
    return out


def _pair_metrics(
    matrix: pd.DataFrame, options: AnalysisOptions, scale: Scale
) -> list[PairAgreement]:
    """Kappa and percent agreement of every judge pair. Where an item is several units (its
    orders, repeats or arms), with at most ``PAIRS_OVER_ITEMS`` pairs, with intervals over
    items (``_pairs_over_items``); else all pairs computed together
    (``stats.cohen_kappa_pairs``, units taken as independent); a pair the closed form leaves
    open (undefined or degenerate kappa, no shared unit) goes through the per-pair reference
    for its exact value or reason."""
    weights, categories, note = scale
    pairs = list(combinations(matrix.columns, 2))
    items = _items_of(matrix)
    if len(pairs) <= PAIRS_OVER_ITEMS and len(np.unique(items)) < len(items):
        return _pairs_over_items(matrix, options, scale)
    kappas: list[Any] = [None] * len(pairs)
    shares: list[Any] = [None] * len(pairs)
    coded = _pair_codes(matrix, categories)
    if coded is not None:
        codes, cats = coded
        kappas = stats.cohen_kappa_pairs(codes, cats, weights, confidence=options.confidence)
        shares = stats.percent_agreement_pairs(codes, len(cats), confidence=options.confidence)
    rated = matrix.notna().to_numpy().astype(np.int64)
    shared = (rated.T @ rated)[np.triu_indices(len(matrix.columns), k=1)].tolist()
    conf = {"confidence": options.confidence}
    out = []
    for (first, second), known_kappa, known_share, n in zip(
        pairs, kappas, shares, shared, strict=True
    ):
        if known_kappa is None or known_share is None:
            both = matrix[[first, second]].dropna()
            a, b = both[first].to_numpy(), both[second].to_numpy()
        kappa = (
            attempt(KappaMetric, _known, known_kappa, n=n)
            if known_kappa is not None
            else attempt(
                KappaMetric,
                stats.cohen_kappa,
                a,
                b,
                weights,
                categories=categories,
                n=n,
                interval="asymptotic",
                **conf,
            )
        )
        if note and kappa.method is not None:
            kappa = with_fields(kappa, method=f"{kappa.method}; {note}")
        share = (
            attempt(PercentAgreementMetric, _known, known_share, n=n)
            if known_share is not None
            else attempt(PercentAgreementMetric, stats.percent_agreement, a, b, n=n, **conf)
        )
        out.append(
            PairAgreement(
                raters=[str(first), str(second)], cohen_kappa=kappa, percent_agreement=share
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


def _fleiss(matrix: pd.DataFrame, options: AnalysisOptions) -> FleissKappaMetric:
    """Fleiss' kappa over the units every judge rated (it needs equal raters per unit), its
    interval a bootstrap over items."""
    complete = matrix.dropna()
    codes, n_labels = _factorized(complete)
    counts = np.zeros((len(complete), n_labels), dtype=int)
    rows = np.repeat(np.arange(len(complete)), complete.shape[1])
    np.add.at(counts, (rows, codes.ravel()), 1)
    return attempt(
        FleissKappaMetric,
        stats.fleiss_kappa,
        counts,
        clusters=_items_of(complete),
        confidence=options.confidence,
        rng=options.seed,
        n=len(complete),
    )


def _all_agree(matrix: pd.DataFrame, confidence: float) -> ClusteredProportionMetric:
    """Share of the units every judge rated on which all give the same label; its interval
    counts items (an item's orders and repeats are one cluster)."""
    complete = matrix.dropna()
    agree = complete.eq(complete.iloc[:, 0], axis=0).all(axis=1).to_numpy(dtype=float)
    result = attempt(
        ClusteredProportionMetric,
        stats.clustered_proportion,
        agree,
        _items_of(complete),
        n=len(complete),
        confidence=confidence,
    )
    return with_fields(
        result, method=f"share of units on which every judge gives the same label; {result.method}"
    )


def _gwet(matrix: pd.DataFrame, scale: Scale, options: AnalysisOptions) -> GwetMetric:
    """Gwet's AC1 (AC2 on a scale), its interval a bootstrap over items (a unit's item is
    shared by its orders, repeats and arms)."""
    weights, categories, note = scale
    numeric = all(getattr(t, "kind", "O") in "iuf" for t in matrix.dtypes)
    # numeric scores stay a float array (NaN missing), which gwet_ac codes without a Python loop
    labels = matrix.T.to_numpy(dtype=float) if numeric else matrix.T.astype(object).to_numpy()
    metric = attempt(
        GwetMetric,
        stats.gwet_ac,
        labels,
        weights,
        categories=categories,
        n=len(matrix),
        clusters=_items_of(matrix),
        confidence=options.confidence,
        rng=options.seed,
    )
    if note and metric.method is not None:
        metric = with_fields(metric, method=f"{metric.method}, {weights} weights {note}")
    return metric


def _items_of(matrix: pd.DataFrame) -> np.ndarray[Any, Any]:
    """The item of each unit (row) of a units x judges matrix (each row its own where the
    rows name no item)."""
    if "query_id" not in matrix.index.names:
        return np.arange(len(matrix))
    codes, _ = pd.factorize(matrix.index.get_level_values("query_id"))
    return codes


def _interval_block(matrix: pd.DataFrame, options: AnalysisOptions, kind: type[B]) -> B:
    """Continuous values (means): alpha and ICC(2,1); no kappa, Fleiss or shared labels."""
    complete = matrix.dropna()
    return kind.of(
        level="interval",
        n_units=len(matrix),
        n_complete_units=len(complete),
        krippendorff_alpha=attempt(
            AlphaMetric,
            stats.krippendorff_alpha,
            _codes(matrix, "interval"),
            "interval",
            n=len(matrix),
        ),
        krippendorff_alpha_ci=_alpha_ci(matrix, "interval", options),
        icc=icc_over_items(complete.to_numpy(dtype=float), _items_of(complete), options),
    )


def _alpha_ci(matrix: pd.DataFrame, level: str, options: AnalysisOptions) -> AlphaIntervalMetric:
    if len(matrix) > ALPHA_CI_MAX_UNITS:
        return unavailable(
            AlphaIntervalMetric,
            f"bootstrap interval computed up to {ALPHA_CI_MAX_UNITS} units ({len(matrix)} here: "
            "its cost grows with units x distinct values; the point alpha stands)",
            len(matrix),
        )
    return attempt(
        AlphaIntervalMetric,
        stats.krippendorff_alpha_ci,
        _codes(matrix, level),
        level,
        n=len(matrix),
        confidence=options.confidence,
        rng=options.seed,
        clusters=_items_of(matrix),
    )


def agreement_block(
    matrix: pd.DataFrame,
    level: str,
    options: AnalysisOptions,
    kind: type[B],
    *,
    categories: list[int] | None = None,
    scope: str = "",
) -> B:
    """Every agreement statistic of one units x raters matrix, as a ``kind`` section.

    ``level`` is nominal (labels), ordinal (scores on ``categories``, the scale weighted kappa
    and AC2 weigh over; ``scope`` says where it came from) or interval (continuous values).
    """
    matrix = matrix.dropna(how="all")
    if matrix.shape[1] < 2:
        return kind.skip("fewer than two judges rated these units")
    if matrix.empty:
        return kind.skip("no unit was rated")
    if level == "interval":
        return _interval_block(matrix, options, kind)
    ordinal = level == "ordinal"
    scale: Scale = ("linear", categories, scope) if ordinal else (None, None, "")
    return kind.of(
        level=level,
        n_units=len(matrix),
        n_complete_units=len(matrix.dropna()),
        krippendorff_alpha=attempt(
            AlphaMetric, stats.krippendorff_alpha, _codes(matrix, level), level, n=len(matrix)
        ),
        fleiss_kappa=_fleiss(matrix, options),
        percent_agreement=_all_agree(matrix, options.confidence),
        pairs=_pair_metrics(matrix, options, scale),
        krippendorff_alpha_ci=_alpha_ci(matrix, level, options),
        gwet_ac=_gwet(matrix, scale, options),
    )


def _score_block(frame: AnalysisFrame, dim: str, options: AnalysisOptions) -> AgreementBlock:
    """Whole-number dimension scores are ordinal on the scale; the total (a weighted mean) and
    fractional scores are interval."""
    matrix = score_matrix(frame, dim)
    categories, scope = score_categories(matrix.to_numpy(), options)
    if dim == TOTAL or categories is None:
        return agreement_block(matrix, "interval", options, AgreementBlock)
    return agreement_block(
        matrix, "ordinal", options, AgreementBlock, categories=categories, scope=scope
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
    scored = set(frame.scores["dimension"].unique())  # retests included
    dims = [dim for dim in (*frame.dimensions, TOTAL) if dim in scored]
    score_blocks = {dim: _score_block(frame, dim, options) for dim in dims}
    return Agreement.of(
        unit=AgreementUnits(
            preferences="item x presentation order x repeat",
            scores="item x presentation order x arm x repeat",
            verdicts="item x arm x criterion x repeat",
        ),
        judges=[str(j) for j in sorted(judges)],
        preferences=agreement_block(prefs, "nominal", options, AgreementBlock)
        if not prefs.empty
        else AgreementBlock.skip("no pairwise preferences in the records"),
        scores=ScoreAgreement.of(dimensions=score_blocks)
        if score_blocks
        else ScoreAgreement.skip("no scores in the records"),
        verdicts=agreement_block(verdicts, "nominal", options, AgreementBlock)
        if not verdicts.empty
        else AgreementBlock.skip("no criterion verdicts in the records"),
    )
