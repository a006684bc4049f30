"""Monte-Carlo coverage of the issue-18 intervals over grids (target 93-97% at every point).

Four estimators, each simulated from a model whose true value is known:

* ``alpha``: ``krippendorff_alpha_ci`` (BCa over units), 3 raters; interval data = item truth
  N(0, 1) + rater noise N(0, s2) (population alpha 1 / (1 + s2)); nominal data = 3 balanced
  classes, each rater keeps the truth with probability p else guesses uniformly.
* ``winrate``: ``corrected_win_rate`` (A/B/tie misclassification inversion), judge accuracy acc
  with errors split evenly, outcome shares pi; the labelled pairs drawn from the population.
* ``winrate_notie``: ``corrected_win_rate`` when the gold has no ties but the judge does (2 x 3
  least squares): true shares (pA, 1 - pA), the judge right with probability acc, else a tie
  with probability 2/3 of the rest and the wrong side with 1/3.
* ``ppi``: ``ppi_mean`` (PPI++, power-tuned), human score N(3, 1), judge = human + bias + noise
  with correlation r. ``ppi_skewed``: 10-30 human scores on 1-5 skewed to the top (issue 33), the
  judge right with probability r, else one point off.
* ``lc``: ``length_controlled_win_rate``, outcome ~ Bernoulli(expit(b0 + b1 tanh(d / 400))) with
  d ~ N(mu, 400) and 10% ties; the truth is 0.9 expit(b0) + 0.05 (the rate at d = 0).

Usage: ``python bench/corrected_estimates.py [--sims 500] [--only alpha,winrate,ppi,lc,...]``.
Prints one line per grid point (coverage, data sets with an interval) and a summary per
estimator; the binomial SE of one point is sqrt(0.95 * 0.05 / sims) (0.0097 at 500).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import time
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from scipy.special import expit

from jurybox.stats import krippendorff_alpha_ci, length_controlled_win_rate, ppi_mean
from jurybox.stats.corrected import corrected_win_rate_bounds

Gen = np.random.Generator
Runner = Callable[[tuple[float, ...], int, Gen], tuple[int, int]]


def alpha_point(point: tuple[float, ...], sims: int, rng: Gen) -> tuple[int, int]:
    level_code, units, param = point
    n = int(units)
    hits = 0
    for _ in range(sims):
        if level_code == 0:  # interval
            data = rng.normal(size=n) + rng.normal(scale=np.sqrt(param), size=(3, n))
            truth, level = 1 / (1 + param), "interval"
        else:
            t = rng.integers(0, 3, size=n)
            keep = rng.random((3, n)) < param
            data = np.where(keep, t, rng.integers(0, 3, size=(3, n))).astype(float)
            a, b = param + (1 - param) / 3, (1 - param) / 3
            truth, level = 1 - (1 - a * a - 2 * b * b) / (2 / 3), "nominal"
        res = krippendorff_alpha_ci(data, level, n_bootstrap=1000, rng=rng)  # type: ignore[arg-type]
        hits += res.ci_low <= truth <= res.ci_high
    return hits, sims


def winrate_point(point: tuple[float, ...], sims: int, rng: Gen) -> tuple[int, int]:
    n_lab, n_unl, acc, skew = point
    pi = np.array([0.5, 0.3, 0.2]) if skew == 0 else np.array([0.25, 0.6, 0.15])
    m = np.full((3, 3), (1 - acc) / 2)
    np.fill_diagonal(m, acc)
    rows = rng.multinomial(int(n_lab), pi, size=sims)
    tables = np.stack([[rng.multinomial(k, m[i]) for i, k in enumerate(r)] for r in rows])
    verdicts = rng.multinomial(int(n_unl), m.T @ pi, size=sims).astype(float)
    usable = (tables.sum(axis=2) > 0).all(axis=1)
    low, high = corrected_win_rate_bounds(
        tables[usable].astype(float), verdicts[usable], confidence=0.95, n_bootstrap=2000, rng=rng
    )
    truth = pi[0] + 0.5 * pi[2]
    ok = np.isfinite(low)
    return int(np.sum((low[ok] <= truth) & (truth <= high[ok]))), int(ok.sum())


def winrate_notie_point(point: tuple[float, ...], sims: int, rng: Gen) -> tuple[int, int]:
    n_lab, n_unl, acc, p_a = point
    tie, wrong = 2 * (1 - acc) / 3, (1 - acc) / 3
    m = np.array([[acc, wrong, tie], [wrong, acc, tie]])
    pi = np.array([p_a, 1 - p_a])
    rows = rng.multinomial(int(n_lab), pi, size=sims)
    tables = np.stack([[rng.multinomial(k, m[i]) for i, k in enumerate(r)] for r in rows])
    verdicts = rng.multinomial(int(n_unl), m.T @ pi, size=sims).astype(float)
    usable = (tables.sum(axis=2) > 0).all(axis=1)
    low, high = corrected_win_rate_bounds(
        tables[usable].astype(float), verdicts[usable], confidence=0.95, n_bootstrap=2000, rng=rng
    )
    ok = np.isfinite(low)
    return int(np.sum((low[ok] <= p_a) & (p_a <= high[ok]))), int(ok.sum())


def ppi_point(point: tuple[float, ...], sims: int, rng: Gen) -> tuple[int, int]:
    n, big_n, rho, bias = point
    noise = np.sqrt(1 / rho**2 - 1)
    hits = 0
    for _ in range(sims):
        y, y_unl = rng.normal(3, 1, int(n)), rng.normal(3, 1, int(big_n))
        f = y + bias + rng.normal(0, noise, int(n))
        f_unl = y_unl + bias + rng.normal(0, noise, int(big_n))
        res = ppi_mean(y, f, f_unl, rng=rng)
        hits += res.ci_low <= 3.0 <= res.ci_high
    return hits, sims


SKEWED = np.array([0.05, 0.1, 0.2, 0.35, 0.3])  # human scores 1..5 (issue 33's small-n case)


def _skewed_scores(rng: Gen, n: int, right: float) -> tuple[np.ndarray, np.ndarray]:
    y = rng.choice(np.arange(1, 6), n, p=SKEWED).astype(float)
    off = np.clip(y + rng.choice([-1.0, 1.0], n), 1, 5)
    return y, np.where(rng.random(n) < right, y, off)


def ppi_skewed_point(point: tuple[float, ...], sims: int, rng: Gen) -> tuple[int, int]:
    """Skewed whole-number scores, judge right with probability ``right`` else one off."""
    n, big_n, right = point
    truth, hits, done = float(SKEWED @ np.arange(1, 6)), 0, 0
    for _ in range(sims):
        y, f = _skewed_scores(rng, int(n), right)
        _, f_unl = _skewed_scores(rng, int(big_n), right)
        if np.ptp(y) == 0:
            continue  # every human score equal: ppi_mean refuses (no interval)
        res = ppi_mean(y, f, f_unl, rng=rng)
        hits, done = hits + (res.ci_low <= truth <= res.ci_high), done + 1
    return hits, done


def lc_point(point: tuple[float, ...], sims: int, rng: Gen) -> tuple[int, int]:
    n, b0, b1, mu = point
    truth, hits = 0.9 * float(expit(b0)) + 0.05, 0
    for _ in range(sims):
        diff = rng.normal(mu, 400, int(n))
        y = (rng.random(int(n)) < expit(b0 + b1 * np.tanh(diff / 400))).astype(float)
        y[rng.random(int(n)) < 0.1] = 0.5
        res = length_controlled_win_rate(y, diff)
        hits += res.ci_low <= truth <= res.ci_high
    return hits, sims


GRIDS: dict[str, tuple[str, Iterable[tuple[float, ...]], Runner]] = {
    "alpha": (
        "level (0 interval: s2 | 1 nominal: p), units, s2 or p",
        [(0, u, s) for u in (30, 60, 120) for s in (0.25, 1.0)]
        + [(1, u, p) for u in (30, 60, 120) for p in (0.6, 0.85)],
        alpha_point,
    ),
    "winrate": (
        "n labelled, n unlabelled, judge accuracy, shares (0: .5/.3/.2, 1: .25/.6/.15)",
        list(itertools.product((100, 200, 400), (500, 5000), (0.7, 0.8, 0.9), (0, 1))),
        winrate_point,
    ),
    "winrate_notie": (
        "n labelled, n unlabelled, judge accuracy, true share of A (the gold has no ties)",
        list(itertools.product((100, 400), (500, 5000), (0.6, 0.8), (0.5, 0.75))),
        winrate_notie_point,
    ),
    "ppi": (
        "n human, N judge, judge-human correlation, judge bias",
        list(itertools.product((30, 100, 300), (1000, 10_000), (0.3, 0.8), (0.0, 1.0))),
        ppi_point,
    ),
    "ppi_skewed": (
        "n human, N judge, judge right (else one off): skewed 1-5 scores",
        list(itertools.product((10, 20, 30), (300, 3000), (0.5, 0.8))),
        ppi_skewed_point,
    ),
    "lc": (
        "n comparisons, b0, b1 (length effect), mean length difference",
        list(itertools.product((100, 400), (0.0, 1.0), (0.0, 1.0), (0.0, 300.0))),
        lc_point,
    ),
}


def run(name: str, sims: int, rng: Gen) -> Iterator[str]:
    axes, points, runner = GRIDS[name]
    yield f"\n## {name}: {axes}"
    start, rates = time.perf_counter(), []
    for point in points:
        hits, total = runner(point, sims, rng)
        rates.append(hits / total)
        yield f"{point}: coverage {hits / total:.3f} ({total} data sets)"
    arr = np.array(rates)
    inside = np.mean((arr >= 0.93) & (arr <= 0.97))
    yield (
        f"summary {name}: mean {arr.mean():.3f}, min {arr.min():.3f}, max {arr.max():.3f}, "
        f"{inside:.0%} of {arr.size} points in [0.93, 0.97]; {time.perf_counter() - start:.0f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=500)
    parser.add_argument("--only", default=",".join(GRIDS))
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# issue-18 interval coverage, {now}; {platform.platform()}, {os.cpu_count()} CPUs")
    print(f"sims per point: {args.sims}; binomial SE {np.sqrt(0.95 * 0.05 / args.sims):.4f}")
    rng = np.random.default_rng(args.seed)
    for name in args.only.split(","):
        for line in run(name, args.sims, rng):
            print(line, flush=True)


if __name__ == "__main__":
    main()
