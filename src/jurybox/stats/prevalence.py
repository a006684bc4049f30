"""Proportions, judge error rates and the bias-corrected pass rate (Rogan–Gladen).

``corrected_pass_rate`` is where the sampling error of *both* data sets must show: the labelled
set (through TPR and TNR) and the unlabelled set (through the observed pass rate). judgy 0.1.0
resamples only the labelled set and holds the observed rate fixed, so its interval is too narrow
when the unlabelled set is small. The default interval here draws all three rates and was chosen
by Monte-Carlo coverage (tests/stats/test_corrected_coverage.py, bench/corrected_pass_rate.py).
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats._rng import RNGLike, as_generator
from jurybox.stats._validate import binary_1d, binary_pair, confidence_level, count
from jurybox.stats.clustered import effective_counts
from jurybox.stats.results import (
    CorrectedRate,
    LowDiscriminationWarning,
    ProportionInterval,
    RoganGladenResult,
    TprTnrResult,
    WinRateResult,
)

Interval = Literal["jeffreys-bootstrap", "percentile-bootstrap", "lang-reiczigel"]
_INTERVALS = ("jeffreys-bootstrap", "percentile-bootstrap", "lang-reiczigel")
#: Below this TPR + TNR − 1 the correction multiplies noise by more than 5: warn.
WEAK_YOUDEN = 0.2
FloatArray = NDArray[np.float64]


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> ProportionInterval:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: Number of successes (may be fractional, e.g. ties counted as half).
        n: Number of trials (≥ 1).
        confidence: Two-sided confidence level.

    Returns:
        ``ProportionInterval`` with the proportion and its Wilson interval.

    References:
        Wilson, E. B. (1927). JASA 22, 209–212. Brown, L. D., Cai, T. T. & DasGupta, A. (2001).
        Interval estimation for a binomial proportion. Statistical Science 16, 101–133.
        Computed by ``statsmodels.stats.proportion.proportion_confint(method="wilson")``.
    """
    conf = confidence_level(confidence)
    trials = count(n, "n", minimum=1)
    k = float(successes)
    if not 0.0 <= k <= trials:
        raise ValueError(f"successes must be between 0 and n={trials}, got {successes!r}")
    low, high = proportion_confint(k, trials, alpha=1 - conf, method="wilson")
    return ProportionInterval(
        estimate=k / trials,
        ci_low=float(low),
        ci_high=float(high),
        successes=k,
        n=trials,
        confidence=conf,
        method="Wilson score interval",
    )


def tpr_tnr(labels: ArrayLike, preds: ArrayLike, *, confidence: float = 0.95) -> TprTnrResult:
    """A judge's TPR and TNR against gold pass/fail labels, with Wilson intervals.

    Args:
        labels: Gold labels, 1/True = pass.
        preds: The judge's verdicts on the same items, 1/True = pass.
        confidence: Two-sided confidence level of both intervals.

    Returns:
        ``TprTnrResult``: TPR = P(judge says pass | pass), TNR = P(judge says fail | fail).

    References:
        Altman, D. G. & Bland, J. M. (1994). Diagnostic tests 1: sensitivity and specificity.
        BMJ 308, 1552.
    """
    y, p = _labelled(labels, preds)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    tpr = wilson_interval(int(np.sum(y & p)), n_pos, confidence)
    tnr = wilson_interval(int(np.sum(~y & ~p)), n_neg, confidence)
    return TprTnrResult(
        tpr=tpr,
        tnr=tnr,
        n_positive=n_pos,
        n_negative=n_neg,
        youden=tpr.estimate + tnr.estimate - 1,
        method="TPR and TNR against gold labels; Wilson score intervals",
    )


def rogan_gladen(p_obs: float, tpr: float, tnr: float) -> RoganGladenResult:
    """Rogan–Gladen corrected prevalence (p_obs + tnr − 1) / (tpr + tnr − 1), clipped to [0, 1].

    Args:
        p_obs: Share of items the judge passed.
        tpr: The judge's true-positive rate.
        tnr: The judge's true-negative rate.

    Returns:
        ``RoganGladenResult`` with the clipped estimate and the raw value.

    Raises:
        ValueError: If tpr + tnr − 1 ≤ 0 (the judge is no better than chance; undefined).

    References:
        Rogan, W. J. & Gladen, B. (1978). Estimating prevalence from the results of a screening
        test. American Journal of Epidemiology 107, 71–76.
    """
    for name, value in (("p_obs", p_obs), ("tpr", tpr), ("tnr", tnr)):
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"{name} must be a proportion in [0, 1], got {value!r}")
    youden = float(tpr) + float(tnr) - 1
    _check_youden(youden)
    raw = (float(p_obs) + float(tnr) - 1) / youden
    estimate = min(1.0, max(0.0, raw))
    return RoganGladenResult(
        estimate=estimate,
        raw=raw,
        clipped=estimate != raw,
        p_obs=float(p_obs),
        tpr=float(tpr),
        tnr=float(tnr),
        method="Rogan-Gladen (1978), clipped to [0, 1]",
    )


def corrected_pass_rate(
    test_labels: ArrayLike,
    test_preds: ArrayLike,
    unlabeled_preds: ArrayLike,
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 20_000,
    rng: RNGLike = None,
    interval: Interval = "jeffreys-bootstrap",
    clusters: tuple[ArrayLike, ArrayLike] | None = None,
) -> CorrectedRate:
    """Bias-corrected pass rate whose interval carries both sets' sampling uncertainty.

    The point estimate is Rogan–Gladen with TPR/TNR from the labelled set and p_obs from the
    unlabelled set. Interval methods (all treat the two sets as independent samples):

    - ``"jeffreys-bootstrap"`` (default): each draw takes TPR, TNR and p_obs from their
      Jeffreys posteriors Beta(k + ½, n − k + ½) — a smoothed Bayesian bootstrap of the
      labelled positives, labelled negatives and unlabelled verdicts — maps them through
      Rogan–Gladen and takes the equal-tailed percentiles. Draws with TPR + TNR ≤ 1 are
      discarded (the prior is truncated to judges better than chance). Over the 432-point
      grid of bench/corrected_pass_rate.py (labelled n 50–500, unlabelled n 100–100,000,
      TPR/TNR 0.7–0.95, prevalence 0.2–0.8; 1,000 data sets each) its coverage is 0.947 on
      average, 0.920–0.973 per point, 98% of points in [0.93, 0.97]; the plain percentile
      bootstrap falls to 0.83 when TPR and TNR are high and the labelled set small (an
      estimated TPR of 1.0 has no bootstrap variance).
    - ``"percentile-bootstrap"``: nonparametric resampling of the labelled set (multinomial
      over its four cells) and of the unlabelled set (binomial), percentile interval.
    - ``"lang-reiczigel"``: the adjusted Wald interval of Lang & Reiczigel (2014), as R
      ``asht::prevSeSp``; deterministic, conservative with small labelled sets.

    Args:
        test_labels: Gold labels of the labelled set (1/True = pass).
        test_preds: The judge's verdicts on the labelled set.
        unlabeled_preds: The judge's verdicts on the unlabelled set.
        confidence: Two-sided confidence level.
        n_bootstrap: Draws for the bootstrap intervals (ignored by ``"lang-reiczigel"``).
        rng: Generator, seed or None.
        interval: Interval method, see above.
        clusters: The item of each labelled and of each unlabelled verdict, where an item gives
            several (its responses, its criteria): the interval then counts items, each set's
            counts (labelled positives, labelled negatives, unlabelled verdicts) divided by
            their design effect over items (Rao & Scott 1992, ``effective_counts``); the point
            estimate is unchanged.

    Returns:
        ``CorrectedRate`` with the estimate, interval, TPR/TNR, set sizes and ``method``.

    Raises:
        ValueError: On empty or non-binary input, a labelled set without both classes, or an
            estimated TPR + TNR − 1 ≤ 0.

    Warns:
        LowDiscriminationWarning: TPR + TNR − 1 < 0.2, or its Wald lower bound is ≤ 0.

    References:
        Rogan & Gladen (1978), AJE 107, 71–76. Lee, C. et al. (2025). How to correctly report
        LLM-as-a-judge evaluations. arXiv:2511.21140. Lang, Z. & Reiczigel, J. (2014).
        Confidence limits for prevalence of disease adjusted for estimated sensitivity and
        specificity. Prev. Vet. Med. 113, 13–22. Rubin, D. B. (1981). The Bayesian bootstrap.
        Ann. Statist. 9, 130–134. Brown, Cai & DasGupta (2001), Stat. Sci. 16, 101–133.
    """
    conf = confidence_level(confidence)
    if interval not in _INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(_INTERVALS)}, got {interval!r}")
    draws = count(n_bootstrap, "n_bootstrap", minimum=1)
    if interval != "lang-reiczigel" and draws < 1000:
        raise ValueError(f"n_bootstrap must be at least 1000 for a stable interval, got {draws}")
    y, p = _labelled(test_labels, test_preds)
    u = binary_1d(unlabeled_preds, "unlabeled_preds")
    cells = LabelledCounts(
        tp=np.array([np.sum(y & p)], float),
        n_pos=np.array([y.sum()], float),
        tn=np.array([np.sum(~y & ~p)], float),
        n_neg=np.array([(~y).sum()], float),
    )
    x, m = np.array([u.sum()], float), float(u.size)
    tpr, tnr = float(cells.tp[0] / cells.n_pos[0]), float(cells.tn[0] / cells.n_neg[0])
    _check_youden(tpr + tnr - 1)
    _warn_weak(cells, conf)
    estimate = rogan_gladen(float(x[0]) / m, tpr, tnr).estimate
    if clusters is not None:
        cells, x, m = _effective(y, p, u, clusters)
    low, high = corrected_bounds(
        cells, x, m, confidence=conf, interval=interval, n_bootstrap=draws, rng=as_generator(rng)
    )
    if not (np.isfinite(low[0]) and np.isfinite(high[0])):
        raise ValueError(
            "no bootstrap draw had TPR + TNR > 1: the labelled set is too small to bound the "
            "corrected rate"
        )
    return CorrectedRate(
        estimate=estimate,
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        tpr=tpr,
        tnr=tnr,
        n_labelled=int(y.size),
        n_unlabelled=int(m),
        method=_describe(interval, draws)
        + ("; counts divided by their design effect over items (Rao-Scott)" if clusters else ""),
        p_obs=float(u.mean()),
        confidence=conf,
        n_bootstrap=0 if interval == "lang-reiczigel" else draws,
    )


def win_rate_interval(
    wins: int,
    losses: int,
    ties: int = 0,
    *,
    confidence: float = 0.95,
    tie_policy: Literal["half", "exclude"] = "half",
) -> WinRateResult:
    """Win rate of A over B with a Wilson interval.

    Args:
        wins: Comparisons A won.
        losses: Comparisons A lost.
        ties: Ties.
        confidence: Two-sided confidence level.
        tie_policy: ``"half"`` counts a tie as half a win (n = all comparisons);
            ``"exclude"`` drops ties (n = wins + losses).

    Returns:
        ``WinRateResult`` with the rate and its Wilson interval.

    References:
        Wilson (1927); Brown, Cai & DasGupta (2001).
    """
    w, lo, t = count(wins, "wins"), count(losses, "losses"), count(ties, "ties")
    if tie_policy not in ("half", "exclude"):
        raise ValueError(f"tie_policy must be 'half' or 'exclude', got {tie_policy!r}")
    n = w + lo + (t if tie_policy == "half" else 0)
    if n == 0:
        raise ValueError("no comparisons to compute a win rate from (wins + losses = 0)")
    successes = w + (0.5 * t if tie_policy == "half" else 0.0)
    ci = wilson_interval(successes, n, confidence)
    return WinRateResult(
        estimate=ci.estimate,
        ci_low=ci.ci_low,
        ci_high=ci.ci_high,
        wins=w,
        losses=lo,
        ties=t,
        n=n,
        confidence=ci.confidence,
        method=f"win rate, ties {'counted as half' if tie_policy == 'half' else 'excluded'}; "
        "Wilson score interval",
    )


# --- the vectorised core (also used by the coverage test and the benchmark) ----------------


class LabelledCounts:
    """Per-dataset labelled-set counts as float arrays of equal shape (S,)."""

    __slots__ = ("n_neg", "n_pos", "tn", "tp")

    def __init__(self, tp: FloatArray, n_pos: FloatArray, tn: FloatArray, n_neg: FloatArray):
        self.tp, self.n_pos, self.tn, self.n_neg = tp, n_pos, tn, n_neg


def corrected_bounds(
    cells: LabelledCounts,
    x: FloatArray,
    m: float,
    *,
    confidence: float,
    interval: Interval,
    n_bootstrap: int,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray]:
    """Interval bounds for S datasets at once (arrays of shape (S,)); no input checks.

    ``x`` counts the judge's passes among ``m`` unlabelled items. Used by
    ``corrected_pass_rate`` (S = 1) and, for speed, by the coverage simulations.
    """
    if interval == "lang-reiczigel":
        return _lang_reiczigel(cells, x, m, confidence)
    shape = (x.size, n_bootstrap)
    if interval == "jeffreys-bootstrap":
        tpr = rng.beta(
            cells.tp[:, None] + 0.5, cells.n_pos[:, None] - cells.tp[:, None] + 0.5, shape
        )
        tnr = rng.beta(
            cells.tn[:, None] + 0.5, cells.n_neg[:, None] - cells.tn[:, None] + 0.5, shape
        )
        p_obs = rng.beta(x[:, None] + 0.5, m - x[:, None] + 0.5, shape)
    else:
        tpr, tnr, p_obs = _resample(cells, x, m, rng, shape)
    youden = tpr + tnr - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.clip((p_obs + tnr - 1) / youden, 0.0, 1.0)
    theta[~(youden > 0)] = np.nan  # TPR + TNR <= 1 or an empty class: RG is undefined there
    tail = (1 - confidence) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN row gives NaN, checked below
        low = np.nanquantile(theta, tail, axis=1)
        high = np.nanquantile(theta, 1 - tail, axis=1)
    return low, high


def _resample(
    cells: LabelledCounts, x: FloatArray, m: float, rng: np.random.Generator, shape: tuple[int, int]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Nonparametric bootstrap of both sets, by counts (a multinomial over the 4 labelled cells)."""
    n = cells.n_pos + cells.n_neg
    n_pos = rng.binomial(n[:, None].astype(np.int64), (cells.n_pos / n)[:, None], shape)
    n_neg = n[:, None] - n_pos
    tp = rng.binomial(n_pos, (cells.tp / cells.n_pos)[:, None])
    tn = rng.binomial(n_neg.astype(np.int64), (cells.tn / cells.n_neg)[:, None])
    hits = rng.binomial(int(m), (x / m)[:, None], shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return tp / n_pos, tn / n_neg, hits / m


def _lang_reiczigel(
    cells: LabelledCounts, x: FloatArray, m: float, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """Lang & Reiczigel (2014) eqs. 6, 7, 16, 17 (as R asht::prevSeSp, with eq. 4 corrected)."""
    z = float(sps.norm.ppf(0.5 + confidence / 2))
    n_se, n_sp = cells.n_pos + 2, cells.n_neg + 2
    se, sp = (cells.tp + 1) / n_se, (cells.tn + 1) / n_sp
    n_ap = m + z**2
    ap = (x + z**2 / 2) / n_ap
    youden = se + sp - 1
    prev = (ap + sp - 1) / youden
    shift = 2 * z**2 * (prev * se * (1 - se) / n_se - (1 - prev) * sp * (1 - sp) / n_sp)
    var = (
        ap * (1 - ap) / n_ap
        + prev**2 * se * (1 - se) / n_se
        + (1 - prev) ** 2 * sp * (1 - sp) / n_sp
    ) / youden**2
    half = z * np.sqrt(var)
    return np.clip(prev + shift - half, 0, 1), np.clip(prev + shift + half, 0, 1)


def _labelled(labels: ArrayLike, preds: ArrayLike) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    y, p = binary_pair(labels, preds, ("test_labels", "test_preds"))
    if y.all() or not y.any():
        only = "pass" if y.all() else "fail"
        raise ValueError(
            f"test_labels are all {only}: both classes are needed to estimate TPR and TNR"
        )
    return y, p


def _effective(
    y: NDArray[np.bool_],
    p: NDArray[np.bool_],
    u: NDArray[np.bool_],
    clusters: tuple[ArrayLike, ArrayLike],
) -> tuple[LabelledCounts, FloatArray, float]:
    """The interval's counts over items: each set's divided by its design effect."""
    labelled, unlabelled = (np.asarray(c) for c in clusters)
    if labelled.shape != y.shape or unlabelled.shape != u.shape:
        raise ValueError(
            f"clusters must give the item of each labelled ({y.size}) and unlabelled ({u.size}) "
            f"verdict, got {labelled.shape} and {unlabelled.shape}"
        )
    pos = effective_counts(p[y].astype(float), labelled[y])
    neg = effective_counts((~p[~y]).astype(float), labelled[~y])
    rest = effective_counts(u.astype(float), unlabelled)
    cells = LabelledCounts(
        tp=np.array([pos.successes]),
        n_pos=np.array([pos.n]),
        tn=np.array([neg.successes]),
        n_neg=np.array([neg.n]),
    )
    return cells, np.array([rest.successes]), rest.n


def _check_youden(youden: float) -> None:
    if youden <= 0:
        raise ValueError(
            f"TPR + TNR - 1 = {youden:.3f} <= 0: the judge is no better than chance, so the "
            "Rogan-Gladen correction is undefined"
        )
    if youden < WEAK_YOUDEN:
        warnings.warn(
            f"TPR + TNR - 1 = {youden:.3f} is close to 0: the corrected rate divides by it and "
            "is unreliable",
            LowDiscriminationWarning,
            stacklevel=3,
        )


def _warn_weak(cells: LabelledCounts, confidence: float) -> None:
    tpr, tnr = cells.tp[0] / cells.n_pos[0], cells.tn[0] / cells.n_neg[0]
    youden = float(tpr + tnr - 1)
    se = float(np.sqrt(tpr * (1 - tpr) / cells.n_pos[0] + tnr * (1 - tnr) / cells.n_neg[0]))
    lower = youden - float(sps.norm.ppf(0.5 + confidence / 2)) * se
    if youden >= WEAK_YOUDEN and lower <= 0:
        warnings.warn(
            f"TPR + TNR - 1 = {youden:.3f} but its {confidence:.0%} lower bound is {lower:.3f}: "
            "the labelled set cannot rule out a judge no better than chance, so the corrected "
            "rate is unreliable; label more items",
            LowDiscriminationWarning,
            stacklevel=3,
        )


def _describe(interval: Interval, draws: int) -> str:
    base = "Rogan-Gladen corrected pass rate clipped to [0, 1]; "
    if interval == "jeffreys-bootstrap":
        return base + (
            f"percentile interval of {draws} Jeffreys-smoothed Bayesian-bootstrap draws of TPR, "
            "TNR (labelled set) and p_obs (unlabelled set), draws with TPR + TNR <= 1 discarded"
        )
    if interval == "percentile-bootstrap":
        return base + (
            f"percentile interval of {draws} nonparametric bootstrap resamples of both the "
            "labelled and the unlabelled set"
        )
    return base + "Lang-Reiczigel (2014) adjusted Wald interval"
