"""Anytime-valid confidence sequences for a mean in [0, 1]: look after every item, stop any time.

A fixed-n interval (Wilson, Clopper–Pearson) is valid once, at the n chosen in advance. Checked
again after every block of items and acted on at the first crossing, its error rate climbs with
every look. A *confidence sequence* (CS) is a sequence of intervals that holds at every step at
once: P(∃t: mean ∉ [lower_t, upper_t]) ≤ 1 − confidence, so a run may stop the moment it is
decided. The CS here is betting-based (Waudby-Smith & Ramdas 2024): for each candidate mean m a
gambler bets on the observations with a *hedged capital process*, and m leaves the CS once the
capital reaches 1 / α (Ville's inequality). Per-item accuracy (0/1) and a win rate (ties ½) are
both means in [0, 1].

Capital per candidate m, with predictable bets λ⁺, λ⁻ ≥ 0 truncated at c / m and c / (1 − m):
``K⁺_t(m) = Π (1 + λ⁺_i (x_i − m))``, ``K⁻_t(m) = Π (1 − λ⁻_i (x_i − m))`` and
``K_t(m) = max(θ K⁺_t(m), (1 − θ) K⁻_t(m))`` with θ = ½; the CS is ``{m : K_t(m) ≤ 1/α}`` on a
grid of m, each bound widened by one grid step, then intersected over time. The bets:

* ``agrapa`` (default): approximate growth-rate adaptive bet λ = (μ̂ − m) / (σ̂² + (μ̂ − m)²) from
  the predictable plug-in mean and variance, its positive part for K⁺ and negative part for K⁻.
  It grows the capital near the Kelly rate, so a judge far from a threshold is decided early.
* ``prpl``: the predictable plug-in λ = √(2 log(2/α) / (σ̂² t log(1 + t))), the paper's
  Theorem 3 sequence (``confseq.betting.hedged_cs``), tuned for every t at once.

The running mean and variance behind both are μ̂_t = (½ + Σx) / (t + 1) and σ̂²_t = (¼ + Σ(x_i −
μ̂_i)²) / (t + 1), as in the paper. The arithmetic is carried forward block by block in a
``SequenceState``, so a run that judges items in blocks extends the sequence without recomputing
it (``betting_cs(x_new, previous=cs)`` equals ``betting_cs(all x)``).

References:
    Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
    betting. JRSS-B 86(1), 1–27. Reference implementation: ``confseq`` (Howard, Waudby-Smith,
    Ramdas), whose values the tests reproduce (tests/data/confseq_betting.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats._validate import confidence_level, count, numeric_1d

__all__ = [
    "ConfidenceSequence",
    "SequenceState",
    "SequentialDecision",
    "betting_cs",
    "repeated_fixed_n",
]

Bet = Literal["agrapa", "prpl"]
Outcome = Literal["above", "below", "undecided"]
FloatArray = NDArray[np.float64]
_THETA = 0.5  # weight of the upward bet in the hedge: the two sides share α equally
_CHUNK = 64  # steps per pass: memory stays at grid × 64 floats, and the grid shrinks between
_FIXED_N = {"wilson": "Wilson score interval", "beta": "Clopper–Pearson interval"}


@dataclass(frozen=True, eq=False, slots=True)
class SequenceState:
    """Everything needed to extend a betting CS by more observations (held by its result)."""

    confidence: float
    bet: Bet
    truncation: float
    breaks: int
    t: int  # observations so far
    total: float  # Σ x
    sq_dev: float  # Σ (x_i − μ̂_i)²
    first: int  # grid index (m = first / breaks) of log_up[0] and log_down[0]
    log_up: FloatArray  # log K⁺_t(m) on the grid points still in play
    log_down: FloatArray  # log K⁻_t(m) on the same points
    lower: float  # running-intersection bounds at step t
    upper: float


@dataclass(frozen=True, slots=True)
class SequentialDecision:
    """The first step at which a sequence clears a threshold, and which way.

    ``above``: the lower bound reached ``threshold`` (the mean is shown ≥ it); ``below``: the
    upper bound fell under it; ``undecided``: neither by the last step (``n`` is then every
    observation). With a trust threshold (``TrustThresholds.min_accuracy``), ``above`` means the
    judge's accuracy is shown to clear the bar for good and ``below`` that it never will.
    """

    outcome: Outcome
    n: int  # observations seen at the deciding step (all of them when undecided)
    step: int | None  # index into the sequence's arrays; None when undecided
    threshold: float
    lower: float
    upper: float
    method: str


@dataclass(frozen=True, eq=False, slots=True)
class ConfidenceSequence:
    """Intervals for a mean after each step; ``anytime_valid`` says whether they hold jointly.

    ``steps[i]`` observations had been seen when ``[lower[i], upper[i]]`` was computed (every
    observation for a betting CS, block ends for ``repeated_fixed_n``). ``estimate`` is the mean
    of every observation. ``state`` extends a betting CS (``betting_cs(x, previous=...)``).
    """

    headline: ClassVar[str] = "estimate"

    estimate: float
    lower: FloatArray
    upper: FloatArray
    steps: NDArray[np.int64]
    n: int
    confidence: float
    anytime_valid: bool
    method: str
    state: SequenceState | None = field(default=None, repr=False)

    @property
    def ci_low(self) -> float:
        """The interval at the last step."""
        return float(self.lower[-1])

    @property
    def ci_high(self) -> float:
        return float(self.upper[-1])

    def decide(self, threshold: float) -> SequentialDecision:
        """The first step whose interval lies wholly above or below ``threshold``.

        ``above`` when ``lower ≥ threshold``, ``below`` when ``upper < threshold`` (the trust
        rule's "CI low clears the bar", and its mirror). On an anytime-valid sequence the
        decision is wrong with probability ≤ 1 − confidence however often it is looked at.
        """
        bar = float(threshold)
        if not 0.0 <= bar <= 1.0:
            raise ValueError(f"threshold must lie in [0, 1], got {threshold!r}")
        decided = (self.lower >= bar) | (self.upper < bar)
        if not decided.any():
            return self._decision("undecided", None, bar)
        step = int(np.argmax(decided))
        outcome: Outcome = "above" if self.lower[step] >= bar else "below"
        return self._decision(outcome, step, bar)

    def first_within(self, half_width: float) -> int | None:
        """Observations seen when the interval's half-width first fell to ``half_width`` (a
        precision target such as "win rate ± 0.03"); None if it never did."""
        if not half_width > 0:
            raise ValueError(f"half_width must be > 0, got {half_width!r}")
        narrow = (self.upper - self.lower) / 2 <= half_width
        return int(self.steps[np.argmax(narrow)]) if narrow.any() else None

    def _decision(self, outcome: Outcome, step: int | None, bar: float) -> SequentialDecision:
        at = -1 if step is None else step
        return SequentialDecision(
            outcome=outcome,
            n=int(self.steps[at]),
            step=step,
            threshold=bar,
            lower=float(self.lower[at]),
            upper=float(self.upper[at]),
            method=self.method,
        )


def betting_cs(
    x: ArrayLike,
    confidence: float = 0.95,
    *,
    bet: Bet = "agrapa",
    truncation: float = 0.5,
    breaks: int = 1000,
    previous: ConfidenceSequence | None = None,
) -> ConfidenceSequence:
    """Betting confidence sequence (hedged capital) for the mean of observations in [0, 1].

    Args:
        x: Observations in [0, 1] in the order they arrived (per-item correctness 0/1; win-rate
            outcomes 1 / ½ / 0).
        confidence: Joint coverage over every step, 1 − α.
        bet: ``"agrapa"`` (default) or ``"prpl"`` (see the module docstring).
        truncation: c in (0, 1): bets are capped at c / m and c / (1 − m) so the capital never
            reaches 0; ½ as in ``confseq``.
        breaks: The grid of candidate means is 0, 1/breaks, ..., 1; bounds are widened by one
            grid step (conservative).
        previous: A sequence to extend by ``x`` (its settings are kept; passing others is an
            error). The result holds every step, the earlier ones included.

    Returns:
        ``ConfidenceSequence`` with the running-intersection bounds after every observation.

    References:
        Waudby-Smith & Ramdas (2024), JRSS-B 86(1): hedged capital (Sec. 4), the predictable
        plug-in bet (Thm 3) and aGRAPA (Sec. 5.1); ``confseq.betting.betting_cs``.
    """
    values = _unit_interval(x)
    state = _start_state(confidence, bet, truncation, breaks, previous)
    lows, highs = [], []
    for start in range(0, values.size, _CHUNK):
        state, low, high = _extend(state, values[start : start + _CHUNK])
        lows.append(low)
        highs.append(high)
    lower, upper = np.concatenate(lows), np.concatenate(highs)
    if previous is not None:
        lower = np.concatenate([previous.lower, lower])
        upper = np.concatenate([previous.upper, upper])
    return ConfidenceSequence(
        estimate=state.total / state.t,
        lower=lower,
        upper=upper,
        steps=np.arange(1, state.t + 1, dtype=np.int64),
        n=state.t,
        confidence=state.confidence,
        anytime_valid=True,
        method=_method(state),
        state=state,
    )


def repeated_fixed_n(
    x: ArrayLike,
    block: int,
    confidence: float = 0.95,
    *,
    method: Literal["wilson", "beta"] = "wilson",
) -> ConfidenceSequence:
    """The naive comparator: a fixed-n interval recomputed after every ``block`` observations.

    Each interval is valid for its own n only; acting on the first one that crosses a threshold
    (peeking) makes wrong decisions far more often than 1 − confidence — what the betting CS
    avoids (bench/sequential_stopping.py measures both).

    Args:
        x: Observations in [0, 1] (fractional sums, e.g. ties as ½, are allowed).
        block: Observations between looks (the last look is at the end, a part block included).
        confidence: Two-sided level of each interval.
        method: ``"wilson"`` or ``"beta"`` (Clopper–Pearson), by statsmodels'
            ``proportion_confint``.
    """
    values = _unit_interval(x)
    size = count(block, "block", minimum=1)
    conf = confidence_level(confidence)
    if method not in _FIXED_N:
        raise ValueError(f"method must be one of {sorted(_FIXED_N)}, got {method!r}")
    steps = np.arange(size, values.size + size, size, dtype=np.int64)
    steps[-1] = values.size
    sums = np.cumsum(values)[steps - 1]
    low, high = proportion_confint(sums, steps, alpha=1 - conf, method=method)
    return ConfidenceSequence(
        estimate=float(values.mean()),
        lower=np.asarray(low, dtype=np.float64),
        upper=np.asarray(high, dtype=np.float64),
        steps=steps,
        n=int(values.size),
        confidence=conf,
        anytime_valid=False,
        method=f"{_FIXED_N[method]} recomputed every {size} observations (not anytime-valid)",
    )


def _unit_interval(x: ArrayLike) -> FloatArray:
    values = numeric_1d(x, "x")
    if values.min() < 0.0 or values.max() > 1.0:
        raise ValueError(
            f"x must lie in [0, 1], got values from {values.min():g} to {values.max():g}"
        )
    return values


def _start_state(
    confidence: float,
    bet: Bet,
    truncation: float,
    breaks: int,
    previous: ConfidenceSequence | None,
) -> SequenceState:
    if previous is not None:
        return _continued(previous, confidence, bet, truncation, breaks)
    if bet not in ("agrapa", "prpl"):
        raise ValueError(f"bet must be 'agrapa' or 'prpl', got {bet!r}")
    if not 0.0 < float(truncation) < 1.0:
        raise ValueError(f"truncation must lie strictly between 0 and 1, got {truncation!r}")
    grid = count(breaks, "breaks", minimum=2)
    zeros = np.zeros(grid + 1)
    return SequenceState(
        confidence=confidence_level(confidence),
        bet=bet,
        truncation=float(truncation),
        breaks=grid,
        t=0,
        total=0.0,
        sq_dev=0.0,
        first=0,
        log_up=zeros,
        log_down=zeros.copy(),
        lower=0.0,
        upper=1.0,
    )


def _continued(
    previous: ConfidenceSequence, confidence: float, bet: Bet, truncation: float, breaks: int
) -> SequenceState:
    state = previous.state
    if state is None:
        raise ValueError("previous is not a betting sequence: only betting_cs results extend")
    given = (confidence_level(confidence), bet, float(truncation), int(breaks))
    kept = (state.confidence, state.bet, state.truncation, state.breaks)
    if given != kept:
        raise ValueError(
            f"previous was computed with (confidence, bet, truncation, breaks) = {kept}; "
            f"extending it with {given} would mix two sequences"
        )
    return state


def _extend(state: SequenceState, x: FloatArray) -> tuple[SequenceState, FloatArray, FloatArray]:
    """Bet on one chunk of observations: new state and the chunk's running bounds."""
    first, log_up_before, log_down_before = _in_play(state)
    m = np.arange(first, first + log_up_before.size, dtype=np.float64)[:, None] / state.breaks
    t = state.t + np.arange(1, x.size + 1)
    mu = (0.5 + state.total + np.cumsum(x)) / (t + 1)
    sq_dev = state.sq_dev + np.cumsum((x - mu) ** 2)
    # Predictable: the bet on x_t uses the mean and variance up to t − 1.
    mu_prev = np.concatenate([[(0.5 + state.total) / (state.t + 1)], mu[:-1]])
    var_prev = (0.25 + np.concatenate([[state.sq_dev], sq_dev[:-1]])) / t
    up, down = _bets(state, m, t, mu_prev, var_prev)
    with np.errstate(divide="ignore"):
        c = state.truncation
        up = np.minimum(up, c / m)
        down = np.minimum(down, c / (1.0 - m))
    log_up = log_up_before[:, None] + np.cumsum(np.log1p(up * (x - m)), axis=1)
    log_down = log_down_before[:, None] + np.cumsum(np.log1p(-down * (x - m)), axis=1)
    low, high = _bounds(state, first, log_up, log_down)
    following = SequenceState(
        confidence=state.confidence,
        bet=state.bet,
        truncation=state.truncation,
        breaks=state.breaks,
        t=int(t[-1]),
        total=state.total + float(x.sum()),
        sq_dev=float(sq_dev[-1]),
        first=first,
        log_up=log_up[:, -1].copy(),
        log_down=log_down[:, -1].copy(),
        lower=float(low[-1]),
        upper=float(high[-1]),
    )
    return following, low, high


def _in_play(state: SequenceState) -> tuple[int, FloatArray, FloatArray]:
    """The grid points that can still move the running bounds: those between them, with a grid
    step of margin each side. A point outside can only widen an interval the running
    intersection has already cut (for a CS that is an interval, the usual case, the bounds are
    the ones the whole grid gives); dropping it for good keeps long sequences cheap."""
    last = state.first + state.log_up.size - 1
    low = min(max(state.first, int(np.floor(state.lower * state.breaks)) - 1), last)
    high = max(min(last, int(np.ceil(state.upper * state.breaks)) + 1), low)
    keep = slice(low - state.first, high - state.first + 1)
    return low, state.log_up[keep], state.log_down[keep]


def _bets(
    state: SequenceState,
    m: FloatArray,
    t: NDArray[np.int64],
    mu_prev: FloatArray,
    var_prev: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Untruncated bets (grid × steps) of the upward and downward capital."""
    if state.bet == "prpl":
        alpha = 1.0 - state.confidence
        lam = np.sqrt(2 * np.log(2 / alpha) / (var_prev * t * np.log1p(t)))
        shaped = np.broadcast_to(lam, (m.shape[0], t.size))
        return shaped, shaped
    gap = mu_prev - m
    lam = gap / (var_prev + gap**2)
    return np.maximum(lam, 0.0), np.maximum(-lam, 0.0)


def _bounds(
    state: SequenceState, first_index: int, log_up: FloatArray, log_down: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """The grid points still in the CS at each step, widened by a grid step and intersected."""
    barrier = np.log(1.0 / (1.0 - state.confidence))
    capital = np.maximum(np.log(_THETA) + log_up, np.log(1 - _THETA) + log_down)
    inside = capital <= barrier
    any_in = inside.any(axis=0)
    step = 1.0 / state.breaks
    first = first_index + np.argmax(inside, axis=0)
    last = first_index + inside.shape[0] - 1 - np.argmax(inside[::-1], axis=0)
    # An empty grid (every m rejected) says nothing new: keep the running bounds.
    low = np.where(any_in, np.maximum(first * step - step, 0.0), 0.0)
    high = np.where(any_in, np.minimum(last * step + step, 1.0), 1.0)
    low = np.maximum.accumulate(np.concatenate([[state.lower], low]))[1:]
    high = np.minimum.accumulate(np.concatenate([[state.upper], high]))[1:]
    return low, high


def _method(state: SequenceState) -> str:
    bet = {"agrapa": "aGRAPA", "prpl": "predictable plug-in"}[state.bet]
    return (
        f"betting confidence sequence (Waudby-Smith & Ramdas 2024): hedged capital, {bet} bets "
        f"truncated at {state.truncation:g}, grid of {state.breaks + 1} means, running "
        "intersection; anytime-valid"
    )
