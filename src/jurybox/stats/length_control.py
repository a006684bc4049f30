"""Length-controlled win rate (AlpacaEval 2 style), reported beside the raw win rate.

Judges favour longer answers, so a model can raise its raw win rate just by writing more. The
length-controlled rate fits a logistic GLM of the outcome on the (squashed) length difference
and predicts the win rate at zero length difference: what the judge would say if both answers
were equally long.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from scipy.special import expit
from statsmodels.genmod.families import Binomial
from statsmodels.genmod.generalized_linear_model import GLM

from jurybox.stats._validate import confidence_level, numeric_1d
from jurybox.stats.prevalence import win_rate_interval

__all__ = ["LengthControlledWinRate", "length_controlled_win_rate"]


@dataclass(frozen=True, slots=True)
class LengthControlledWinRate:
    """Win rate at equal length (``estimate``) beside the raw rate (ties count half in both)."""

    headline: ClassVar[str] = "estimate"

    estimate: float
    ci_low: float
    ci_high: float
    raw_rate: float
    raw_ci_low: float
    raw_ci_high: float
    length_coef: float
    length_p_value: float
    length_scale: float
    n: int
    confidence: float
    method: str


def length_controlled_win_rate(
    outcomes: ArrayLike, length_diff: ArrayLike, *, confidence: float = 0.95
) -> LengthControlledWinRate:
    """Win rate of a model over a baseline with the judge's length preference removed.

    Args:
        outcomes: Per comparison 1 (model won), 0 (lost) or 0.5 (tie).
        length_diff: Length of the model's answer minus the baseline's (characters or tokens).
        confidence: Two-sided confidence level.

    Returns:
        ``LengthControlledWinRate``: a binomial GLM, logit P(win) = β0 + β1·tanh(Δ / sd(Δ)),
        fitted to the outcomes (ties as ½; quasi-likelihood); the estimate is expit(β0) (the
        fitted rate at Δ = 0), its interval the Wald interval of β0 with a sandwich (HC0)
        standard error mapped through expit. ``length_coef`` is β1 with its p-value. The raw
        rate has a Wilson interval.

    References:
        Dubois, Y., Galambosi, B., Liang, P. & Hashimoto, T. B. (2024). Length-controlled
        AlpacaEval: a simple way to debias automatic evaluators. arXiv:2404.04475 (the
        tanh-standardised length term; the instruction-difficulty term needs many models and is
        omitted here). Wedderburn, R. W. M. (1974). Quasi-likelihood functions. Biometrika 61.
    """
    conf = confidence_level(confidence)
    y = numeric_1d(outcomes, "outcomes", min_size=3)
    diff = numeric_1d(length_diff, "length_diff", min_size=3)
    if y.shape != diff.shape:
        raise ValueError(f"outcomes and length_diff must be paired, got {y.size} and {diff.size}")
    if not np.isin(y, (0.0, 0.5, 1.0)).all():
        raise ValueError("outcomes must be 1 (win), 0 (loss) or 0.5 (tie)")
    scale = float(np.std(diff, ddof=1))
    if scale == 0:
        raise ValueError("length_diff is constant: the length effect cannot be separated")
    if np.all(y == y[0]):
        # All ties: the fit is exact (rate ½, no length slope) and its sandwich SE is 0, so the
        # Wald interval would read [0.5, 0.5]; all wins or all losses separate the GLM.
        raise ValueError(
            "every comparison is a tie: no preference for length to control"
            if y[0] == 0.5
            else "every comparison has the same outcome: the GLM separates perfectly"
        )
    beta, se = _fit(y, np.tanh(diff / scale))
    z = float(sps.norm.ppf(0.5 + conf / 2))
    raw = win_rate_interval(
        int(np.sum(y == 1)), int(np.sum(y == 0)), int(np.sum(y == 0.5)), confidence=conf
    )
    return LengthControlledWinRate(
        estimate=float(expit(beta[0])),
        ci_low=float(expit(beta[0] - z * se[0])),
        ci_high=float(expit(beta[0] + z * se[0])),
        raw_rate=raw.estimate,
        raw_ci_low=raw.ci_low,
        raw_ci_high=raw.ci_high,
        length_coef=float(beta[1]),
        length_p_value=float(2 * sps.norm.sf(abs(beta[1] / se[1]))),
        length_scale=scale,
        n=int(y.size),
        confidence=conf,
        method="length-controlled win rate (AlpacaEval 2 style): binomial GLM on "
        "tanh(length difference / sd), rate at zero difference; Wald interval with HC0 SE; "
        "raw rate with Wilson interval; ties count half",
    )


def _fit(
    y: NDArray[np.float64], squashed: NDArray[np.float64]
) -> tuple[NDArray[Any], NDArray[Any]]:
    """Coefficients and HC0 standard errors of logit E[y] = β0 + β1·squashed."""
    design = np.column_stack([np.ones_like(squashed), squashed])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fractional (tie) outcomes warn in statsmodels
        fit = GLM(y, design, family=Binomial()).fit(cov_type="HC0")
    beta, se = np.asarray(fit.params, dtype=float), np.asarray(fit.bse, dtype=float)
    fitted = np.asarray(fit.fittedvalues, dtype=float)
    # a fitted probability of 0 or 1 means the MLE is at infinity: length separates the outcomes
    boundary = np.any((fitted < 1e-8) | (fitted > 1 - 1e-8))
    if boundary or not np.all(np.isfinite(beta)) or not np.all(np.isfinite(se)):
        raise ValueError("the length GLM did not converge (outcomes are separated by length)")
    return beta, se
