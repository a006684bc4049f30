"""The search on dev: successive halving over growing prefixes of the dev items, within a budget.

Every candidate is judged on the first ``n_0`` dev items (the dev file is written in an order
that spreads the gold labels evenly, so each prefix is roughly stratified); the best ``1/eta`` go
on to the first ``n_0 * eta`` items, and so on, until the survivors are judged on the whole dev
split or at most ``eta`` are left (Karnin, Koren & Somekh 2013; Jamieson & Talwalkar 2016, with
a candidate's judgments kept from rung to rung, as in Hyperband's resources). ``n_0`` is the
largest start that keeps the whole search within the budget; with no budget every candidate
is judged on every dev item.

Why successive halving: candidates that a few dozen items already show to be worse stop costing
calls, so the budget goes to telling the good ones apart; its only assumption is that a
candidate's score on a prefix ranks it roughly as on the whole split, and a candidate cut early
only loses if it trails on every prefix it was judged on. Every candidate at a rung is judged on
the same items, so comparisons are paired.

The choice among the last rung's candidates: the leader is the best dev score; a candidate ties
with it when an exact two-sided sign test over the items they both judged (items where their
per-item scores differ; ``stats.binomial_test``) does not show the leader better at
``alpha``. Of the leader and the candidates that tie with it, the simplest prompt wins (fewest
examples, then fewest characters of its own text, then the earlier candidate): a more complex
prompt has to earn its place. Cuts between rungs rank by score, then the same simplicity.

Pure functions over per-item scores: ``app.optimize`` feeds them from judged runs, and
``bench/optimize_selection.py`` from simulated judges.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from jurybox.stats import ProportionInterval, binomial_test, stratified_proportion

METHOD = (
    "successive halving over growing prefixes of the dev split (eta {eta}); the last rung's "
    "leader (best dev score) against each other survivor by an exact two-sided sign test over "
    "their per-item scores, and of those not shown worse at alpha {alpha} the simplest prompt "
    "(fewest examples, then fewest characters)"
)
INTERVAL_METHOD = (
    "items as the unit: each item's share of correct judgments (both orders, failures wrong), "
    "their mean with a Wilson interval at the effective number of items (the shares' "
    "variance smoothed by a Jeffreys pseudo-item, Korn-Graubard degrees of freedom: "
    "stats.stratified_proportion with one stratum and no finite-population correction)"
)
# The items judged are a sample of the items the judge will meet: a population without bound,
# so no finite-population correction (1 - n / N is 1 to 12 decimals at this size).
_UNBOUNDED = 10**15


@dataclass(frozen=True, slots=True)
class Rung:
    """One rung: how many candidates are judged, on the first ``items`` dev items."""

    index: int
    candidates: int
    items: int


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """The rungs, and what the search may cost at most (calls, and USD where priced)."""

    rungs: tuple[Rung, ...]
    eta: int
    alpha: float
    calls: float
    usd: float | None

    @property
    def method(self) -> str:
        return METHOD.format(eta=self.eta, alpha=self.alpha)


@dataclass(frozen=True, slots=True)
class Budget:
    """What the search may spend: calls and/or USD (None: no limit)."""

    calls: float | None = None
    usd: float | None = None


def survivors(n_candidates: int, eta: int) -> list[int]:
    """Candidates judged at each rung: all, then ceil(k / eta), until at most eta are left."""
    counts = [n_candidates]
    while counts[-1] > eta:
        counts.append(math.ceil(counts[-1] / eta))
    return counts


def rungs_for(n_candidates: int, n_dev: int, start: int, eta: int) -> tuple[Rung, ...]:
    """The rungs from a first prefix of ``start`` items; a rung that would add no item is
    left out (its survivors are decided on the whole split already)."""
    out: list[Rung] = []
    for index, count in enumerate(survivors(n_candidates, eta)):
        items = min(n_dev, start * eta**index)
        out.append(Rung(index, count, items))
        if items == n_dev:
            break
    return tuple(out)


def items_judged(rungs: Sequence[Rung]) -> int:
    """(candidate, item) pairs judged over the rungs: a survivor's earlier items are kept."""
    total, before = 0, 0
    for rung in rungs:
        total += rung.candidates * (rung.items - before)
        before = rung.items
    return total


def plan_search(
    n_candidates: int,
    n_dev: int,
    *,
    calls_per_item: float,
    usd_per_item: float | None,
    budget: Budget,
    eta: int = 2,
    min_items: int = 10,
    alpha: float = 0.05,
) -> SearchPlan:
    """The largest first prefix whose whole search fits ``budget``.

    Raises:
        ValueError: no candidate or dev item; or even a first prefix of ``min_items`` items
            (the whole dev split if smaller) does not fit, naming what it would need.
    """
    if n_candidates < 1 or n_dev < 1:
        raise ValueError(f"nothing to search: {n_candidates} candidates, {n_dev} dev items")
    if eta < 2:
        raise ValueError(f"eta must be at least 2, got {eta}")
    smallest = min(max(1, min_items), n_dev)
    best: tuple[Rung, ...] | None = None
    for start in range(smallest, n_dev + 1):
        rungs = rungs_for(n_candidates, n_dev, start, eta)
        if not _fits(items_judged(rungs), calls_per_item, usd_per_item, budget):
            break
        best = rungs
        if rungs[-1].items == n_dev and len(rungs) == 1:
            break  # every candidate on the whole split: nothing more to buy
    if best is None:
        need = items_judged(rungs_for(n_candidates, n_dev, smallest, eta))
        raise ValueError(
            f"the budget does not cover the smallest search: {n_candidates} candidates on "
            f"{smallest} dev items first need {need * calls_per_item:.0f} calls"
            + (f" (USD {need * usd_per_item:.4f})" if usd_per_item is not None else "")
        )
    pairs = items_judged(best)
    usd = pairs * usd_per_item if usd_per_item is not None else None
    return SearchPlan(best, eta, alpha, pairs * calls_per_item, usd)


def _fits(pairs: int, calls_per_item: float, usd_per_item: float | None, budget: Budget) -> bool:
    if budget.calls is not None and pairs * calls_per_item > budget.calls + 1e-9:
        return False
    if budget.usd is not None:
        if usd_per_item is None:
            return False
        return pairs * usd_per_item <= budget.usd + 1e-12
    return True


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate's dev score at one rung: mean per-item score on the rung's items."""

    candidate: int
    rung: int
    items: int
    score: float
    interval: ProportionInterval


@dataclass(frozen=True, slots=True)
class Choice:
    """The last rung's decision: the leader, the candidates tied with it, the winner."""

    leader: int
    tied: tuple[int, ...]  # the leader's ties (the leader included), simplest first
    winner: int
    p_values: dict[int, float]  # sign test of the leader against each other survivor


@dataclass(frozen=True, slots=True)
class SearchResult:
    plan: SearchPlan
    scored: tuple[Scored, ...]  # every candidate at every rung it reached
    choice: Choice

    def last(self, candidate: int) -> Scored:
        """A candidate's score at the last rung it reached."""
        return [s for s in self.scored if s.candidate == candidate][-1]

    @property
    def winner(self) -> Scored:
        return self.last(self.choice.winner)


ItemScores = Callable[[int, int], Sequence[float]]


def item_interval(
    scores: Sequence[float] | np.ndarray, confidence: float = 0.95
) -> ProportionInterval:
    """The mean per-item score and its interval (``INTERVAL_METHOD``). An item whose two
    orders disagree (score ½) carries less variance than a 0 or 1, and the effective number of
    items says so; with 0/1 scores it is the Wilson interval on items (bench/optimize_selection.py:
    coverage 0.95-0.96 at within-item correlation 0, 0.5 and 1)."""
    values = np.asarray(scores, dtype=float)
    if values.size == 0:
        raise ValueError("no item to score")
    found = stratified_proportion(
        values, np.zeros(values.size, dtype=int), {0: _UNBOUNDED}, confidence=confidence
    )
    return ProportionInterval(
        found.estimate,
        found.ci_low,
        found.ci_high,
        float(values.sum()),
        int(values.size),
        found.confidence,
        INTERVAL_METHOD,
    )


def run_search(
    plan: SearchPlan,
    item_scores: ItemScores,
    complexity: Sequence[tuple[float, ...]],
    *,
    confidence: float = 0.95,
) -> SearchResult:
    """Successive halving by ``plan``. ``item_scores(candidate, n)`` judges (or reads) the
    candidate's per-item scores on the first ``n`` dev items, each in [0, 1]; ``complexity`` is
    each candidate's simplicity key (smaller is simpler)."""
    alive = list(range(len(complexity)))
    scored: list[Scored] = []
    per_item: dict[int, np.ndarray] = {}
    for rung in plan.rungs:
        for candidate in alive:
            values = np.asarray(item_scores(candidate, rung.items), dtype=float)
            if values.size != rung.items:
                raise ValueError(
                    f"candidate {candidate} has {values.size} item scores, not {rung.items}"
                )
            per_item[candidate] = values
            interval = item_interval(values, confidence)
            scored.append(Scored(candidate, rung.index, rung.items, interval.estimate, interval))
        ranked = sorted(alive, key=lambda c: (-per_item[c].mean(), complexity[c], c))
        if rung is not plan.rungs[-1]:
            alive = ranked[: plan.rungs[rung.index + 1].candidates]
        else:
            alive = ranked
    choice = choose(alive, per_item, complexity, alpha=plan.alpha)
    return SearchResult(plan, tuple(scored), choice)


def choose(
    ranked: Sequence[int],
    per_item: dict[int, np.ndarray],
    complexity: Sequence[tuple[float, ...]],
    *,
    alpha: float,
) -> Choice:
    """Of the leader (``ranked[0]``) and the candidates a sign test does not show worse than
    it, the simplest."""
    leader = ranked[0]
    p_values: dict[int, float] = {}
    tied = [leader]
    for other in ranked[1:]:
        p_values[other] = sign_test(per_item[leader], per_item[other])
        if p_values[other] >= alpha:
            tied.append(other)
    tied.sort(key=lambda c: (complexity[c], c))
    return Choice(leader, tuple(tied), tied[0], p_values)


def sign_test(leader: np.ndarray, other: np.ndarray) -> float:
    """Two-sided exact sign test p-value over paired per-item scores (1 when none differ)."""
    better = int(np.sum(leader > other))
    worse = int(np.sum(leader < other))
    if better + worse == 0:
        return 1.0
    return binomial_test(better, better + worse).p_value
