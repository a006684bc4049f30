"""Score reliability: intraclass correlation and Cronbach's alpha."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from jurybox.stats._bootstrap import cluster_totals, summed_interval
from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import confidence_level, count, numeric_2d
from jurybox.stats.clustered import cluster_codes
from jurybox.stats.results import CronbachAlphaResult, ICCResult

ICCKind = Literal["1,1", "2,1", "3,1", "1,k", "2,k", "3,k"]
_KINDS = ("1,1", "2,1", "3,1", "1,k", "2,k", "3,k")
_NAMES = {
    "1": "one-way random, absolute agreement",
    "2": "two-way random, absolute agreement",
    "3": "two-way mixed, consistency",
}


@dataclass(frozen=True, slots=True)
class _Anova:
    n: int
    k: int
    msr: float  # between targets
    msc: float  # between raters
    mse: float  # residual (two-way)
    msw: float  # within targets (one-way)


def icc(
    ratings: ArrayLike,
    kind: ICCKind = "2,1",
    *,
    confidence: float = 0.95,
    clusters: ArrayLike | None = None,
    n_bootstrap: int = 2000,
    rng: RNGLike = None,
) -> ICCResult:
    """Intraclass correlation of a targets × raters matrix.

    Args:
        ratings: n targets (rows) × k raters (columns), complete (no NaN), n ≥ 2, k ≥ 2.
        kind: Shrout & Fleiss form: ``"1,1"`` one-way random; ``"2,1"`` two-way random,
            absolute agreement; ``"3,1"`` two-way mixed, consistency; ``",k"`` forms are the
            reliability of the mean of the k raters.
        confidence: Two-sided confidence level.
        clusters: The item of each target (row), e.g. an item's two responses or its repeats.
            Where an item holds more than one target the interval is an expanded BCa
            bootstrap over items (the F-based intervals take the targets as independent);
            None, one target per item, or resamples that never vary (perfect agreement): the
            F-based interval, and ``method`` says why.
        n_bootstrap: Bootstrap replicates (≥ 200), with ``clusters``.
        rng: Generator, seed or None (the bootstrap's resampling).

    Returns:
        ``ICCResult`` with the ICC, the F-test of ICC = 0 (one-way F for ``1,*``, two-way
        otherwise) and the exact (``1``, ``3``) or Satterthwaite-approximate (``2``) interval,
        or the bootstrap over items (above).
        Zero residual variance is a defined case: identical raters give ICC 1 with F = ∞,
        p = 0 and the interval [1, 1]; raters a constant apart give ICC(A,1) < 1 (e.g. 0.8537
        for ``[[1, 2], [2, 3], [3, 4], [5, 6]]``) and consistency ICC 1.

    Raises:
        ValueError: Too few targets or raters, missing values, all ratings equal, or a form
            whose denominator is 0 (two targets with the same mean: ``[[1, 2], [2, 1]]``),
            each saying why.

    References:
        Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
        reliability. Psychological Bulletin 86, 420–428.
        McGraw, K. O. & Wong, S. P. (1996). Forming inferences about some intraclass correlation
        coefficients. Psychological Methods 1, 30–46. (Intervals as in R ``psych::ICC``.)
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    conf = confidence_level(confidence)
    a = _anova(ratings, "ratings", "targets", "raters")
    model, average = kind[0], kind.endswith("k")
    if model == "1":
        value, f, df2 = _icc1(a, average), _f_ratio(a.msr, a.msw), a.n * (a.k - 1)
    else:
        f, df2 = _f_ratio(a.msr, a.mse), (a.n - 1) * (a.k - 1)
        value = _icc2(a, average) if model == "2" else _icc3(a, average)
    df1 = a.n - 1
    if model == "2":
        low, high = _ci_icc2(a, value if not average else _icc2(a, False), conf, average)
    else:
        low, high = _ci_f(f, (df1, df2), a.k, conf, average)
    size = "mean of k raters" if average else "single rater"
    how = "Satterthwaite (McGraw-Wong) interval" if model == "2" else "exact F interval"
    codes = cluster_codes(clusters, a.n)
    if codes.max() + 1 < a.n:  # an item holds several targets: resample items
        try:
            low, high, how = _icc_over_items(
                numeric_2d(ratings, "ratings"), codes, kind, conf, (n_bootstrap, rng)
            )
        except ValueError as exc:  # e.g. perfect agreement: no spread to resample
            how = f"{how} over targets (the bootstrap over items is undefined: {exc})"
    return ICCResult(
        icc=value,
        kind=kind,
        f=f,
        df1=float(df1),
        df2=float(df2),
        p_value=float(sps.f.sf(f, df1, df2)),
        ci_low=low,
        ci_high=high,
        n_targets=a.n,
        n_raters=a.k,
        confidence=conf,
        method=f"ICC({kind}) {_NAMES[model]}, {size}; {how}",
    )


def _icc_over_items(
    x: NDArray[np.float64],
    codes: NDArray[np.intp],
    kind: str,
    conf: float,
    boot: tuple[int, RNGLike],
) -> tuple[float, float, str]:
    """The expanded BCa interval of the ICC over items: the two-way sums of squares are sums
    of per-target terms, so a resample of items is a weighted sum of each item's terms."""
    reps = count(boot[0], "n_bootstrap", minimum=200)
    k = x.shape[1]
    y = x - x.mean()  # centred: the sums of squares below subtract large equal terms less
    row = y.sum(axis=1)
    terms = np.column_stack([np.ones(len(y)), y, row**2, np.sum(y**2, axis=1)])
    low, high, how = summed_interval(
        cluster_totals(terms, codes),
        lambda sums: _icc_of_sums(sums, k, kind),
        confidence=conf,
        n_bootstrap=reps,
        rng=as_generator(boot[1]),
        what=f"ICC({kind})",
    )
    return low, min(1.0, high), how


def _icc_of_sums(sums: NDArray[np.float64], k: int, kind: str) -> NDArray[np.float64]:
    """The ICC of each row of summed per-target terms [1, y_1..y_k, (Σ_j y_j)², Σ_j y_j²]."""
    n, cols = sums[:, 0], sums[:, 1 : k + 1]
    total = cols.sum(axis=1)
    mean_sq = total**2 / (n * k)
    ss_rows = sums[:, k + 1] / k - mean_sq
    ss_cols = np.sum(cols**2, axis=1) / n - mean_sq
    ss_err = np.maximum(sums[:, k + 2] - mean_sq - ss_rows - ss_cols, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        msr, msc = ss_rows / (n - 1), ss_cols / (k - 1)
        mse, msw = ss_err / ((n - 1) * (k - 1)), (ss_cols + ss_err) / (n * (k - 1))
        error = msw if kind[0] == "1" else mse
        if kind.endswith("k"):
            den = msr + (msc - mse) / n if kind[0] == "2" else msr
        else:
            den = msr + (k - 1) * error + (k * (msc - mse) / n if kind[0] == "2" else 0.0)
        found: NDArray[np.float64] = np.where(den > 0, (msr - error) / den, np.nan)
    return found


def cronbach_alpha(data: ArrayLike, *, confidence: float = 0.95) -> CronbachAlphaResult:
    """Cronbach's alpha of a subjects × items matrix with Feldt's interval.

    Args:
        data: n subjects (rows) × k items (columns), e.g. items × rubric dimensions; complete.
        confidence: Two-sided confidence level.

    Returns:
        ``CronbachAlphaResult``; alpha equals ICC(3,k) of the same matrix.

    References:
        Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests.
        Psychometrika 16, 297–334. Feldt, L. S., Woodruff, D. J. & Salih, F. A. (1987).
        Statistical inference for coefficient alpha. Applied Psychological Measurement 11,
        93–103.
    """
    conf = confidence_level(confidence)
    x = _matrix(data, "data", "subjects", "items")
    n, k = x.shape
    total_var = float(np.var(x.sum(axis=1), ddof=1))
    if total_var == 0:
        raise ValueError("data has zero variance in subjects' total scores: alpha is undefined")
    alpha = k / (k - 1) * (1 - float(np.var(x, axis=0, ddof=1).sum()) / total_var)
    df1, df2 = n - 1, (n - 1) * (k - 1)
    tail = (1 - conf) / 2
    return CronbachAlphaResult(
        alpha=alpha,
        ci_low=1 - (1 - alpha) * float(sps.f.ppf(1 - tail, df1, df2)),
        ci_high=1 - (1 - alpha) * float(sps.f.ppf(tail, df1, df2)),
        n_subjects=n,
        n_items=k,
        confidence=conf,
        method="Cronbach's alpha (sample variances); Feldt F-distribution interval",
    )


# --- helpers -------------------------------------------------------------------------------


def _matrix(data: ArrayLike, name: str, rows: str, cols: str) -> NDArray[np.float64]:
    x = numeric_2d(data, name)
    n, k = x.shape
    if n < 2:
        raise ValueError(f"{name} needs at least 2 {rows} (rows), got shape {x.shape}")
    if k < 2:
        raise ValueError(f"{name} needs at least 2 {cols} (columns), got shape {x.shape}")
    return x


def _anova(data: ArrayLike, name: str, rows: str, cols: str) -> _Anova:
    x = _matrix(data, name, rows, cols)
    n, k = x.shape
    grand = x.mean()
    ss_rows = k * float(np.sum((x.mean(axis=1) - grand) ** 2))
    ss_cols = n * float(np.sum((x.mean(axis=0) - grand) ** 2))
    ss_total = float(np.sum((x - grand) ** 2))
    if ss_total == 0:
        raise ValueError(f"{name} has zero variance (all ratings are equal): the ICC is undefined")
    # Rounding can leave a tiny negative residual when raters differ by a constant offset.
    ss_err = max(ss_total - ss_rows - ss_cols, 0.0)
    if ss_err <= 1e-12 * ss_total:
        ss_err = 0.0
    msw = (ss_cols + ss_err) / (n * (k - 1))
    return _Anova(n, k, ss_rows / (n - 1), ss_cols / (k - 1), ss_err / ((n - 1) * (k - 1)), msw)


def _div(num: float, den: float, why: str) -> float:
    """``num / den``, or a ValueError giving the reason when the ratio is undefined."""
    if den == 0:
        raise ValueError(f"the ICC is undefined for these ratings: {why}")
    return num / den


def _f_ratio(between: float, error: float) -> float:
    """The F statistic; infinite (p = 0) when raters agree perfectly but targets differ."""
    if error == 0:
        if between == 0:
            raise ValueError(
                "ratings has neither between-target nor residual variance (every target has "
                "the same mean and raters differ by a constant): the ICC F-ratio is undefined"
            )
        return float("inf")
    return between / error


_SAME_MEANS = "every target has the same mean, so the variance estimate in the denominator is 0"


def _icc1(a: _Anova, average: bool) -> float:
    if average:
        return _div(a.msr - a.msw, a.msr, _SAME_MEANS)
    return _div(a.msr - a.msw, a.msr + (a.k - 1) * a.msw, _SAME_MEANS)


def _icc2(a: _Anova, average: bool) -> float:
    if average:
        return _div(a.msr - a.mse, a.msr + (a.msc - a.mse) / a.n, _SAME_MEANS)
    den = a.msr + (a.k - 1) * a.mse + a.k * (a.msc - a.mse) / a.n
    return _div(a.msr - a.mse, den, _SAME_MEANS)


def _icc3(a: _Anova, average: bool) -> float:
    if average:
        return _div(a.msr - a.mse, a.msr, _SAME_MEANS)
    return _div(a.msr - a.mse, a.msr + (a.k - 1) * a.mse, _SAME_MEANS)


def _ci_f(f: float, df: tuple[int, int], k: int, conf: float, average: bool) -> tuple[float, float]:
    if np.isinf(f):
        return 1.0, 1.0  # no residual variance: the interval collapses onto ICC = 1
    df1, df2 = df
    tail = (1 - conf) / 2
    f_low = f / float(sps.f.ppf(1 - tail, df1, df2))
    f_high = f * float(sps.f.ppf(1 - tail, df2, df1))
    if average:
        why = "F = 0 (every target has the same mean)"
        return 1 - _div(1, f_low, why), 1 - _div(1, f_high, why)
    return (f_low - 1) / (f_low + k - 1), (f_high - 1) / (f_high + k - 1)


def _ci_icc2(a: _Anova, icc21: float, conf: float, average: bool) -> tuple[float, float]:
    """McGraw & Wong (1996) Table 7 interval for ICC(A,1); Spearman-Brown for ICC(A,k)."""
    if icc21 == 1.0:
        return 1.0, 1.0  # no rater or residual variance: perfect absolute agreement
    n, k, tail = a.n, a.k, (1 - conf) / 2
    ratio = icc21 / (1 - icc21)
    va, vb = k * ratio / n, 1 + k * ratio * (n - 1) / n
    why = "the Satterthwaite degrees of freedom have a zero denominator"
    v = _div(
        (va * a.msc + vb * a.mse) ** 2,
        (va * a.msc) ** 2 / (k - 1) + (vb * a.mse) ** 2 / ((n - 1) * (k - 1)),
        why,
    )
    f_up = float(sps.f.ppf(1 - tail, n - 1, v))
    f_lo = float(sps.f.ppf(1 - tail, v, n - 1))
    denom = k * a.msc + (k * n - k - n) * a.mse
    why = "the McGraw-Wong interval has a zero denominator"
    low = _div(n * (a.msr - f_up * a.mse), f_up * denom + n * a.msr, why)
    high = _div(n * (f_lo * a.msr - a.mse), denom + n * f_lo * a.msr, why)
    if average:
        return low * k / (1 + low * (k - 1)), high * k / (1 + high * (k - 1))
    return low, high
