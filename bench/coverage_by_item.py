"""Coverage of the intervals that count items, not judgments (issue 33), at nominal 95 %.

A judge's judgments of one item (its two presentation orders, its repeats, its two responses)
are correlated; each grid point simulates items whose judgments share one draw with probability
``rho`` (the within-item correlation) and are independent otherwise, so the truth is known:

* ``accuracy``: every item judged in both orders, right with probability ``p``; the verdict's
  interval (``stats.clustered_proportion``: Agresti–Coull on the effective number of judgments)
  beside the one it replaces (Wilson over the 2n judgments). ``parsed``: the same with 10 % of
  the calls failing at random and the share taken over the parsed ones (unequal cluster sizes).
* ``swap``: every item judged twice (a retest) in both orders; each of its two order pairs is
  consistent with probability ``p`` (the swap consistency), the two sharing one draw with
  probability ``rho``; the interval over items beside Wilson over the pairs.
* ``kappa``: quadratic-weighted κ of a judge against human scores on 1–5 (humans skewed to the
  top), both responses of an item scored, the second a copy of the first with probability
  ``rho``; the judge gives the human score with probability ``p``, else a neighbour. Truth: the
  population κ. ``stats.cohen_kappa``'s bootstrap over items beside the asymptotic (Wald) one.
  Data sets whose items all agree get no interval (κ = 1 has nothing to resample): their share
  is printed and the coverage is over the rest.
* ``ac1``: Gwet's AC1 of two raters (a judge against a human, or two judges) on a yes/no label
  at 80 % prevalence, every item judged in both orders (two units), the second order a copy of
  the first with probability ``rho``; each rater gives the true label with probability ``p``,
  else a coin. Truth: AC1's limit (``population_ac1``). ``stats.gwet_ac``'s bootstrap over
  items beside the same bootstrap over units.
* ``icc``: ICC(2,1) of a judge against a human on both responses of an item (two targets per
  item, their true scores correlated ``rho``), the judge 0.5 above the human on average, each
  with noise of variance chosen so that the population ICC is ``p``. ``stats.icc``'s bootstrap
  over items beside the McGraw–Wong interval over targets.
* ``alpha``: nominal Krippendorff's α of two raters on a yes/no label at 90 % prevalence (the
  small-sample corner where α's bootstrap fell short), both orders of every item, the second a
  copy with probability ``rho``; ``stats.krippendorff_alpha_ci`` over items and over units.
* ``fleiss``: Fleiss' κ of a panel of three raters on a yes/no label at 80 % prevalence, both
  orders of every item, the second a copy with probability ``rho``; each rater gives the true
  label with probability ``p``, else a coin. ``stats.fleiss_kappa``'s bootstrap over items
  beside the same bootstrap over units.

Usage: ``python bench/coverage_by_item.py [--sims 1000]
[--only accuracy,swap,kappa,ac1,icc,alpha,fleiss] [--quick] [--jobs 2] [--rhos 0,0.3,0.7,1]
[--sizes 20,50,100,200,400]``. One line per grid point; the binomial SE of a point is
sqrt(0.95·0.05/sims) (0.0069 at 1,000). ``--quick`` is the corner grid the test suite runs
(tests/stats/test_stats_clustered.py).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import multiprocessing
import os
import platform
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from jurybox.stats import cohen_kappa_table, fleiss_kappa, gwet_ac, icc, krippendorff_alpha_ci
from jurybox.stats.clustered import clustered_bounds
from jurybox.stats.kappa_ci import disagreement_weights, kappa_bootstrap, kappa_of_tables

Gen = np.random.Generator
RHOS = (0.0, 0.3, 0.7, 1.0)
SIZES = (20, 50, 100, 200, 400)
RATES = (0.6, 0.75, 0.9, 0.95, 0.99)
KAPPA_RATES = (0.6, 0.75, 0.9, 0.99)
AC1_RATES = (0.6, 0.75, 0.9)
ICC_VALUES = (0.5, 0.7, 0.85)  # at most 1 / (1 + 0.5² / 2) = 0.889 with the offset
PREVALENCE = 0.8
HUMAN = np.array([0.05, 0.1, 0.2, 0.35, 0.3])  # human scores 1..5, skewed to the top
K = HUMAN.size
QUADRATIC = disagreement_weights(K, "quadratic")


def correct(rng: Gen, sims: int, n: int, p: float, rho: float, *, per_item: int) -> np.ndarray:
    """sims × n × per_item right/wrong draws: one shared draw per item with probability rho."""
    shared = rng.random((sims, n, 1)) < rho
    common = rng.random((sims, n, 1)) < p
    alone = rng.random((sims, n, per_item)) < p
    return np.where(shared, common, alone)


def _covers(low: np.ndarray, high: np.ndarray, truth: float) -> np.ndarray:
    return (low <= truth) & (truth <= high)


def accuracy_point(rng: Gen, sims: int, n: int, p: float, rho: float) -> dict[str, float]:
    """Coverage of the clustered interval (all calls parsed, and 10 % failed) and of Wilson."""
    right = correct(rng, sims, n, p, rho, per_item=2)
    sums, sizes = right.sum(axis=2).astype(float), np.full((sims, n), 2.0)
    _, low, high, _, _ = clustered_bounds(sums, sizes, 0.95)
    w_low, w_high = proportion_confint(sums.sum(axis=1), 2 * n, alpha=0.05, method="wilson")
    parsed = rng.random(right.shape) >= 0.1
    p_sums, p_sizes = (right & parsed).sum(axis=2).astype(float), parsed.sum(axis=2).astype(float)
    usable = p_sizes.sum(axis=1) > 0
    _, pl, ph, _, _ = clustered_bounds(p_sums[usable], p_sizes[usable], 0.95)
    return {
        "items": float(_covers(low, high, p).mean()),
        "parsed": float(_covers(pl, ph, p).mean()),
        "wilson_judgments": float(_covers(w_low, w_high, p).mean()),
    }


def swap_point(rng: Gen, sims: int, n: int, p: float, rho: float) -> dict[str, float]:
    """Coverage of swap consistency's interval: 2 repeats (order pairs) per item."""
    same = correct(rng, sims, n, p, rho, per_item=2).sum(axis=2).astype(float)
    _, low, high, _, _ = clustered_bounds(same, np.full((sims, n), 2.0), 0.95)
    w_low, w_high = proportion_confint(same.sum(axis=1), 2 * n, alpha=0.05, method="wilson")
    return {
        "items": float(_covers(low, high, p).mean()),
        "wilson_pairs": float(_covers(w_low, w_high, p).mean()),
    }


def judge_given_human(p: float) -> np.ndarray:
    """K × K: the judge's score given the human's, right with probability p, else a neighbour."""
    table = np.zeros((K, K))
    for h in range(K):
        table[h, h] = p
        near = [x for x in (h - 1, h + 1) if 0 <= x < K]
        table[h, near] += (1 - p) / len(near)
    return table


def population_kappa(p: float) -> float:
    return float(kappa_of_tables(HUMAN[:, None] * judge_given_human(p), QUADRATIC))


def kappa_tables(rng: Gen, sims: int, n: int, p: float, rho: float) -> np.ndarray:
    """sims × n × K × K: each item's table of its two (human, judge) score pairs."""
    human = rng.choice(K, size=(sims, n, 2), p=HUMAN)
    cumulative = np.cumsum(judge_given_human(p), axis=1)
    judge = (rng.random((sims, n, 2))[..., None] > cumulative[human]).sum(axis=-1)
    copy = rng.random((sims, n)) < rho
    human[..., 1] = np.where(copy, human[..., 0], human[..., 1])
    judge[..., 1] = np.where(copy, judge[..., 0], judge[..., 1])
    cells = human * K + judge
    tables = np.zeros((sims, n, K * K))
    for arm in range(2):
        np.add.at(tables, (*np.indices((sims, n)), cells[..., arm]), 1.0)
    return tables.reshape(sims, n, K, K)


def kappa_point(
    rng: Gen, sims: int, n: int, p: float, rho: float, *, reps: int = 2000
) -> dict[str, float]:
    """Coverage of the bootstrap interval over items and of the asymptotic Wald interval."""
    truth = population_kappa(p)
    covered = asymptotic = defined = wald_defined = 0
    for tables in kappa_tables(rng, sims, n, p, rho):
        try:
            low, high = kappa_bootstrap(
                tables, QUADRATIC, confidence=0.95, n_bootstrap=reps, rng=rng
            )
        except ValueError:
            pass  # every item agrees, or too few vary: no interval (counted as undefined)
        else:
            defined += 1
            covered += low <= truth <= high
        try:
            wald = cohen_kappa_table(tables.sum(axis=0), "quadratic")
        except ValueError:
            continue
        wald_defined += 1
        asymptotic += wald.ci_low <= truth <= wald.ci_high
    return {
        "bootstrap": covered / max(defined, 1),
        "undefined": 1 - defined / sims,
        "asymptotic": asymptotic / max(wald_defined, 1),
    }


def ac1_labels(
    rng: Gen, shape: tuple[int, ...], p: float, prevalence: float = PREVALENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Two raters' yes/no labels of units of a true label at ``prevalence``."""
    truth = rng.random(shape) < prevalence
    a = np.where(rng.random(shape) < p, truth, rng.random(shape) < 0.5)
    b = np.where(rng.random(shape) < p, truth, rng.random(shape) < 0.5)
    return a, b


def population_ac1(p: float) -> float:
    """AC1's limit: pa = s² + (1 − s)² (s: a rater's chance of the true label), pe = 2r(1 − r)
    (r: a rater's share of yes)."""
    s = p + (1 - p) / 2
    r = PREVALENCE * s + (1 - PREVALENCE) * (1 - s)
    p_a, p_e = s**2 + (1 - s) ** 2, 2 * r * (1 - r)
    return (p_a - p_e) / (1 - p_e)


def ac1_point(rng: Gen, sims: int, n: int, p: float, rho: float) -> dict[str, float]:
    """Coverage of AC1's bootstrap over items, and of the same bootstrap over units."""
    truth = population_ac1(p)
    items = np.repeat(np.arange(n), 2)
    hits = {"items": 0, "units": 0}
    defined = 0
    for _ in range(sims):
        a, b = ac1_labels(rng, (n, 2), p)
        copy = rng.random(n) < rho
        a[:, 1] = np.where(copy, a[:, 0], a[:, 1])
        b[:, 1] = np.where(copy, b[:, 0], b[:, 1])
        data = np.vstack([a.ravel(), b.ravel()]).astype(int)
        try:
            over_items = gwet_ac(data, clusters=items, rng=rng)
            over_units = gwet_ac(data, rng=rng)
        except ValueError:
            continue  # one label everywhere: AC1 undefined (counted as undefined)
        if over_items.ci_low is None or over_units.ci_low is None:
            continue
        defined += 1
        hits["items"] += over_items.ci_low <= truth <= over_items.ci_high
        hits["units"] += over_units.ci_low <= truth <= over_units.ci_high
    found = {key: value / max(defined, 1) for key, value in hits.items()}
    return {**found, "undefined": 1 - defined / sims}


def icc_point(rng: Gen, sims: int, n: int, target: float, rho: float) -> dict[str, float]:
    """Coverage of ICC(2,1)'s bootstrap over items and of the McGraw-Wong interval."""
    offset = 0.5  # the judge's mean above the human's: ICC(A,1) = 1 / (1 + s2 + offset²/2)
    noise = np.sqrt(max(1 / target - 1 - offset**2 / 2, 1e-6))
    items = np.repeat(np.arange(n), 2)
    hits = {"items": 0, "mcgraw_wong": 0}
    for _ in range(sims):
        shared = rng.normal(size=(n, 1))
        true = np.sqrt(rho) * shared + np.sqrt(1 - rho) * rng.normal(size=(n, 2))
        true = true.ravel()
        ratings = np.column_stack(
            [
                true + rng.normal(scale=noise, size=2 * n),
                true + offset + rng.normal(scale=noise, size=2 * n),
            ]
        )
        over_items = icc(ratings, "2,1", clusters=items, rng=rng)
        plain = icc(ratings, "2,1")
        hits["items"] += over_items.ci_low <= target <= over_items.ci_high
        hits["mcgraw_wong"] += plain.ci_low <= target <= plain.ci_high
    return {key: value / sims for key, value in hits.items()}


def alpha_point(rng: Gen, sims: int, n: int, p: float, rho: float) -> dict[str, float]:
    """Coverage of nominal alpha's bootstrap over items and over units: two raters, a yes/no
    label at 90 % prevalence, both orders of every item (the second a copy with probability
    rho). Truth: 1 − P(disagree) / (2r(1 − r)), the limit of alpha."""
    s = p + (1 - p) / 2
    r = 0.9 * s + 0.1 * (1 - s)
    truth = 1 - 2 * s * (1 - s) / (2 * r * (1 - r))
    items = np.repeat(np.arange(n), 2)
    hits = {"items": 0, "units": 0}
    defined = 0
    for _ in range(sims):
        a, b = ac1_labels(rng, (n, 2), p, prevalence=0.9)
        copy = rng.random(n) < rho
        a[:, 1] = np.where(copy, a[:, 0], a[:, 1])
        b[:, 1] = np.where(copy, b[:, 0], b[:, 1])
        data = np.vstack([a.ravel(), b.ravel()]).astype(float)
        try:
            found = {
                "items": krippendorff_alpha_ci(data, clusters=items, rng=rng),
                "units": krippendorff_alpha_ci(data, rng=rng),
            }
        except ValueError:
            continue  # alpha 1 or too few units vary: no interval (counted as undefined)
        defined += 1
        for key, interval in found.items():
            hits[key] += interval.ci_low <= truth <= interval.ci_high
    return {**{k: v / max(defined, 1) for k, v in hits.items()}, "undefined": 1 - defined / sims}


def fleiss_point(rng: Gen, sims: int, n: int, p: float, rho: float) -> dict[str, float]:
    """Coverage of Fleiss' kappa's bootstrap over items and over units: a panel of three
    raters, a yes/no label at 80 % prevalence, both orders of every item (the second a copy
    with probability rho); each rater gives the true label with probability p, else a coin.
    Truth: (po − pe) / (1 − pe), po = s² + (1 − s)² (two raters agree), pe = r² + (1 − r)²."""
    s = p + (1 - p) / 2
    r = PREVALENCE * s + (1 - PREVALENCE) * (1 - s)
    p_o, p_e = s**2 + (1 - s) ** 2, r**2 + (1 - r) ** 2
    truth = (p_o - p_e) / (1 - p_e)
    items = np.repeat(np.arange(n), 2)
    hits = {"items": 0, "units": 0}
    defined = 0
    for _ in range(sims):
        truth_of = rng.random((n, 2)) < PREVALENCE
        right = rng.random((3, n, 2)) < p
        labels = np.where(right, truth_of, rng.random((3, n, 2)) < 0.5)
        copy = rng.random(n) < rho
        labels[:, :, 1] = np.where(copy, labels[:, :, 0], labels[:, :, 1])
        yes = labels.reshape(3, 2 * n).sum(axis=0)
        counts = np.column_stack([3 - yes, yes])
        try:
            found = {
                "items": fleiss_kappa(counts, clusters=items, rng=rng),
                "units": fleiss_kappa(counts, rng=rng),
            }
        except ValueError:
            continue  # one label everywhere: kappa undefined (counted as undefined)
        if found["items"].ci_low is None or found["units"].ci_low is None:
            continue
        defined += 1
        for key, result in found.items():
            hits[key] += result.ci_low <= truth <= result.ci_high
    return {**{k: v / max(defined, 1) for k, v in hits.items()}, "undefined": 1 - defined / sims}


POINTS = {
    "accuracy": accuracy_point,
    "swap": swap_point,
    "kappa": kappa_point,
    "ac1": ac1_point,
    "icc": icc_point,
    "alpha": alpha_point,
    "fleiss": fleiss_point,
}
RATES_OF = {
    "kappa": KAPPA_RATES,
    "ac1": AC1_RATES,
    "icc": ICC_VALUES,
    "alpha": AC1_RATES,
    "fleiss": AC1_RATES,
}


def grid(
    name: str, quick: bool, rhos: tuple[float, ...] = RHOS, sizes: tuple[int, ...] = SIZES
) -> Iterator[tuple[float, int, float]]:
    """(rho, n, p) of an estimator's grid; ``quick``: the corners the test suite runs."""
    rates = RATES_OF.get(name, RATES)
    if quick:
        rates = (0.6, 0.99) if name not in RATES_OF else (rates[1], rates[-1])
        yield from itertools.product((0.0, 1.0), (20, 200), rates)
        return
    yield from itertools.product(rhos, sizes, rates)


def run_point(name: str, index: int, point: tuple[float, int, float], sims: int, seed: int) -> str:
    """One grid point's line; its generator is seeded by the point, so the order of the work
    (and the number of processes) does not change the figures."""
    rho, n, p = point
    rng = np.random.default_rng([seed, list(POINTS).index(name), index])
    found = POINTS[name](rng, sims, n, p, rho)
    shown = " ".join(f"{key} {value:.3f}" for key, value in found.items())
    return f"{name:8s} rho {rho:.1f} n {n:3d} p {p:.2f}  {shown}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--only", default="accuracy,swap,kappa")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--jobs", type=int, default=1, help="processes (spawned) for the points")
    parser.add_argument("--rhos", default=",".join(map(str, RHOS)), help="within-item correlations")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="items per data set")
    args = parser.parse_args()
    rhos = tuple(float(r) for r in args.rhos.split(","))
    sizes = tuple(int(n) for n in args.sizes.split(","))
    print(
        f"# {datetime.date.today()} {platform.machine()} {platform.python_version()} "
        f"{os.cpu_count()} cpus; sims {args.sims} per point; nominal 0.95"
    )
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
        for name in args.only.split(","):
            start, points = time.perf_counter(), list(grid(name, args.quick, rhos, sizes))
            lines = pool.map(
                run_point,
                itertools.repeat(name),
                range(len(points)),
                points,
                itertools.repeat(args.sims),
                itertools.repeat(args.seed),
            )
            firsts = []
            for line in lines:
                print(line, flush=True)
                firsts.append(float(line.split()[8]))
            print(
                f"{name:8s} range of the first column {min(firsts):.3f}-{max(firsts):.3f} over "
                f"{len(firsts)} points ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
