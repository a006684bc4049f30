"""Rank correlations: Spearman and partial Spearman."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from jurybox.stats._validate import confidence_level, numeric_1d, numeric_2d
from jurybox.stats.results import CorrelationResult


def spearman(x: ArrayLike, y: ArrayLike, *, confidence: float = 0.95) -> CorrelationResult:
    """Spearman's rho with its t-test and a Fisher-z interval.

    Args:
        x: First variable (n ≥ 4, not constant).
        y: Second variable, paired with ``x``.
        confidence: Two-sided confidence level.

    Returns:
        ``CorrelationResult``; the p-value is scipy's (t with n − 2 df), the interval is
        tanh(atanh(rho) ± z·√((1 + rho²/2)/(n − 3))).

    References:
        Spearman, C. (1904). Am. J. Psychol. 15, 72–101. Bonett, D. G. & Wright, T. A. (2000).
        Sample size requirements for estimating Pearson, Kendall and Spearman correlations.
        Psychometrika 65, 23–28. Computed with ``scipy.stats.spearmanr``.
    """
    conf = confidence_level(confidence)
    xa, ya = _pair(x, y)
    res = sps.spearmanr(xa, ya)
    rho = float(res.statistic)
    low, high = _fisher_interval(rho, xa.size, 0, conf)
    return CorrelationResult(
        rho=rho,
        p_value=float(res.pvalue),
        ci_low=low,
        ci_high=high,
        n=int(xa.size),
        n_covariates=0,
        confidence=conf,
        method="Spearman rho (average ranks for ties); t-test; Fisher-z interval with "
        "Bonett-Wright variance",
    )


def partial_spearman(
    x: ArrayLike, y: ArrayLike, covar: ArrayLike, *, confidence: float = 0.95
) -> CorrelationResult:
    """Spearman correlation of x and y controlling for one or more covariates.

    The ranks of x and y are regressed on the ranks of the covariates (with an intercept) and
    the residuals correlated (Pearson), as in R ``ppcor::pcor.test(method="spearman")``.

    Args:
        x: First variable.
        y: Second variable, paired with ``x``.
        covar: Covariate values, shape (n,) or (n, k).
        confidence: Two-sided confidence level.

    Returns:
        ``CorrelationResult`` with the partial rho, its t-test on n − 2 − k df and a Fisher-z
        interval on n − 3 − k.

    References:
        Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd ed., §5.4. Kim, S.
        (2015). ppcor: an R package for a fast calculation to semi-partial correlation
        coefficients. Communications for Statistical Applications and Methods 22, 665–674.
    """
    conf = confidence_level(confidence)
    xa, ya = _pair(x, y)
    z = np.asarray(covar, dtype=np.float64)
    z = numeric_2d(z[:, None] if z.ndim == 1 else z, "covar")
    n, k = xa.size, z.shape[1]
    if z.shape[0] != n:
        raise ValueError(f"covar must have one row per pair ({n}), got shape {z.shape}")
    if n - 3 - k < 1:
        raise ValueError(f"need more than {k + 3} pairs for {k} covariate(s), got {n}")
    if np.any(np.ptp(z, axis=0) == 0):
        raise ValueError("a covariate is constant: it cannot be partialled out")
    design = np.column_stack([np.ones(n), sps.rankdata(z, axis=0)])
    rx, ry = _residual(sps.rankdata(xa), design), _residual(sps.rankdata(ya), design)
    if np.allclose(rx, 0) or np.allclose(ry, 0):
        raise ValueError("x or y is fully explained by the covariates: partial rho is undefined")
    rho = float(np.corrcoef(rx, ry)[0, 1])
    df = n - 2 - k
    t = rho * np.sqrt(df / max(1e-300, 1 - rho**2))
    low, high = _fisher_interval(rho, n, k, conf)
    return CorrelationResult(
        rho=rho,
        p_value=float(2 * sps.t.sf(abs(t), df)),
        ci_low=low,
        ci_high=high,
        n=n,
        n_covariates=k,
        confidence=conf,
        method="partial Spearman (Pearson correlation of rank residuals); t-test on n-2-k df; "
        "Fisher-z interval",
    )


def _pair(x: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    xa, ya = numeric_1d(x, "x", min_size=4), numeric_1d(y, "y", min_size=4)
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must be paired (same length), got {xa.size} and {ya.size}")
    for name, arr in (("x", xa), ("y", ya)):
        if np.ptp(arr) == 0:
            raise ValueError(f"{name} is constant (zero variance): the correlation is undefined")
    return xa, ya


def _residual(v: NDArray[np.float64], design: NDArray[np.float64]) -> NDArray[np.float64]:
    coef, *_ = np.linalg.lstsq(design, v, rcond=None)
    return np.asarray(v - design @ coef, dtype=np.float64)


def _fisher_interval(rho: float, n: int, k: int, conf: float) -> tuple[float, float]:
    z = float(sps.norm.ppf(0.5 + conf / 2))
    se = float(np.sqrt((1 + rho**2 / 2) / (n - 3 - k)))
    centre = float(np.arctanh(np.clip(rho, -1 + 1e-15, 1 - 1e-15)))
    return float(np.tanh(centre - z * se)), float(np.tanh(centre + z * se))
