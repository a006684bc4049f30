"""What ``jurybox run --until ... --dry-run`` prints: the worst case and the expected saving.

The worst case is the whole plan: every block judged, no judge decided early. The expected
saving needs a belief about the judge before any call, so it is simulated under a stated prior:

* ``decided``: the judge's accuracy p is drawn uniformly from [0.5, 1] (no worse than a coin),
  and each of its judgments is right with probability p, independently;
* ``win_rate±h``: the treatment's win probability w is drawn uniformly from [0, 1], and each
  judgment prefers the treatment with probability w (no ties).

Each simulated run goes through the run's own blocks (the same seeded order, the same labelled
items, the same units per item) and the same stopping rule (``until.stop_rule`` on
``stats.betting_cs``), so what it counts is what the run would judge. Beside the expectation,
the median work at a few fixed values of p (or w) shows where the saving comes from: far from
the bar a judge stops within a few blocks, near it the whole plan runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from jurybox.pipeline.until import CONFIDENCE, UntilSchedule, stop_rule
from jurybox.stats.sequential import betting_cs

if TYPE_CHECKING:
    from rich.console import Console

RUNS = 200  # simulated runs under the prior
RUNS_AT = 40  # per fixed value
_PRIORS = {
    "accuracy": "accuracy p ~ Uniform(0.5, 1), each judgment right with probability p",
    "win_rate": "win probability w ~ Uniform(0, 1), each judgment prefers the treatment w.p. w",
}
_POINTS = {"accuracy": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0), "win_rate": (0.5, 0.6, 0.7, 0.8, 0.9)}


@dataclass(frozen=True)
class Forecast:
    """Work units of one judge: the worst case, the expectation under the prior, and the
    median at fixed true values."""

    units_worst: int
    units_expected: float
    at: tuple[tuple[float, float], ...]  # (true value, median units)
    prior: str
    runs: int

    @property
    def saving(self) -> float:
        return 1.0 - self.units_expected / self.units_worst if self.units_worst else 0.0


@dataclass(frozen=True)
class _Plan:
    """One judge's blocks as arrays: per block, the judgments per measured item and units."""

    judgments: list[np.ndarray]  # per block: judgments (non-retest units) of each measured item
    units: np.ndarray  # per block: every unit (retests included)


def _plan(schedule: UntilSchedule, judge: str) -> _Plan:
    metric = schedule.target.metric
    judgments, units = [], []
    for block in schedule.blocks:
        per_item = [schedule.units.get((judge, item), ()) for item in block]
        counted = [
            sum(1 for u in own if not u.retest)
            for item, own in zip(block, per_item, strict=True)
            if metric == "win_rate" or item in schedule.gold
        ]
        judgments.append(np.array([k for k in counted if k > 0], dtype=np.int64))
        units.append(sum(len(own) for own in per_item))
    return _Plan(judgments, np.array(units, dtype=np.int64))


def _units_used(
    schedule: UntilSchedule, plan: _Plan, truth: float, rng: np.random.Generator
) -> int:
    """Units one simulated run judges before its judge stops (the whole plan if it never does)."""
    draws = [rng.binomial(k, truth) / k for k in plan.judgments]
    values = np.concatenate(draws) if draws else np.array([])
    ends = np.cumsum([len(d) for d in draws])  # observations seen at each block's end
    if values.size == 0:
        return int(plan.units.sum())
    cs = betting_cs(values, CONFIDENCE)
    for block, end in enumerate(ends):
        if end == 0:
            continue
        low, high = float(cs.lower[end - 1]), float(cs.upper[end - 1])
        if stop_rule(schedule.target, schedule.bar, low, high)[0] is not None:
            return int(plan.units[: block + 1].sum())
    return int(plan.units.sum())


def forecast(schedule: UntilSchedule, judge: str, *, seed: int) -> Forecast:
    """Simulate ``judge``'s run under the prior (module docstring); seeded, so a dry run
    prints the same figures each time."""
    plan = _plan(schedule, judge)
    metric = schedule.target.metric
    rng = np.random.default_rng(seed)
    low = 0.5 if metric == "accuracy" else 0.0
    prior = [_units_used(schedule, plan, rng.uniform(low, 1.0), rng) for _ in range(RUNS)]
    at = tuple(
        (p, float(np.median([_units_used(schedule, plan, p, rng) for _ in range(RUNS_AT)])))
        for p in _POINTS[metric]
    )
    return Forecast(int(plan.units.sum()), float(np.mean(prior)), at, _PRIORS[metric], RUNS)


def print_forecast(
    console: Console, schedule: UntilSchedule, judges: Sequence[str], *, seed: int
) -> None:
    """The dry run's ``--until`` block: its own lines, after the estimate table."""
    target = schedule.target
    what = "p" if target.metric == "accuracy" else "w"
    console.print(
        f"--until {target.spec}: items in a seeded order, blocks of "
        f"{len(schedule.blocks[0]) if schedule.blocks else 0} items; each judge stops once its "
        f"anytime-valid {CONFIDENCE:.0%} interval "
        + (
            f"lies above or below trust.min_accuracy {schedule.bar:.2f}"
            if target.metric == "accuracy"
            else f"is within ±{target.half_width:g}"
        ),
        markup=False,
        soft_wrap=True,
    )
    for judge in judges:
        found = forecast(schedule, judge, seed=seed)
        median = ", ".join(f"{what}={p:g}: {units:.0f}" for p, units in found.at)
        console.print(
            f"  {judge}: worst case {found.units_worst} units (the whole plan); expected "
            f"{found.units_expected:.0f} units ({found.saving:.0%} saved) under the prior "
            f"{found.prior} ({found.runs} simulated runs); median units at {median}",
            markup=False,
            soft_wrap=True,
        )
