"""Hypothesis tests and effect sizes for paired judge scores and verdicts."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize
from scipy import stats as sps
from statsmodels.stats import contingency_tables, weightstats

from jurybox.stats._validate import confidence_level, count, numeric_1d, numeric_2d, paired
from jurybox.stats.results import (
    BinomialTestResult,
    EffectSizeResult,
    HolmResult,
    KruskalResult,
    McNemarResult,
    RankBiserialResult,
    TOSTResult,
    WilcoxonResult,
)

Alternative = Literal["two-sided", "greater", "less"]
_ALTERNATIVES = ("two-sided", "greater", "less")
_ZERO_METHODS = ("wilcox", "pratt", "zsplit")
#: scipy's "auto" rule: exact up to 50 pairs; with ties/zeros, enumerate sign flips up to 13.
_EXACT_MAX, _PERMUTATION_MAX = 50, 13


def wilcoxon_signed_rank(
    x: ArrayLike,
    y: ArrayLike | None = None,
    *,
    alternative: Alternative = "two-sided",
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
    method: Literal["auto", "exact", "asymptotic"] = "auto",
    correction: bool = False,
) -> WilcoxonResult:
    """Wilcoxon signed-rank test of x − y (or of x alone), recording the variant used.

    Args:
        x: First sample, or the differences when ``y`` is None.
        y: Second sample, paired with ``x``.
        alternative: ``"two-sided"``, ``"greater"`` (x − y shifted up) or ``"less"``.
        zero_method: ``"wilcox"`` drops zero differences; ``"pratt"`` ranks them and then
            drops them; ``"zsplit"`` splits their ranks between the signs.
        method: ``"exact"``, ``"asymptotic"`` (normal approximation, tie-corrected variance)
            or ``"auto"``: scipy's rule, resolved here and recorded — exact up to 50 pairs
            without ties or zeros; with ties/zeros, an exact permutation (all 2^n sign flips)
            up to 13 pairs, else asymptotic.
        correction: Continuity correction (asymptotic only).

    Returns:
        ``WilcoxonResult`` with the statistic, p-value, z (asymptotic only) and the resolved
        ``method``, ``zero_method`` and ``correction``.

    References:
        Wilcoxon, F. (1945). Individual comparisons by ranking methods. Biometrics Bulletin 1,
        80–83. Pratt, J. W. (1959). JASA 54, 655–667. Computed with ``scipy.stats.wilcoxon``.
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    if zero_method not in _ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {_ZERO_METHODS}, got {zero_method!r}")
    if method not in ("auto", "exact", "asymptotic"):
        raise ValueError(f"method must be 'auto', 'exact' or 'asymptotic', got {method!r}")
    d = paired(x, y)
    n_zero = int(np.sum(d == 0))
    if n_zero == d.size:
        raise ValueError("every difference is zero: the signed-rank test is undefined")
    nonzero = np.abs(d[d != 0])
    ties = np.unique(nonzero).size < nonzero.size or (zero_method != "wilcox" and n_zero > 0)
    resolved, label = _resolve_wilcoxon(method, d.size, ties or n_zero > 0)
    scipy_method: Any = sps.PermutationMethod() if resolved == "permutation" else resolved
    res = sps.wilcoxon(
        d,
        zero_method=zero_method,
        correction=correction,
        alternative=alternative,
        method=scipy_method,
    )
    z = getattr(res, "zstatistic", None)
    used_correction = correction and resolved == "asymptotic"
    return WilcoxonResult(
        statistic=float(res.statistic),
        p_value=float(res.pvalue),
        z=None if z is None else float(z),
        n=int(d.size - n_zero) if zero_method == "wilcox" else int(d.size),
        n_zero=n_zero,
        alternative=alternative,
        zero_method=zero_method,
        correction=used_correction,
        method=label + ("; continuity correction" if used_correction else ""),
    )


def cohens_d_paired(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> EffectSizeResult:
    """Cohen's d_z for paired samples: mean(x − y) / sd(x − y), with a noncentral-t interval.

    Args:
        x: First sample.
        y: Second sample, paired with ``x``.
        confidence: Two-sided confidence level.

    Returns:
        ``EffectSizeResult``; the interval inverts the noncentral t distribution of
        t = d_z·√n with n − 1 degrees of freedom (exact under normality).

    References:
        Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed.
        Lakens, D. (2013). Calculating and reporting effect sizes. Frontiers in Psychology 4,
        863 (d_z = t / √n). Cumming, G. & Finch, S. (2001). A primer on the understanding, use,
        and calculation of confidence intervals that are based on central and noncentral
        distributions. EPM 61, 532–574.
    """
    conf = confidence_level(confidence)
    d = paired(x, y, min_size=2)
    sd = float(np.std(d, ddof=1))
    if sd == 0:
        raise ValueError("the paired differences have zero variance: d_z is undefined")
    n = d.size
    dz = float(np.mean(d)) / sd
    low, high = _nct_interval(dz * np.sqrt(n), n - 1, conf)
    return EffectSizeResult(
        estimate=dz,
        ci_low=float(low / np.sqrt(n)),
        ci_high=float(high / np.sqrt(n)),
        n=n,
        confidence=conf,
        method="Cohen's d_z (mean difference / SD of differences); noncentral-t interval",
    )


def rank_biserial(
    x: ArrayLike, y: ArrayLike | None = None, *, zero_method: Literal["wilcox", "pratt"] = "wilcox"
) -> RankBiserialResult:
    """Matched-pairs rank-biserial correlation r = (T+ − T−) / (T+ + T−).

    Args:
        x: First sample, or the differences when ``y`` is None.
        y: Second sample, paired with ``x``.
        zero_method: ``"wilcox"`` drops zero differences before ranking; ``"pratt"`` ranks
            them and leaves them out of both sums.

    Returns:
        ``RankBiserialResult`` in [−1, 1] with the signed rank sums (average ranks for ties).

    References:
        Kerby, D. S. (2014). The simple difference formula: an approach to teaching
        nonparametric correlation. Comprehensive Psychology 3, 11.IT.3.1.
    """
    if zero_method not in ("wilcox", "pratt"):
        raise ValueError(f"zero_method must be 'wilcox' or 'pratt', got {zero_method!r}")
    d = paired(x, y)
    n_zero = int(np.sum(d == 0))
    if n_zero == d.size:
        raise ValueError("every difference is zero: the rank-biserial correlation is undefined")
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = sps.rankdata(np.abs(d))
    t_plus, t_minus = float(ranks[d > 0].sum()), float(ranks[d < 0].sum())
    return RankBiserialResult(
        estimate=(t_plus - t_minus) / (t_plus + t_minus),
        t_plus=t_plus,
        t_minus=t_minus,
        n=int(np.sum(d != 0)),
        n_zero=n_zero,
        method=f"matched-pairs rank-biserial (Kerby 2014); zeros: {zero_method}; average ranks",
    )


def tost_paired(
    x: ArrayLike,
    y: ArrayLike,
    margin: float | tuple[float, float],
    *,
    alpha: float = 0.05,
) -> TOSTResult:
    """Paired two one-sided t-tests (TOST) for equivalence of means within ``margin``.

    Args:
        x: First sample.
        y: Second sample, paired with ``x``.
        margin: Equivalence bound on the raw scale: ``m`` means (−m, m); or ``(low, high)``.
        alpha: Level of each one-sided test; equivalence is claimed when both reject.

    Returns:
        ``TOSTResult`` with both one-sided tests and the (1 − 2·alpha) interval of the mean
        difference (equivalence ⇔ that interval lies inside the margin).

    References:
        Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the
        power approach for assessing the equivalence of average bioavailability. J.
        Pharmacokinetics and Biopharmaceutics 15, 657–680. Lakens, D. (2017). Equivalence
        tests. SPPS 8, 355–362. Computed with ``statsmodels.stats.weightstats.ttost_paired``.
    """
    level = confidence_level(alpha, "alpha")
    low, high = _margin(margin)
    d = paired(x, y, min_size=2)
    sd = float(np.std(d, ddof=1))
    if sd == 0:
        raise ValueError("the paired differences have zero variance: the t-tests are undefined")
    xa, ya = numeric_1d(x, "x"), numeric_1d(y, "y")
    p, (t1, p1, df1), (t2, p2, _) = weightstats.ttost_paired(xa, ya, low, high)
    mean, se = float(np.mean(d)), sd / float(np.sqrt(d.size))
    half = float(sps.t.ppf(1 - level, d.size - 1)) * se
    return TOSTResult(
        p_value=float(p),
        equivalent=bool(p < level),
        mean_diff=mean,
        t_lower=float(t1),
        p_lower=float(p1),
        t_upper=float(t2),
        p_upper=float(p2),
        df=float(df1),
        ci_low=mean - half,
        ci_high=mean + half,
        margin_low=low,
        margin_high=high,
        alpha=level,
        n=int(d.size),
        method=f"paired TOST (Schuirmann), two one-sided t-tests at alpha={level:g}; "
        f"{1 - 2 * level:.0%} t interval",
    )


def mcnemar(
    table: ArrayLike,
    method: Literal["exact", "mid-p", "asymptotic"] = "exact",
    *,
    correction: bool = False,
) -> McNemarResult:
    """McNemar's test for paired binary outcomes from a 2 × 2 table.

    Args:
        table: 2 × 2 counts; rows = outcome under condition 1, columns = under condition 2.
        method: ``"exact"`` conditional binomial test on the discordant pairs; ``"mid-p"``,
            the exact two-sided p-value minus the point probability of the observed min(b, c);
            or ``"asymptotic"`` chi-square with 1 df.
        correction: Edwards' continuity correction (asymptotic only).

    Returns:
        ``McNemarResult``; ``statistic`` is min(b, c) for the exact forms, chi-square otherwise.

    References:
        McNemar, Q. (1947). Psychometrika 12, 153–157. Fagerland, M. W., Lydersen, S. &
        Laake, P. (2013). The McNemar test for binary matched-pairs data: mid-p and asymptotic
        are better than exact conditional. BMC Medical Research Methodology 13, 91.
    """
    if method not in ("exact", "mid-p", "asymptotic"):
        raise ValueError(f"method must be 'exact', 'mid-p' or 'asymptotic', got {method!r}")
    counts = numeric_2d(table, "table")
    if counts.shape != (2, 2):
        raise ValueError(f"table must be 2 × 2, got shape {counts.shape}")
    if (counts < 0).any() or not np.equal(np.mod(counts, 1), 0).all():
        raise ValueError("table must hold non-negative whole-number counts")
    b, c = int(counts[0, 1]), int(counts[1, 0])
    if b + c == 0:
        raise ValueError("no discordant pairs (b = c = 0): McNemar's test is undefined")
    exact = method != "asymptotic"
    res = contingency_tables.mcnemar(counts, exact=exact, correction=correction)
    p = float(res.pvalue)
    if method == "mid-p":
        # 2·P(X < k) + P(X = k), k = min(b, c): the exact p before statsmodels clips it at 1
        # (subtracting the point probability from the clipped value is wrong when b = c).
        k, m = min(b, c), b + c
        p = float(2 * sps.binom.cdf(k - 1, m, 0.5) + sps.binom.pmf(k, m, 0.5))
    label = {
        "exact": "exact conditional binomial test on discordant pairs",
        "mid-p": "mid-p binomial test on discordant pairs (Fagerland et al. 2013)",
        "asymptotic": "asymptotic chi-square (1 df)"
        + (", Edwards continuity correction" if correction else ", no continuity correction"),
    }[method]
    return McNemarResult(
        statistic=float(res.statistic),
        p_value=min(1.0, p),
        b=b,
        c=c,
        n_discordant=b + c,
        method=label,
    )


def kruskal_wallis(*groups: ArrayLike) -> KruskalResult:
    """Kruskal–Wallis H test across two or more independent groups (tie-corrected).

    Args:
        *groups: Two or more 1-D samples.

    Returns:
        ``KruskalResult`` with H, df = groups − 1, p (chi-square approximation) and
        epsilon² = H / (n − 1).

    References:
        Kruskal, W. H. & Wallis, W. A. (1952). JASA 47, 583–621. Tomczak, M. & Tomczak, E.
        (2014). The need to report effect size estimates revisited. Trends in Sport Sciences
        21, 19–25 (epsilon²). Computed with ``scipy.stats.kruskal``.
    """
    if len(groups) < 2:
        raise ValueError(f"Kruskal-Wallis needs at least 2 groups, got {len(groups)}")
    samples = [numeric_1d(g, f"groups[{i}]") for i, g in enumerate(groups)]
    pooled = np.concatenate(samples)
    if np.unique(pooled).size < 2:
        raise ValueError("all values are identical: the Kruskal-Wallis test is undefined")
    res = sps.kruskal(*samples)
    n = pooled.size
    return KruskalResult(
        statistic=float(res.statistic),
        df=len(samples) - 1,
        p_value=float(res.pvalue),
        epsilon_squared=float(res.statistic) / (n - 1),
        n=n,
        n_groups=len(samples),
        method="Kruskal-Wallis H, tie-corrected; chi-square approximation; epsilon^2 = H/(n-1)",
    )


def binomial_test(
    successes: int,
    n: int,
    p: float = 0.5,
    *,
    alternative: Alternative = "two-sided",
    confidence: float = 0.95,
    design_effect: float = 1.0,
) -> BinomialTestResult:
    """Exact binomial test, e.g. of how often a judge prefers the first position.

    Args:
        successes: Count of successes (e.g. verdicts for the response shown first).
        n: Trials (e.g. non-tied pairwise verdicts).
        p: Null proportion (0.5 for "no position preference").
        alternative: ``"two-sided"``, ``"greater"`` or ``"less"``.
        confidence: Confidence level of the Wilson interval (one-sided for one-sided tests).
        design_effect: Where trials share an item (both presentation orders, retests), the
            design effect of ``stats.effective_counts``: both counts are divided by it (Rao &
            Scott 1992), rounded to whole numbers for the exact test. 1: independent trials.

    Returns:
        ``BinomialTestResult`` with the exact p-value and a Wilson interval (on the effective
        counts where ``design_effect`` > 1; ``successes`` and ``n`` stay the raw counts).

    References:
        Clopper & Pearson (1934); Wilson (1927). Zheng, L. et al. (2023). Judging LLM-as-a-judge
        with MT-Bench and Chatbot Arena (position bias). Computed with ``scipy.stats.binomtest``.
        Rao, J. N. K. & Scott, A. J. (1992). Biometrics 48, 577–585.
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    trials = count(n, "n", minimum=1)
    k = count(successes, "successes")
    if k > trials:
        raise ValueError(f"successes ({k}) cannot exceed n ({trials})")
    null = float(p)
    if not 0.0 < null < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    conf = confidence_level(confidence)
    deff = float(design_effect)
    if not (math.isfinite(deff) and deff >= 1.0):
        raise ValueError(f"design_effect must be a finite number ≥ 1, got {design_effect!r}")
    n_eff = max(1, round(trials / deff))
    k_eff = min(n_eff, round(k / deff))
    res = sps.binomtest(k_eff, n_eff, null, alternative=alternative)
    ci = res.proportion_ci(confidence_level=conf, method="wilson")
    method = f"exact binomial test ({alternative}); Wilson interval"
    if deff > 1.0:
        method += (
            f"; Rao-Scott: counts divided by the design effect {deff:.3g} (items as clusters) "
            f"to {k_eff} of {n_eff}"
        )
    return BinomialTestResult(
        successes=k,
        n=trials,
        proportion=k / trials,
        null_proportion=null,
        p_value=float(res.pvalue),
        ci_low=float(ci.low),
        ci_high=float(ci.high),
        alternative=alternative,
        confidence=conf,
        method=method,
    )


def holm(pvalues: ArrayLike, *, alpha: float = 0.05) -> HolmResult:
    """Holm step-down adjustment of a family of p-values (family-wise error rate).

    Args:
        pvalues: The family's raw p-values, each in [0, 1].
        alpha: Family-wise error rate for the ``reject`` flags.

    Returns:
        ``HolmResult`` with adjusted p-values and reject flags in the input order.

    References:
        Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
        Journal of Statistics 6, 65–70. Computed in numpy exactly as ``statsmodels``
        ``multipletests(method="holm")`` does (tested against it), without the
        ``gc.collect()`` it runs on every call (seconds when many objects are alive).
    """
    level = confidence_level(alpha, "alpha")
    p = numeric_1d(pvalues, "pvalues")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues must all lie in [0, 1]")
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    multipliers = np.arange(p.size, 0, -1)
    # reject while p_(i) <= alpha / (m - i + 1); stop at the first that is not
    passes = ranked <= level / multipliers
    stop = int(np.argmin(passes)) if not passes.all() else p.size
    reject, adjusted = np.zeros(p.size, dtype=bool), np.empty(p.size)
    reject[order[:stop]] = True
    adjusted[order] = np.minimum(np.maximum.accumulate(ranked * multipliers), 1.0)
    return HolmResult(
        adjusted=tuple(float(v) for v in adjusted),
        reject=tuple(bool(v) for v in reject),
        alpha=level,
        method="Holm (1979) step-down, family-wise error rate",
    )


# --- helpers -------------------------------------------------------------------------------


def _resolve_wilcoxon(method: str, n: int, ties_or_zeros: bool) -> tuple[str, str]:
    exact = "exact null distribution"
    asym = "normal approximation with tie-corrected variance"
    if method == "exact":
        note = " (ties/zeros present: statistic rounded conservatively)" if ties_or_zeros else ""
        return "exact", exact + note
    if method == "asymptotic":
        return "asymptotic", asym
    if n > _EXACT_MAX:
        resolved, label = "asymptotic", asym + f" (auto: n > {_EXACT_MAX})"
    elif not ties_or_zeros:
        resolved, label = "exact", exact + " (auto)"
    elif n <= _PERMUTATION_MAX:
        resolved = "permutation"
        label = f"exact permutation over all 2^{n} sign flips (auto: ties/zeros)"
    else:
        resolved, label = "asymptotic", asym + " (auto: ties/zeros)"
    return resolved, label


def _nct_interval(t_obs: float, df: int, conf: float) -> tuple[float, float]:
    """Noncentrality parameters whose t distributions put t_obs at the two tail quantiles."""
    tail = (1 - conf) / 2

    def root(target: float) -> float:
        def gap(ncp: float) -> float:
            cdf = float(sps.nct.cdf(t_obs, df, ncp))
            if np.isnan(cdf):  # scipy underflows far in the tail; the limit is 0 or 1
                cdf = 0.0 if ncp > t_obs else 1.0
            return cdf - target

        span = 10.0 + abs(t_obs) * 2
        return float(optimize.brentq(gap, t_obs - span, t_obs + span, xtol=1e-12))

    return root(1 - tail), root(tail)


def _margin(margin: float | tuple[float, float]) -> tuple[float, float]:
    if isinstance(margin, tuple):
        if len(margin) != 2:
            raise ValueError(f"margin must be a number or a (low, high) pair, got {margin!r}")
        low, high = float(margin[0]), float(margin[1])
    else:
        width = float(margin)
        if width <= 0:
            raise ValueError(f"a symmetric margin must be positive, got {margin!r}")
        low, high = -width, width
    if not low < high or not (np.isfinite(low) and np.isfinite(high)):
        raise ValueError(f"margin needs finite low < high, got ({low}, {high})")
    return low, high
