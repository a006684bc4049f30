"""Stopping a judge early under continuous peeking: wrong decisions and items judged (issue 36).

A judge of true accuracy p is judged item by item (each item right with probability p) up to a
plan of N items; after every item its accuracy interval is compared with jurybox's trust bar
(``TrustThresholds().min_accuracy``, 0.70), and judging stops at the first decision: ``above``
(the lower bound clears the bar: trusted) or ``below`` (the upper bound is under it: never
trusted). A decision is wrong when it says above with p below the bar, or below with p above.

Methods (the sequence is computed once per run up to the largest plan; a plan of N reads its
first N steps):

* ``agrapa``: ``betting_cs`` (95 %, aGRAPA bets), the default of ``jurybox.stats.sequential``;
* ``agrapa90``: the same at 90 %: each side then errs with probability ≤ 0.05, the issue's bound
  for a decision (only one side can be wrong at a given p), but the report's intervals are 95 %;
* ``prpl``: ``betting_cs(bet="prpl")``, the paper's predictable plug-in sequence;
* ``wilson``, ``clopper``: a fixed-n 95 % interval recomputed after every ``--block`` items and
  acted on at the first crossing (the naive rule).

Usage: ``python bench/sequential_stopping.py [--runs 1000] [--plans 200,400,1000]
[--methods agrapa,agrapa90,prpl,wilson,clopper] [--block 10]``. Prints one Markdown row per (method,
plan, p): share of wrong decisions, share undecided at the end of the plan, median items judged
and its ratio to the plan, then the issue's checks.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import time
from collections.abc import Callable, Sequence

import numpy as np

from jurybox.stats.sequential import ConfidenceSequence, betting_cs, repeated_fixed_n
from jurybox.thresholds import TrustThresholds

POINTS = (0.50, 0.55, 0.60, 0.65, 0.68, 0.69, 0.71, 0.72, 0.75, 0.80, 0.85, 0.90)
Method = Callable[[np.ndarray, int], ConfidenceSequence]
METHODS: dict[str, Method] = {
    "agrapa": lambda x, _block: betting_cs(x),
    "agrapa90": lambda x, _block: betting_cs(x, 0.90),
    "prpl": lambda x, _block: betting_cs(x, bet="prpl"),
    "wilson": lambda x, block: repeated_fixed_n(x, block, method="wilson"),
    "clopper": lambda x, block: repeated_fixed_n(x, block, method="beta"),
}


def first_steps(cs: ConfidenceSequence, plan: int) -> ConfidenceSequence:
    """The sequence as a run with a plan of ``plan`` items would have seen it."""
    keep = cs.steps <= plan
    return dataclasses.replace(
        cs, lower=cs.lower[keep], upper=cs.upper[keep], steps=cs.steps[keep], n=plan
    )


def simulate(
    method: Method, p: float, *, plans: Sequence[int], runs: int, block: int, bar: float, seed: int
) -> dict[int, tuple[float, float, float]]:
    """Per plan: (wrong share, undecided share, median items judged)."""
    rng = np.random.default_rng(seed)
    wrong = dict.fromkeys(plans, 0)
    undecided = dict.fromkeys(plans, 0)
    judged: dict[int, list[int]] = {plan: [] for plan in plans}
    truth = "above" if p >= bar else "below"
    for _ in range(runs):
        x = (rng.random(max(plans)) < p).astype(float)
        cs = method(x, block)
        for plan in plans:
            decision = first_steps(cs, plan).decide(bar)
            wrong[plan] += decision.outcome not in (truth, "undecided")
            undecided[plan] += decision.outcome == "undecided"
            judged[plan].append(decision.n if decision.outcome != "undecided" else plan)
    return {
        plan: (wrong[plan] / runs, undecided[plan] / runs, float(np.median(judged[plan])))
        for plan in plans
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--plans", default="200,400,1000")
    parser.add_argument("--methods", default="agrapa,agrapa90,prpl,wilson,clopper")
    parser.add_argument("--block", type=int, default=10, help="items between naive looks")
    parser.add_argument("--points", default=",".join(f"{p:g}" for p in POINTS))
    args = parser.parse_args()
    plans = sorted(int(v) for v in args.plans.split(","))
    points = [float(v) for v in args.points.split(",")]
    bar = TrustThresholds().min_accuracy
    start = datetime.datetime.now(datetime.UTC)
    print(f"# {start:%Y-%m-%d %H:%M} UTC, {platform.platform()}, {os.cpu_count()} CPUs, ")
    print(f"# load {os.getloadavg()[0]:.1f}; {args.runs} runs per point; bar {bar:.2f}\n")
    print("| method | plan N | true accuracy | wrong decisions | undecided | median items | × N |")
    print("|---|---|---|---|---|---|---|")
    failures: list[str] = []
    for name in args.methods.split(","):
        began = time.perf_counter()
        for index, p in enumerate(points):
            found = simulate(
                METHODS[name], p, plans=plans, runs=args.runs, block=args.block, bar=bar, seed=index
            )
            for plan, (wrong, undecided, median) in found.items():
                print(
                    f"| {name} | {plan} | {p:.2f} | {wrong:.3f} | {undecided:.3f} "
                    f"| {median:g} | {median / plan:.2f} |",
                    flush=True,
                )
                failures += checks(name, plan, p=p, bar=bar, wrong=wrong, median=median)
        print(f"<!-- {name}: {time.perf_counter() - began:.0f} s -->", flush=True)
    print("\nchecks (betting sequences): wrong ≤ 0.05; |p − bar| ≥ 0.1 → median ≤ 0.6 N")
    print("\n".join(failures) if failures else "all pass")


def checks(name: str, plan: int, *, p: float, bar: float, wrong: float, median: float) -> list[str]:
    if name not in ("agrapa", "agrapa90", "prpl"):
        return []
    found = []
    if wrong > 0.05:
        found.append(f"FAIL {name} N={plan} p={p:.2f}: wrong {wrong:.3f} > 0.05")
    if abs(p - bar) >= 0.1 - 1e-9 and median > 0.6 * plan:
        found.append(f"FAIL {name} N={plan} p={p:.2f}: median {median:g} > 0.6 × {plan}")
    return found


if __name__ == "__main__":
    main()
