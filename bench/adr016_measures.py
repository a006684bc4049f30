"""ADR-016's measures by simulation: does ``lower_variance`` mean what it says, and is Kendall's W
read against its chance level?

Issue 33, item 5. Three reviewers score every response of ``--items`` items (two responses
each) on a rubric dimension and on the holistic score: a true score shared by the reviewers plus
reviewer noise. The holistic noise variance is 1 and its true scores have SD 1.5; the
dimension's noise variance is 1 (equal) or 0.5 (half), its true scores' SD 1.5 (as holistic),
3.0 (wider) or 0.6 (narrower). Per setting it prints how often
``stats.study.variance_difference`` decides ``lower`` / ``higher`` / ``undecided`` at 95 %, and,
for contrast, how often the former rule (the paired interval of Krippendorff's α, dimension −
holistic, above 0: "lower"; below: "higher") said each: α is agreement relative to the spread of
the true scores, so it follows the spread, not the reviewers' variance. Then Kendall's W of
three judges ranking at random: its mean (chance is 1/3) and how often ``stats.study.concordance``
decides ``above chance``.

Usage: ``python bench/adr016_measures.py [--sims 200] [--items 20 50 100] [--seed 0]``.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from jurybox.stats import alpha_difference
from jurybox.stats.study import concordance, variance_difference

REVIEWERS = 3


SCENARIOS = ((1.0, 1.5), (0.5, 1.5), (1.0, 3.0), (0.5, 0.6))  # (noise ratio, dimension's SD)


def panel(rng: np.random.Generator, n_items: int, sd: float, noise_var: float) -> np.ndarray:
    """reviewers × responses: true scores of SD ``sd`` plus reviewer noise of ``noise_var``."""
    truth = rng.normal(6, sd, size=2 * n_items)
    return truth[None, :] + rng.normal(0, noise_var**0.5, size=(REVIEWERS, 2 * n_items))


def variance_rates(
    n_items: int, ratio: float, sd: float, sims: int, seed: int
) -> tuple[Counter[str], Counter[str]]:
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_items), 2)
    decisions: Counter[str] = Counter()
    former: Counter[str] = Counter()
    for _ in range(sims):
        holistic = panel(rng, n_items, 1.5, 1.0)
        dimension = panel(rng, n_items, sd, ratio)
        res = variance_difference(dimension, holistic, groups, n_bootstrap=1000, rng=rng)
        decisions[res.decision] += 1
        old = alpha_difference(holistic, dimension, n_bootstrap=200, rng=rng)
        former["lower" if old.ci_low > 0 else "higher" if old.ci_high < 0 else "undecided"] += 1
    return decisions, former


def concordance_null(n_units: int, sims: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    results = [
        concordance(rng.normal(size=(REVIEWERS, n_units)), n_permutations=999, rng=rng)
        for _ in range(sims)
    ]
    mean_w = float(np.mean([r.kendall_w for r in results]))
    return mean_w, float(np.mean([r.decision == "above chance" for r in results]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--items", type=int, nargs="+", default=[20, 50, 100])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"inter-reviewer variance, {REVIEWERS} reviewers, 2 responses per item, {args.sims} sims")
    print("items  noise ratio  true SD  lower  higher  undecided | former α rule: lower  higher")
    for n_items in args.items:
        for ratio, sd in SCENARIOS:
            rates, old = variance_rates(n_items, ratio, sd, args.sims, args.seed)
            new = [rates[k] / args.sims for k in ("lower", "higher", "undecided")]
            print(
                f"{n_items:5d}  {ratio:11.1f}  {sd:7.1f}  {new[0]:5.3f}  {new[1]:6.3f}  "
                f"{new[2]:9.3f} | {old['lower'] / args.sims:19.3f}  "
                f"{old['higher'] / args.sims:6.3f}"
            )
    print(
        f"\nKendall's W of {REVIEWERS} judges ranking at random (chance 1/m = {1 / REVIEWERS:.3f})"
    )
    print("units  mean W  'above chance' rate")
    for n_units in (10, 40):
        mean_w, rate = concordance_null(n_units, args.sims, args.seed)
        print(f"{n_units:5d}  {mean_w:6.3f}  {rate:.3f}")


if __name__ == "__main__":
    main()
