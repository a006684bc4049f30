"""The winner's curse of ``jurybox optimize``, and the test interval that does not suffer it.

K candidate prompts of equal true quality: each judges every item right with the same
probability p (accuracy p). Per item a candidate is judged in both presentation orders; with
probability ``rho`` both orders share one outcome (a judge that is consistent on the item),
else the two are drawn independently, so the item's score (its share of right judgments) is
0, ½ or 1 with mean p either way. Each repeat draws fresh dev and test items (120 or 40 dev,
100 test), runs ``jurybox.optimize.search`` exactly as ``jurybox optimize`` does (the same plan
under a calls budget, successive halving over growing dev prefixes, the sign-test tie rule
toward the simpler prompt), then judges the winner once on the test items and computes the
interval the report gives (``search.item_interval``: Wilson at the effective number of items).

* optimism: the winner's dev score minus p (p is every candidate's true accuracy, so any
  excess is selection alone);
* coverage: the share of repeats whose 95 % test interval holds p, against the share whose
  dev interval of the winner (what a tool that reports the tuning data's score would show)
  holds it.

Usage: ``python bench/optimize_selection.py [--repeats 1000]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import numpy as np
import scipy
import statsmodels

from jurybox.optimize.search import Budget, item_interval, plan_search, run_search

GRID = [  # (candidates K, p, rho, dev items)
    (8, 0.75, 1.0, 120),
    (8, 0.90, 1.0, 120),
    (32, 0.75, 1.0, 120),
    (32, 0.90, 1.0, 120),
    (32, 0.75, 1.0, 40),
    (8, 0.75, 0.5, 120),
    (32, 0.75, 0.5, 120),
]
N_TEST = 100
CALLS_PER_ITEM = 2  # both orders


def item_scores(
    rng: np.random.Generator, shape: tuple[int, ...], p: float, rho: float
) -> np.ndarray:
    """Per-item shares of right judgments over two orders (module docstring)."""
    shared = rng.random(shape) < p
    first, second = rng.random(shape) < p, rng.random(shape) < p
    together = rng.random(shape) < rho
    return np.where(together, shared.astype(float), (first.astype(float) + second) / 2)


def one_repeat(
    rng: np.random.Generator, k: int, p: float, rho: float, n_dev: int
) -> tuple[float, ...]:
    dev = item_scores(rng, (k, n_dev), p, rho)
    budget = Budget(calls=k * n_dev * CALLS_PER_ITEM * 0.4)  # a budget that makes it halve
    plan = plan_search(
        k, n_dev, calls_per_item=CALLS_PER_ITEM, usd_per_item=None, budget=budget, min_items=5
    )
    complexity = [(0, int(c)) for c in rng.permutation(k)]  # their lengths: irrelevant to p
    result = run_search(plan, lambda c, n: dev[c, :n], complexity)
    winner = result.winner
    test = item_interval(item_scores(rng, (N_TEST,), p, rho))
    return (
        winner.score - p,
        float(test.ci_low <= p <= test.ci_high),
        float(winner.interval.ci_low <= p <= winner.interval.ci_high),
        test.ci_high - test.ci_low,
        float(len(plan.rungs)),
        winner.items,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261129)
    args = parser.parse_args()
    started = time.time()
    print(
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs "
        f"(load {os.getloadavg()[0]:.1f}), Python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}, statsmodels {statsmodels.__version__}; "
        f"{args.repeats} repeats per row, {N_TEST} test items"
    )
    print(
        "\n| candidates | p | rho | dev items | rungs | winner's dev items | optimism (dev − p) "
        "| test interval covers p | winner's dev interval covers p | test interval width |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(args.seed)
    for k, p, rho, n_dev in GRID:
        rows = np.array([one_repeat(rng, k, p, rho, n_dev) for _ in range(args.repeats)])
        optimism, test_cover, dev_cover, width, rungs, items = rows.mean(axis=0)
        se = rows[:, 0].std(ddof=1) / np.sqrt(len(rows))
        print(
            f"| {k} | {p} | {rho} | {n_dev} | {rungs:.0f} | {items:.0f} | "
            f"{optimism:+.3f} (± {se:.3f}) | {test_cover:.3f} | {dev_cover:.3f} | {width:.3f} |"
        )
    print(f"\n{time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
