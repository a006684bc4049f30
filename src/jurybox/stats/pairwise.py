"""Cohen's kappa and percent agreement for every pair of raters at once.

``cohen_kappa`` and ``percent_agreement`` (``jurybox.stats.agreement``) are the reference; a panel
of 65 judges has 2,080 pairs and calling them pair by pair spends seconds in per-call overhead.
Here one ``bincount`` over (pair, label of rater 1, label of rater 2) codes builds the contingency
table of every pair, and the closed forms of ``statsmodels.stats.inter_rater.cohens_kappa``
(Fleiss, Cohen & Everitt 1969), written over the pair axis, give every kappa, ASE and ASE under H0
together. Tests compare each pair with the reference to 1e-12.

A pair gets ``None`` instead of a result where the reference must decide: no unit rated by both,
kappa undefined (one category, chance agreement 1) or degenerate (a rater with one category for
every unit), or a variance so close to zero that rounding decides between 0 and NaN. The caller
then calls the reference on that pair for its exact result or its error message.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats._validate import confidence_level
from jurybox.stats.kappa_ci import Weights, disagreement_weights
from jurybox.stats.results import KappaResult, PercentAgreement

__all__ = ["cohen_kappa_pairs", "cohen_kappa_tables", "percent_agreement_pairs", "rater_pairs"]

FloatArray = NDArray[np.float64]
# The reference raises when chance agreement is within np.isclose's 1.001e-5 of 1; pairs within
# ten times that are left to it, so that the two never disagree on which pairs are undefined.
_UNDEFINED_MARGIN = 1e-4
# Variance numerators (before dividing by n and (1 - p_e)^2) below this are left to the
# reference: their sign (0 or NaN after the square root) is decided by rounding.
_VARIANCE_FLOOR = 1e-9


def rater_pairs(n_raters: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """The first and second rater of every pair, in ``itertools.combinations`` order."""
    first, second = np.triu_indices(n_raters, k=1)
    return first.astype(np.intp), second.astype(np.intp)


def _codes_2d(codes: ArrayLike, n_categories: int) -> NDArray[np.intp]:
    matrix = np.asarray(codes)
    if matrix.ndim != 2 or matrix.dtype.kind not in "iu":
        raise ValueError(
            f"codes must be a units × raters integer matrix, got {matrix.dtype} {matrix.shape}"
        )
    if matrix.size and (matrix.min() < -1 or matrix.max() >= n_categories):
        raise ValueError(f"codes must lie in -1 (missing) .. {n_categories - 1}")
    return matrix.astype(np.intp)


def pair_tables(codes: ArrayLike, n_categories: int) -> FloatArray:
    """pairs × k × k contingency tables (rows: first rater's label) of a units × raters matrix
    of label codes 0..k-1 (-1 = missing), pairs in ``rater_pairs`` order."""
    matrix = _codes_2d(codes, n_categories)
    first, second = rater_pairs(matrix.shape[1])
    a, b = matrix[:, first], matrix[:, second]
    both = (a >= 0) & (b >= 0)
    k = n_categories
    pair = np.broadcast_to(np.arange(first.size), a.shape)
    cells = (pair[both] * k + a[both]) * k + b[both]
    counts = np.bincount(cells, minlength=first.size * k * k)
    return counts.reshape(first.size, k, k).astype(np.float64)


def percent_agreement_pairs(
    codes: ArrayLike, n_categories: int, *, confidence: float = 0.95
) -> list[PercentAgreement | None]:
    """``percent_agreement`` of every pair of raters (None where they share no unit).

    Args:
        codes: units × raters label codes 0..k-1, -1 = missing (equal codes = equal labels).
        n_categories: k.
        confidence: Two-sided confidence level of the Wilson intervals.
    """
    conf = confidence_level(confidence)
    tables = pair_tables(codes, n_categories)
    agree = np.trace(tables, axis1=1, axis2=2).astype(np.int64)
    n = tables.sum(axis=(1, 2)).astype(np.int64)
    shared = n > 0
    low, high = np.zeros(n.size), np.ones(n.size)
    if shared.any():
        low[shared], high[shared] = proportion_confint(
            agree[shared].astype(np.float64), n[shared], alpha=1 - conf, method="wilson"
        )
    return [
        PercentAgreement(
            estimate=a / m,
            ci_low=lo,
            ci_high=hi,
            n_agree=a,
            n_items=m,
            confidence=conf,
            method="percent agreement; Wilson score interval",
        )
        if m
        else None
        for a, m, lo, hi in zip(*(c.tolist() for c in (agree, n, low, high)), strict=True)
    ]


def _marginals(tables: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    nobs = tables.sum(axis=(1, 2))
    probs = tables / nobs[:, None, None]
    return nobs, probs, tables.sum(axis=2) / nobs[:, None], tables.sum(axis=1) / nobs[:, None]


def _unweighted(tables: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Kappa, its variance and the variance under H0 (numerators and denominators apart)."""
    nobs, probs, row, col = _marginals(tables)
    diag = np.diagonal(probs, axis1=1, axis2=2)
    agree_exp = np.sum(row * col, axis=1)
    kappa = (np.trace(tables, axis1=1, axis2=2) / nobs - agree_exp) / (1 - agree_exp)
    slack = (1 - kappa)[:, None]
    term_a = np.sum(diag * (1 - (row + col) * slack) ** 2, axis=1)
    cross = probs * (col[:, :, None] + row[:, None, :]) ** 2
    k = tables.shape[1]
    cross[:, np.arange(k), np.arange(k)] = 0
    term_b = (1 - kappa) ** 2 * cross.sum(axis=(1, 2))
    term_c = (kappa - agree_exp * (1 - kappa)) ** 2
    scale = (1 - agree_exp) ** 2 * nobs
    numerator = term_a + term_b - term_c
    numerator0 = agree_exp + agree_exp**2 - np.sum(col * row * (col + row), axis=1)
    return kappa, numerator, numerator0, scale


def _weighted(
    tables: FloatArray, weights: Weights
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    nobs, probs, row, col = _marginals(tables)
    disagreement = disagreement_weights(tables.shape[1], weights)
    prob_exp = col[:, None, :] * row[:, :, None]
    kappa = 1 - np.sum(disagreement * tables, axis=(1, 2)) / nobs / np.sum(
        disagreement * prob_exp, axis=(1, 2)
    )
    w = 1.0 - disagreement
    w_row = np.sum(col[:, None, :] * w, axis=2)
    w_col = np.sum(row[:, :, None] * w, axis=1)
    agree_wexp = np.sum(w * prob_exp, axis=(1, 2))
    margins = w_col[:, None, :] + w_row[:, :, None]
    term_a = probs * (w - margins * (1 - kappa)[:, None, None]) ** 2
    numerator = term_a.sum(axis=(1, 2)) - (kappa - agree_wexp * (1 - kappa)) ** 2
    numerator0 = np.sum(prob_exp * (w - margins) ** 2, axis=(1, 2)) - agree_wexp**2
    return kappa, numerator, numerator0, (1 - agree_wexp) ** 2 * nobs


def _computable(tables: FloatArray, numerator: FloatArray, numerator0: FloatArray) -> Any:
    """Pairs the closed form settles exactly as the reference does (see the module docstring)."""
    nobs = tables.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        row, col = tables.sum(axis=2) / nobs[:, None], tables.sum(axis=1) / nobs[:, None]
        chance = np.sum(row * col, axis=1)
    used = np.sum((row + col) > 0, axis=1)
    # A rater with one category for every unit: the reference refuses the pair (kappa is 0
    # whatever the other rater does).
    both_vary = (np.count_nonzero(row > 0, axis=1) >= 2) & (np.count_nonzero(col > 0, axis=1) >= 2)
    return (
        (nobs > 0)
        & (used >= 2)
        & both_vary
        & (np.abs(chance - 1) > _UNDEFINED_MARGIN)
        & (numerator > _VARIANCE_FLOOR)
        & (numerator0 > _VARIANCE_FLOOR)
    )


def cohen_kappa_pairs(
    codes: ArrayLike,
    categories: Sequence[Hashable],
    weights: Weights = None,
    *,
    confidence: float = 0.95,
) -> list[KappaResult | None]:
    """``cohen_kappa`` of every pair of raters, in ``rater_pairs`` order.

    Args:
        codes: units × raters label codes, -1 = missing; code i is ``categories[i]``.
        categories: The ordered category set (for weighted kappa, its positions are the scale,
            as ``cohen_kappa``'s ``categories``; unweighted, unused categories drop out).
        weights: ``None``, ``"linear"`` or ``"quadratic"``.
        confidence: Two-sided confidence level of the Wald intervals.

    Returns:
        Per pair the ``KappaResult`` that ``cohen_kappa`` returns on the two raters' shared
        units, or None where the reference must decide (see the module docstring).
    """
    cats = tuple(categories)
    tables = pair_tables(codes, len(cats))
    return cohen_kappa_tables(tables, cats, weights, confidence=confidence)


def cohen_kappa_tables(
    tables: ArrayLike,
    categories: Sequence[Hashable],
    weights: Weights = None,
    *,
    confidence: float = 0.95,
) -> list[KappaResult | None]:
    """``cohen_kappa_table`` of each of a stack of k × k tables (e.g. one per judge).

    Args:
        tables: n × k × k counts; rows rater 1, columns rater 2.
        categories: The k ordered categories (as in ``cohen_kappa_pairs``).
        weights: ``None``, ``"linear"`` or ``"quadratic"``.
        confidence: Two-sided confidence level of the Wald intervals.

    Returns:
        Per table its ``KappaResult``, or None where the reference must decide (an empty table,
        kappa undefined or a variance too close to zero; see the module docstring).
    """
    conf = confidence_level(confidence)
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    cats = tuple(categories)
    stack = np.asarray(tables, dtype=np.float64)
    if stack.ndim != 3 or stack.shape[1:] != (len(cats), len(cats)):
        raise ValueError(f"tables must be n × {len(cats)} × {len(cats)}, got shape {stack.shape}")
    if stack.shape[0] == 0 or len(cats) < 2:
        return [None] * stack.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa, numerator, numerator0, scale = (
            _unweighted(stack) if weights is None else _weighted(stack, weights)
        )
        ase, ase0 = np.sqrt(numerator / scale), np.sqrt(numerator0 / scale)
        z = kappa / ase0
    ok = _computable(stack, numerator, numerator0)
    z_crit = float(sps.norm.ppf(0.5 + conf / 2))
    p_value = 2 * sps.norm.sf(np.abs(np.where(ok, z, 0.0)))
    low = np.maximum(-1.0, kappa - z_crit * ase)
    high = np.minimum(1.0, kappa + z_crit * ase)
    used = (stack.sum(axis=1) + stack.sum(axis=2)) > 0
    kind = "unweighted" if weights is None else f"{weights}-weighted"
    method = (
        f"Cohen's kappa, {kind}; ASE of Fleiss-Cohen-Everitt (1969); Wald interval "
        "clipped to [-1, 1]; two-sided z-test with ASE under H0"
    )
    columns = (kappa, ase, low, high, ase0, z, p_value, stack.sum(axis=(1, 2)))
    rows = zip(*(c.tolist() for c in columns), strict=True)
    out: list[KappaResult | None] = []
    for index, (k_, se, lo, hi, se0, z_, p, n) in enumerate(rows):
        if not ok[index]:
            out.append(None)
            continue
        names = cats if weights else tuple(c for c, u in zip(cats, used[index], strict=True) if u)
        out.append(
            KappaResult(
                kappa=k_,
                ase=se,
                ci_low=lo,
                ci_high=hi,
                ase0=se0,
                z=z_,
                p_value=p,
                n_items=int(n),
                categories=names,
                weights=weights,
                confidence=conf,
                method=method,
            )
        )
    return out
