"""Inter-rater agreement: percent agreement, Cohen's and Fleiss' kappa, Krippendorff's alpha."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from statsmodels.stats import inter_rater

from jurybox.stats._bootstrap import agreement_interval, cluster_totals
from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import (
    LabelMatrix,
    category_order,
    confidence_level,
    count,
    labels_1d,
    numeric_2d,
)
from jurybox.stats.clustered import cluster_codes, clustered_proportion
from jurybox.stats.kappa_ci import Weights, disagreement_weights, kappa_interval, tables_by_cluster
from jurybox.stats.prevalence import wilson_interval
from jurybox.stats.results import AlphaResult, FleissKappaResult, KappaResult, PercentAgreement

KappaInterval = Literal["bootstrap", "asymptotic"]
Level = Literal["nominal", "ordinal", "interval", "ratio"]

_LEVELS = ("nominal", "ordinal", "interval", "ratio")
_BLOCK = 64  # values per block of the expected disagreement


def percent_agreement(
    a: ArrayLike, b: ArrayLike, *, confidence: float = 0.95, clusters: ArrayLike | None = None
) -> PercentAgreement:
    """Share of items two raters label identically, with a Wilson interval.

    Args:
        a: Labels from rater 1 (any hashable values, no missing).
        b: Labels from rater 2, paired with ``a``.
        confidence: Two-sided confidence level of the interval.
        clusters: The item of each rated unit where items repeat (presentation orders, arms,
            retests): the interval is then ``clustered_proportion``'s, over items.

    Returns:
        ``PercentAgreement`` with the share, its interval and the counts.

    References:
        Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
        inference. JASA 22(158), 209–212. See ``clustered_proportion`` for the clustered one.
    """
    x, y = _paired_labels(a, b)
    agree = int(np.sum(x == y))
    groups = None
    if clusters is not None:
        found = clustered_proportion((x == y).astype(float), clusters, confidence=confidence)
        low, high, conf, groups = found.ci_low, found.ci_high, found.confidence, found.n_clusters
        method = f"percent agreement; {found.method}"
    else:
        ci = wilson_interval(agree, x.size, confidence)
        low, high, conf = ci.ci_low, ci.ci_high, ci.confidence
        method = "percent agreement; Wilson score interval"
    return PercentAgreement(
        estimate=agree / x.size,
        ci_low=low,
        ci_high=high,
        n_agree=agree,
        n_items=int(x.size),
        confidence=conf,
        method=method,
        n_clusters=groups,
    )


def cohen_kappa(
    a: ArrayLike,
    b: ArrayLike,
    weights: Weights = None,
    *,
    categories: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
    interval: KappaInterval = "bootstrap",
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> KappaResult:
    """Cohen's kappa between two raters' labels (optionally weighted), with ASE and interval.

    Args:
        a: Labels from rater 1 (any hashable values, no missing).
        b: Labels from rater 2, paired with ``a``.
        weights: ``None`` (unweighted), ``"linear"`` or ``"quadratic"``; weights use the
            position of each category in ``categories`` (so order matters for weighted kappa).
        categories: The ordered category set (the declared scale, e.g. 1..5); defaults to the
            sorted union of observed labels. Weighted kappa uses every declared category, used
            or not (as statsmodels and irrCAC); unweighted kappa drops unused ones (no effect).
        confidence: Two-sided confidence level of the interval.
        clusters: The item of each rated unit (e.g. a response's item when both responses of an
            item are rated, or the item of each presentation order); the bootstrap resamples
            items. None: every unit its own item.
        interval: ``"bootstrap"`` (default): expanded BCa bootstrap over items
            (``jurybox.stats.kappa_ci``); ``"asymptotic"``: the Wald interval ``kappa ± z·ASE``
            (units independent; quadratic-weighted kappa's covered 0.77–0.89 at 30–100 items).
        n_bootstrap: Bootstrap replicates (≥ 200).
        rng: Generator, seed or None (the bootstrap's resampling).

    Returns:
        ``KappaResult`` (kappa, non-null ASE, the interval, null ASE0 with z and p-value).

    Raises:
        ValueError: Empty or unpaired input; kappa undefined or degenerate: both raters using
            one category, one rater using one category for every item (kappa is 0 whatever the
            other does), every item agreeing exactly (kappa 1: no interval), an asymptotic
            variance that is 0 or undefined.

    References:
        Cohen, J. (1960). A coefficient of agreement for nominal scales. EPM 20, 37–46.
        Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa
        and weighted kappa. Psychological Bulletin 72, 323–327. (As in SAS PROC FREQ and
        ``statsmodels.stats.inter_rater.cohens_kappa``, which computes the estimate here.)
        Efron, B. (1987). JASA 82, 171–185 (BCa); Hesterberg, T. C. (2015). The American
        Statistician 69, 371–386 (expanded percentile).
    """
    x, y = _paired_labels(a, b)
    if interval not in ("bootstrap", "asymptotic"):
        raise ValueError(f"interval must be 'bootstrap' or 'asymptotic', got {interval!r}")
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    cats = category_order(set(np.concatenate([x, y]).tolist()), categories)
    index = {c: i for i, c in enumerate(cats)}
    a_codes = np.array([index[u] for u in x.tolist()], dtype=np.intp)
    b_codes = np.array([index[v] for v in y.tolist()], dtype=np.intp)
    if interval == "asymptotic":
        table = tables_by_cluster(a_codes, b_codes, len(cats), np.zeros(x.size, np.intp))[0]
        return cohen_kappa_table(table, weights, categories=cats, confidence=confidence)
    per_item = tables_by_cluster(a_codes, b_codes, len(cats), clusters)
    table = per_item.sum(axis=0)
    point = _kappa_estimate(table, weights, cats, confidence_level(confidence))
    low, high, how = kappa_interval(
        per_item,
        disagreement_weights(len(cats), weights),
        confidence=point.confidence,
        n_bootstrap=reps,
        rng=as_generator(rng),
    )
    kind = "unweighted" if weights is None else f"{weights}-weighted"
    return replace(
        point,
        ci_low=low,
        ci_high=high,
        n_clusters=int(per_item.shape[0]),
        n_bootstrap=reps if how.startswith("expanded BCa") else None,
        method=f"Cohen's kappa, {kind}; {how}; "
        "ASE of Fleiss-Cohen-Everitt (1969) for the two-sided z-test under H0",
    )


def cohen_kappa_table(
    table: ArrayLike,
    weights: Weights = None,
    *,
    categories: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
) -> KappaResult:
    """Cohen's kappa from a square contingency table (rows rater 1, columns rater 2).

    Args:
        table: k × k counts; cell (i, j) = items rater 1 put in category i and rater 2 in j.
        weights: ``None``, ``"linear"`` or ``"quadratic"`` (by row/column position over all k
            categories, used or not).
        categories: Names for the k categories (default ``0..k-1``).
        confidence: Two-sided confidence level of the Wald interval.

    Returns:
        ``KappaResult``; see ``cohen_kappa`` (a table carries no items to resample: the
        interval is the asymptotic Wald one).

    References:
        Fleiss, Cohen & Everitt (1969); SAS/STAT PROC FREQ "Tests and Measures of Agreement".
    """
    conf = confidence_level(confidence)
    counts = _square_table(table)
    k = counts.shape[0]
    cats = tuple(range(k)) if categories is None else tuple(categories)
    if len(cats) != k:
        raise ValueError(f"categories has {len(cats)} names but the table is {k} × {k}")
    result = _kappa_estimate(counts, weights, cats, conf)
    if not np.isfinite(result.ase) or result.ase <= 0:
        why = (
            f"every one of the {result.n_items} items agrees exactly (kappa = 1)"
            if result.kappa == 1
            else "it is undefined for this table"
        )
        raise ValueError(f"kappa's asymptotic variance is {result.ase}: {why}, so no interval")
    return result


def _kappa_estimate(
    counts: NDArray[np.float64], weights: Weights, cats: tuple[Hashable, ...], conf: float
) -> KappaResult:
    """Kappa, ASEs, z-test and the Wald interval of a table, degenerate tables refused."""
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    used = (counts.sum(axis=0) + counts.sum(axis=1)) > 0
    if weights is None:
        # Unused categories change nothing unweighted; weighted kappa keeps the declared scale
        # because its weights depend on every category's position (statsmodels, irrCAC).
        counts = counts[np.ix_(used, used)]
        cats = tuple(c for c, u in zip(cats, used, strict=True) if u)
    _refuse_degenerate(counts, cats, used)
    with np.errstate(invalid="ignore"):  # a negative variance is refused by the caller
        res = inter_rater.cohens_kappa(counts, wt=weights)
        kappa, ase, ase0 = float(res.kappa), float(np.sqrt(res.var_kappa)), float(res.std_kappa0)
    z_crit = float(sps.norm.ppf(0.5 + conf / 2))
    z = kappa / ase0 if ase0 > 0 else float("inf") * np.sign(kappa)
    kind = "unweighted" if weights is None else f"{weights}-weighted"
    return KappaResult(
        kappa=kappa,
        ase=ase,
        ci_low=max(-1.0, kappa - z_crit * ase),
        ci_high=min(1.0, kappa + z_crit * ase),
        ase0=ase0,
        z=float(z),
        p_value=float(2 * sps.norm.sf(abs(z))),
        n_items=int(counts.sum()),
        categories=cats,
        weights=weights,
        confidence=conf,
        method=(
            f"Cohen's kappa, {kind}; ASE of Fleiss-Cohen-Everitt (1969); Wald interval "
            "clipped to [-1, 1]; two-sided z-test with ASE under H0"
        ),
    )


def _refuse_degenerate(
    counts: NDArray[np.float64], cats: tuple[Hashable, ...], used: NDArray[np.bool_]
) -> None:
    """Kappa is undefined with one category in all, and says nothing when one rater used one
    category for every item (it is 0 whatever the other rater does)."""
    p_row, p_col = counts.sum(axis=1) / counts.sum(), counts.sum(axis=0) / counts.sum()
    if used.sum() < 2 or np.isclose(float(p_row @ p_col), 1.0):
        only = cats[int(np.argmax(p_row + p_col))]
        raise ValueError(
            f"kappa is undefined: both raters used only one category ({only!r}), "
            "so chance agreement is 1"
        )
    for rater, margin in (("rater 1", p_row), ("rater 2", p_col)):
        if np.count_nonzero(margin) == 1:
            only = cats[int(np.argmax(margin))]
            raise ValueError(
                f"kappa is undefined: {rater} gave every one of the {int(counts.sum())} items "
                f"the same label ({only!r}), so kappa is 0 whatever the other rater does"
            )


def fleiss_kappa(
    counts: ArrayLike,
    *,
    clusters: ArrayLike | None = None,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> FleissKappaResult:
    """Fleiss' kappa from an items × categories matrix of rating counts.

    Args:
        counts: ``counts[i, j]`` = number of raters who put unit i in category j. Every unit
            must have the same number of ratings (≥ 2).
        clusters: The item of each unit where items repeat (presentation orders, arms,
            repeats); None: every unit its own item.
        confidence: Two-sided confidence level of the interval.
        n_bootstrap: Bootstrap replicates (≥ 200).
        rng: Generator, seed or None (the bootstrap's resampling).

    Returns:
        ``FleissKappaResult`` with kappa, observed/expected agreement, the z-test of
        kappa = 0 using the null standard error of Fleiss, Nee & Landis (1979) (as R
        ``irr::kappam.fleiss``), and the expanded BCa bootstrap interval over items: both
        agreements are means of per-unit terms, so a resample of items is a weighted sum of
        each item's terms (``_bootstrap.summed_interval``; past 2,000 items the normal
        interval with the jackknife SE over items). The null SE assumes independent units and
        kappa = 0: it tests, it does not bound. No interval (None, the reason in ``method``)
        with fewer than 2 items or resamples that never vary.

    References:
        Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
        Psychological Bulletin 76, 378–382.
        Fleiss, J. L., Nee, J. C. M. & Landis, J. R. (1979). Large sample variance of kappa in
        the case of different sets of raters. Psychological Bulletin 86, 974–977.
    """
    conf = confidence_level(confidence)
    reps = count(n_bootstrap, "n_bootstrap", minimum=200)
    table = numeric_2d(counts, "counts")
    if (table < 0).any() or not np.equal(np.mod(table, 1), 0).all():
        raise ValueError("counts must be non-negative whole numbers (raters per category)")
    codes = cluster_codes(clusters, table.shape[0])
    per_item = table.sum(axis=1)
    n_raters = int(per_item[0])
    if not np.all(per_item == n_raters):
        raise ValueError(
            "every item must have the same number of ratings; row sums range "
            f"{int(per_item.min())}–{int(per_item.max())}"
        )
    if n_raters < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per item, got {n_raters}")
    n_items = table.shape[0]
    p_j = table.sum(axis=0) / (n_items * n_raters)
    p_e = float(np.sum(p_j**2))
    if np.isclose(p_e, 1.0):
        raise ValueError("Fleiss' kappa is undefined: every rating is in one category")
    p_o = float(np.mean(_fleiss_agreement(table, n_raters)))
    kappa = float(inter_rater.fleiss_kappa(table, method="fleiss"))
    pq = p_j * (1 - p_j)
    var0 = (2 / (pq.sum() ** 2 * n_items * n_raters * (n_raters - 1))) * (
        pq.sum() ** 2 - np.sum(pq * ((1 - p_j) - p_j))
    )
    se0 = float(np.sqrt(var0))
    z = kappa / se0
    method = "Fleiss' kappa (1971); z-test with the null SE of Fleiss, Nee & Landis (1979)"
    # per unit: [1, its observed agreement, its ratings per category]
    terms = np.column_stack([np.ones(n_items), _fleiss_agreement(table, n_raters), table])
    low, high, how = agreement_interval(
        cluster_totals(terms, codes),
        lambda sums: _fleiss_of_sums(sums, n_raters),
        confidence=conf,
        n_bootstrap=reps,
        rng=as_generator(rng),
        what="Fleiss' kappa",
    )
    return FleissKappaResult(
        kappa=kappa,
        p_observed=p_o,
        p_expected=p_e,
        se0=se0,
        z=float(z),
        p_value=float(2 * sps.norm.sf(abs(z))),
        n_items=n_items,
        n_raters=n_raters,
        n_categories=table.shape[1],
        method=method + how,
        ci_low=low,
        ci_high=high,
        n_clusters=int(codes.max()) + 1,
        confidence=conf,
    )


def _fleiss_agreement(table: NDArray[np.float64], raters: int) -> NDArray[np.float64]:
    """Each unit's share of agreeing rater pairs."""
    return np.asarray((np.sum(table**2, axis=1) - raters) / (raters * (raters - 1)), np.float64)


def _fleiss_of_sums(sums: NDArray[np.float64], raters: int) -> NDArray[np.float64]:
    """Fleiss' kappa of each row of summed unit terms ([units, agreement, per category…])."""
    units = sums[:, 0]
    shares = sums[:, 2:] / (raters * units[:, None])
    expected = np.sum(shares**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (sums[:, 1] / units - expected) / (1 - expected)
    return np.asarray(np.where(np.isclose(expected, 1.0), np.nan, kappa), np.float64)


def krippendorff_alpha(data: LabelMatrix, level: Level = "nominal") -> AlphaResult:
    """Krippendorff's alpha from a raters × units matrix (NaN or None = missing).

    Units with fewer than two values are unpairable and ignored, as the coefficient defines.

    Args:
        data: raters × units values. Nominal data may be any labels (mapped to codes);
            other levels need numbers.
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"``.

    Returns:
        ``AlphaResult`` with alpha and the counts of pairable units and values.

    References:
        Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School
        for Communication, University of Pennsylvania. The observed disagreement is summed
        over coder pairs and the expected one a block of values at a time, so memory grows
        with coders × units and values × 64, never values² (3 coders × 2,000 continuous
        units took 1.3 GB as coincidence, expected and distance matrices); tests check the
        result against the ``krippendorff`` package (Castro, S., fast-krippendorff), whose
        own ``_coincidences`` needs O(units × values²) memory.
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}, got {level!r}")
    matrix = _reliability_matrix(data, level)
    if np.isinf(matrix).any():
        raise ValueError("data contains infinite values; only NaN or None may mark missing")
    n_raters = matrix.shape[0]
    if n_raters < 2:
        raise ValueError(f"Krippendorff's alpha needs at least 2 raters (rows), got {n_raters}")
    per_unit = np.sum(~np.isnan(matrix), axis=0)
    pairable = per_unit >= 2
    if not pairable.any():
        raise ValueError("no unit has two or more values, so no pairs can be compared")
    values = matrix[:, pairable]
    if np.unique(values[~np.isnan(values)]).size < 2:
        raise ValueError("alpha is undefined: every pairable value is the same (no variation)")
    domain, codes = _value_codes(values)
    # every pairable value counts: a unit's m_u values each pair with m_u - 1 others
    n_v = np.bincount(codes[codes >= 0], minlength=domain.size).astype(np.float64)
    observed = _observed_disagreement(codes, domain, n_v, level)
    alpha = float(1 - observed / _expected_disagreement(domain, n_v, level))
    return AlphaResult(
        alpha=alpha,
        level=level,
        n_units=int(pairable.sum()),
        n_raters=n_raters,
        n_pairable_values=int(per_unit[pairable].sum()),
        method=f"Krippendorff's alpha, {level} metric (Krippendorff 2011 coincidences)",
    )


# --- helpers -------------------------------------------------------------------------------


def _paired_labels(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[Any], NDArray[Any]]:
    x, y = labels_1d(a, "a"), labels_1d(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"a and b must be paired (same length), got {x.size} and {y.size}")
    return x, y


def _square_table(table: ArrayLike) -> NDArray[np.float64]:
    counts = numeric_2d(table, "table")
    if counts.shape[0] != counts.shape[1]:
        raise ValueError(f"table must be square (k × k), got shape {counts.shape}")
    if (counts < 0).any():
        raise ValueError("table counts must be non-negative")
    if counts.sum() == 0:
        raise ValueError("table is empty (all counts are zero)")
    return counts


def _value_codes(values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """The sorted value domain and each value's index in it (-1 where missing)."""
    present = ~np.isnan(values)
    domain, inverse = np.unique(values[present], return_inverse=True)
    codes = np.full(values.shape, -1, dtype=np.intp)
    codes[present] = inverse.ravel()
    return domain, codes


def _observed_disagreement(
    codes: NDArray[np.intp], domain: NDArray[np.float64], n_v: NDArray[np.float64], level: str
) -> float:
    """Σ_ck o_ck δ²_ck of Krippendorff (2011) pair by pair: Σ_u Σ_{raters i ≠ j} δ²(v_iu, v_ju)
    / (m_u − 1), O(raters² × units) time and O(raters × units) memory (no values² matrix)."""
    present = codes >= 0
    weight = np.broadcast_to(1.0 / (present.sum(axis=0) - 1), codes.shape)
    total = 0.0
    for rater in range(codes.shape[0]):
        both = present[rater] & present
        both[rater] = False
        mine = np.broadcast_to(codes[rater], codes.shape)[both]
        delta = _distances(domain, n_v, level, mine, codes[both])
        total += float(np.sum(delta * weight[both]))
    return total


def _expected_disagreement(
    domain: NDArray[np.float64], n_v: NDArray[np.float64], level: str
) -> float:
    """Σ_ck e_ck δ²_ck = Σ_ck n_c n_k δ²_ck / (n − 1) (δ²_cc = 0), a block of values at a time:
    memory O(values × _BLOCK) where the full matrices took gigabytes for continuous scores."""
    idx = np.arange(domain.size)
    total = 0.0
    for rows in np.array_split(idx, max(1, domain.size // _BLOCK)):
        delta = _distances(domain, n_v, level, rows[:, None], idx[None, :])
        total += float(n_v[rows] @ delta @ n_v)
    return total / float(n_v.sum() - 1)


def _distances(
    domain: NDArray[np.float64],
    n_v: NDArray[np.float64],
    level: str,
    rows: NDArray[np.intp] | None = None,
    cols: NDArray[np.intp] | None = None,
) -> NDArray[Any]:
    """Squared difference function δ²_ck of Krippendorff (2011) between the values at
    positions ``rows`` and ``cols`` of the domain (broadcast together; both None: every pair)."""
    if rows is None or cols is None:
        rows, cols = np.arange(domain.size)[:, None], np.arange(domain.size)[None, :]
    if level == "nominal":
        return np.not_equal(rows, cols).astype(np.float64)  # the domain is unique
    c, k = np.broadcast_arrays(domain[rows], domain[cols])
    if level == "interval":
        squared: NDArray[np.float64] = (c - k) ** 2
        return squared
    if level == "ratio":
        total = c + k
        ratio: NDArray[np.float64] = np.divide(
            c - k, total, out=np.zeros(total.shape), where=total != 0
        )
        return ratio**2
    low, high = np.minimum(rows, cols), np.maximum(rows, cols)
    cumulative = np.concatenate([[0.0], np.cumsum(n_v)])
    between: NDArray[np.float64] = cumulative[high + 1] - cumulative[low]
    return (between - (n_v[low] + n_v[high]) / 2) ** 2


def _reliability_matrix(data: LabelMatrix, level: str) -> NDArray[np.float64]:
    if isinstance(data, np.ndarray) and data.dtype.kind in "fiub" and data.ndim == 2:
        if data.size == 0:
            raise ValueError(
                f"data must be a non-empty raters × units matrix, got shape {data.shape}"
            )
        return data.astype(np.float64)  # numeric already: NaN is the only missing value
    raw = np.asarray(data, dtype=object)
    if raw.ndim != 2 or raw.size == 0:
        raise ValueError(f"data must be a non-empty raters × units matrix, got shape {raw.shape}")
    missing = np.vectorize(lambda v: v is None or (isinstance(v, float) and np.isnan(v)))(raw)
    try:
        return np.where(missing, np.nan, raw).astype(np.float64)
    except (TypeError, ValueError):
        if level != "nominal":
            raise ValueError(f"{level} alpha needs numeric values") from None
    codes = {v: i for i, v in enumerate(sorted({str(v) for v in raw[~missing]}))}
    coded = np.full(raw.shape, np.nan)
    coded[~missing] = [codes[str(v)] for v in raw[~missing]]
    return coded
