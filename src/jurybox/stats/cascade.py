"""Trust or Escalate: judges ordered cheap → strong, each trusted only where it is confident enough.

Each judge gives every item a verdict and a confidence (how often its presentation orders agree,
its stated confidence, a token probability). On a human-labelled calibration split, each judge
gets a threshold λ̂ such that, on the items whose confidence is ≥ λ̂, its agreement with humans
is ≥ ``target`` with probability ≥ 1 − δ (finite-sample). An item below a judge's threshold
goes to the next judge, and below the last one to "needs a human".

The threshold is chosen by fixed-sequence testing (Bauer 1991), the Learn-then-Test recipe of
Jung et al.: candidate thresholds are the judge's distinct confidences that select at least
``min_selected`` calibration items (30, as the paper's code), highest first; at each,
H₀ "disagreement among the selected items > 1 − target" is tested with the exact binomial tail
P(Bin(n, 1 − target) ≤ errors) ≤ δ — equivalently the one-sided Clopper–Pearson upper bound of
the disagreement is ≤ 1 − target. The sequence walks down while H₀ is rejected and λ̂ is the
lowest threshold reached; a judge whose first (highest) threshold is not rejected decides
nothing. Testing in a fixed order needs no multiplicity correction within a judge.

A cascade of k judges: judge j is calibrated on the calibration items the judges before it left
undecided, as in the paper's code. So that every stage holds at once (and with it the cascade as
a whole: a mixture of stages each ≥ target is ≥ target), each stage is tested at δ / k (the
paper's code gives each stage δ: ``split_delta=False``). The stages after the first are
calibrated on items chosen by the earlier thresholds, which were themselves fitted on the same
split; the guarantee is exact for one judge and is checked by simulation for the cascade
(tests/stats/test_stats_cascade.py; bench/cascade_replay.py on LLMBar).

References:
    Jung, J., Brahman, F. & Choi, Y. (2025). Trust or Escalate: LLM Judges with Provable
    Guarantees for Human Agreement. ICLR 2025. Bauer, P. (1991). Multiple testing in clinical
    trials. Statistics in Medicine 10, 871–890. Angelopoulos, A. N. et al. (2021). Learn then
    Test: calibrating predictive algorithms to achieve risk control. arXiv:2110.01052.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats._validate import confidence_level, count

__all__ = [
    "CascadeCalibration",
    "CascadeOutcome",
    "StageCalibration",
    "calibrate_cascade",
    "calibrate_stage",
    "cascade_outcome",
    "route",
]

FloatArray = NDArray[np.float64]
NOBODY = -1  # ``route``'s answer for an item no judge decides
MIN_SELECTED = 30  # as the paper's code: a threshold is tested once it selects 30 items


@dataclass(frozen=True, slots=True)
class StageCalibration:
    """One judge's threshold: it decides the items whose confidence is ≥ ``threshold``.

    ``threshold`` is ``inf`` when no threshold passed (the judge decides nothing). The counts
    are over the calibration items that reached this judge; ``risk_bound`` is the one-sided
    (1 − ``delta``) Clopper–Pearson upper bound of disagreement on the items it selects (NaN
    when it selects none), ≤ 1 − ``target`` whenever the judge decides anything.
    """

    headline: ClassVar[str] = "threshold"

    threshold: float
    n_reaching: int
    n_selected: int
    n_disagree: int
    risk_bound: float
    n_tested: int  # thresholds tested, the first one not rejected included
    target: float
    delta: float
    method: str

    @property
    def decides_any(self) -> bool:
        return math.isfinite(self.threshold)

    def decides(self, confidence: ArrayLike) -> NDArray[np.bool_]:
        """Which items this judge decides (a NaN confidence, no verdict, never)."""
        values = np.asarray(confidence, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return values >= self.threshold


@dataclass(frozen=True, slots=True)
class CascadeCalibration:
    """Every judge's threshold, cheap first; ``route`` sends items through them."""

    headline: ClassVar[str] = "target"

    stages: tuple[StageCalibration, ...]
    target: float
    delta: float
    method: str

    @property
    def thresholds(self) -> tuple[float, ...]:
        return tuple(stage.threshold for stage in self.stages)

    def route(self, confidence: ArrayLike) -> NDArray[np.intp]:
        """``route(self.thresholds, confidence)``."""
        return route(self.thresholds, confidence)


@dataclass(frozen=True, slots=True)
class CascadeOutcome:
    """What a cascade did on a test split: agreement with humans where it decided, who decided
    how much, and its cost against the last (strongest) judge alone."""

    headline: ClassVar[str] = "agreement"

    agreement: float  # NaN when no item was decided
    ci_low: float
    ci_high: float
    n_items: int
    n_decided: int
    decided_share: tuple[float, ...]  # per judge, of every item
    nobody_share: float  # needs a human
    cost: float  # every judge called up to the one that decided (all of them when nobody did)
    cost_strongest: float  # the last judge on every item
    confidence: float
    method: str

    @property
    def cost_ratio(self) -> float:
        return self.cost / self.cost_strongest if self.cost_strongest > 0 else math.nan


def calibrate_stage(
    confidence: ArrayLike,
    agree: ArrayLike,
    *,
    target: float,
    delta: float,
    min_selected: int = MIN_SELECTED,
) -> StageCalibration:
    """A judge's lowest threshold with agreement ≥ ``target`` w.p. ≥ 1 − ``delta``.

    Args:
        confidence: The judge's confidence per calibration item; NaN where it gave no verdict
            (never selected).
        agree: Whether its verdict matches the human label, per item (False without a verdict).
        target: Agreement to guarantee on the items it decides, in (0, 1).
        delta: Allowed probability that the guarantee fails, in (0, 1).
        min_selected: Thresholds selecting fewer calibration items are not tested (the walk
            starts lower): a lone item at the top could never pass and would end the walk.

    Returns:
        ``StageCalibration``; ``threshold`` ``inf`` when even the highest confidence level
        cannot be shown to reach ``target``.
    """
    conf, ok = _paired(confidence, agree)
    level = confidence_level(target, "target")
    tol = confidence_level(delta, "delta")
    candidates, selected, errors = _sweep(conf, ok, count(min_selected, "min_selected", minimum=1))
    rejected = sps.binom.cdf(errors, selected, 1.0 - level) <= tol
    walked = rejected.size if rejected.all() else int(np.argmin(rejected))
    if walked == 0:
        return _decides_nothing(conf.size, level, tol, tested=min(1, candidates.size))
    n, e = int(selected[walked - 1]), int(errors[walked - 1])
    return StageCalibration(
        threshold=float(candidates[walked - 1]),
        n_reaching=int(conf.size),
        n_selected=n,
        n_disagree=e,
        risk_bound=_upper_bound(e, n, tol),
        n_tested=min(walked + 1, candidates.size),
        target=level,
        delta=tol,
        method=_STAGE_METHOD,
    )


def calibrate_cascade(
    confidence: ArrayLike,
    agree: ArrayLike,
    *,
    target: float,
    delta: float,
    split_delta: bool = True,
    min_selected: int = MIN_SELECTED,
) -> CascadeCalibration:
    """Thresholds for judges in cascade order (cheap first) on one calibration split.

    Args:
        confidence: judges × items confidences (NaN: no verdict), the rows in cascade order.
        agree: judges × items, whether each judge's verdict matches the human label.
        target, delta: The guarantee: agreement ≥ target on decided items w.p. ≥ 1 − delta.
        split_delta: Test each of the k stages at δ / k (default) so they hold jointly; False
            gives each stage δ, as the paper's code does.
        min_selected: As in ``calibrate_stage``.

    Returns:
        ``CascadeCalibration`` with one ``StageCalibration`` per judge; judge j is calibrated
        on the items the judges before it left undecided.
    """
    conf, ok = _paired(confidence, agree, ndim=2)
    k = conf.shape[0]
    stage_delta = confidence_level(delta, "delta") / (k if split_delta else 1)
    open_items = np.ones(conf.shape[1], dtype=bool)
    stages = []
    for j in range(k):
        stage = (
            calibrate_stage(
                conf[j, open_items], ok[j, open_items], target=target, delta=stage_delta
            )
            if open_items.any()
            else _decides_nothing(0, confidence_level(target, "target"), stage_delta, tested=0)
        )
        stages.append(stage)
        open_items &= ~stage.decides(conf[j])
    split = f"δ/{k} per judge" if split_delta and k > 1 else "δ per judge"
    return CascadeCalibration(
        stages=tuple(stages),
        target=float(target),
        delta=float(delta),
        method=f"Trust or Escalate (Jung et al. 2025): {k} judge(s), {split}; {_STAGE_METHOD}",
    )


def route(thresholds: Sequence[float], confidence: ArrayLike) -> NDArray[np.intp]:
    """The first judge whose confidence reaches its threshold, per item; -1 when none does.

    Args:
        thresholds: One per judge, cascade order (``inf``: the judge decides nothing).
        confidence: judges × items (NaN: no verdict).
    """
    conf = np.asarray(confidence, dtype=np.float64)
    if conf.ndim != 2 or conf.shape[0] != len(thresholds):
        raise ValueError(
            f"confidence must be judges × items with {len(thresholds)} rows, got {conf.shape}"
        )
    with np.errstate(invalid="ignore"):
        decides = conf >= np.asarray(thresholds, dtype=np.float64)[:, None]
    first = np.argmax(decides, axis=0)
    return np.where(decides.any(axis=0), first, NOBODY).astype(np.intp)


def cascade_outcome(
    decided_by: ArrayLike,
    agree: ArrayLike,
    cost: ArrayLike,
    *,
    confidence: float = 0.95,
) -> CascadeOutcome:
    """Agreement, shares and cost of a routed test split.

    Args:
        decided_by: Per item, the judge that decided it (``route``'s output; -1 nobody).
        agree: judges × items, whether each judge's verdict matches the human label.
        cost: judges × items, what calling each judge on each item cost (money, tokens or
            calls: one unit throughout). A judge is called on an item when every judge before
            it left the item undecided.
        confidence: Two-sided level of the Clopper–Pearson interval of the agreement.
    """
    who = np.asarray(decided_by, dtype=np.intp)
    ok = np.asarray(agree, dtype=bool)
    spend = np.asarray(cost, dtype=np.float64)
    if ok.ndim != 2 or ok.shape != spend.shape or who.shape != (ok.shape[1],):
        raise ValueError(
            f"agree and cost must be judges × items and decided_by one per item, got "
            f"{ok.shape}, {spend.shape} and {who.shape}"
        )
    k, n = ok.shape
    if n == 0:
        raise ValueError("no items to measure the cascade on")
    if who.min() < NOBODY or who.max() >= k:
        raise ValueError(f"decided_by must lie in -1..{k - 1}")
    conf = confidence_level(confidence)
    decided = who >= 0
    hits = int(ok[who[decided], np.flatnonzero(decided)].sum())
    reached = np.where(decided, who, k - 1)  # the last judge called on each item
    called = np.arange(k)[:, None] <= reached[None, :]
    low, high = (
        proportion_confint(hits, int(decided.sum()), alpha=1 - conf, method="beta")
        if decided.any()
        else (math.nan, math.nan)
    )
    return CascadeOutcome(
        agreement=hits / decided.sum() if decided.any() else math.nan,
        ci_low=float(low),
        ci_high=float(high),
        n_items=n,
        n_decided=int(decided.sum()),
        decided_share=tuple(float(np.mean(who == j)) for j in range(k)),
        nobody_share=float(np.mean(~decided)),
        cost=float((spend * called).sum()),
        cost_strongest=float(spend[-1].sum()),
        confidence=conf,
        method="agreement on decided items with its Clopper–Pearson interval; cost of every "
        "judge called until one decided, against the last judge on every item",
    )


_STAGE_METHOD = (
    "fixed-sequence test over the judge's confidence thresholds, highest first; exact binomial "
    "(Clopper–Pearson) test of disagreement > 1 − target"
)


def _sweep(
    conf: FloatArray, ok: NDArray[np.bool_], min_selected: int
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Distinct confidences selecting ≥ ``min_selected`` items (highest first), and for each the
    items at or above it and the disagreements among them."""
    has_verdict = ~np.isnan(conf)
    levels = np.sort(conf[has_verdict])
    wrong = np.sort(conf[has_verdict & ~ok])
    candidates = np.unique(levels)[::-1]
    selected = levels.size - np.searchsorted(levels, candidates, side="left")
    errors = wrong.size - np.searchsorted(wrong, candidates, side="left")
    keep = selected >= min_selected
    return candidates[keep], selected[keep].astype(np.float64), errors[keep].astype(np.float64)


def _decides_nothing(
    n_reaching: int, target: float, delta: float, *, tested: int
) -> StageCalibration:
    return StageCalibration(
        threshold=math.inf,
        n_reaching=n_reaching,
        n_selected=0,
        n_disagree=0,
        risk_bound=math.nan,
        n_tested=tested,
        target=target,
        delta=delta,
        method=_STAGE_METHOD,
    )


def _upper_bound(errors: int, n: int, delta: float) -> float:
    """One-sided (1 − delta) Clopper–Pearson upper bound of a binomial proportion."""
    return 1.0 if errors >= n else float(sps.beta.ppf(1 - delta, errors + 1, n - errors))


def _paired(
    confidence: ArrayLike, agree: ArrayLike, *, ndim: int = 1
) -> tuple[FloatArray, NDArray[np.bool_]]:
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(agree)
    if conf.ndim != ndim or ok.shape != conf.shape:
        shape = "1-D" if ndim == 1 else "judges × items"
        raise ValueError(
            f"confidence and agree must be {shape} of the same shape, got {conf.shape} and "
            f"{ok.shape}"
        )
    if ok.dtype != np.bool_ and not np.isin(ok, (0, 1)).all():
        raise ValueError("agree must hold booleans or 0/1")
    if np.isinf(conf).any():
        raise ValueError("confidence must be finite (NaN marks no verdict)")
    if conf.size == 0:
        raise ValueError("no calibration items")
    return conf, ok.astype(bool)
