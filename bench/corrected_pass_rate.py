"""Corrected pass rate: speed and Monte-Carlo coverage, jurybox next to judgy 0.1.0.

(a) Speed: ``jurybox.stats.corrected_pass_rate`` and ``judgy.estimate_success_rate`` on the same
    data set (1,000 labelled, 100,000 unlabelled verdicts), both with 20,000 bootstrap draws,
    timed in the same run.
(b) Coverage: across a grid of labelled n, unlabelled n, TPR, TNR and prevalence, the share of
    simulated data sets whose 95% interval contains the true pass rate, for

    * ``jurybox``: the default interval (Jeffreys-smoothed Bayesian bootstrap of both sets);
    * ``percentile``: jurybox's plain nonparametric percentile bootstrap of both sets;
    * ``lang-reiczigel``: jurybox's adjusted Wald interval (Lang & Reiczigel 2014);
    * ``judgy``: judgy's method — a percentile bootstrap of the labelled set only, the observed
      pass rate held fixed — vectorised here so the grid finishes; (c) checks the vectorised
      copy against judgy itself on a few grid points.

Each simulated data set draws its labelled set from the population (so the class sizes vary)
and its unlabelled verdicts from Bernoulli(theta TPR + (1 - theta)(1 - TNR)); data sets whose
estimated TPR + TNR - 1 is <= 0 get no interval from either tool and are left out (counted).

Usage: ``python bench/corrected_pass_rate.py [--sims 1000] [--draws 1000] [--quick]``.
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from jurybox.stats import corrected_pass_rate
from jurybox.stats.prevalence import Interval, LabelledCounts, corrected_bounds

Point = tuple[int, int, float, float, float]  # n_labelled, n_unlabelled, TPR, TNR, prevalence
FloatArray = NDArray[np.float64]
Bounds = tuple[FloatArray, FloatArray]
Method = Callable[[LabelledCounts, FloatArray, float, int, np.random.Generator], Bounds]

LABELLED = (50, 100, 200, 500)
UNLABELLED = (100, 1_000, 10_000, 100_000)
RATES = (0.7, 0.85, 0.95)
PREVALENCE = (0.2, 0.5, 0.8)


# --- (a) speed ------------------------------------------------------------------------------


def speed(repeats: int) -> None:
    from judgy import estimate_success_rate

    rng = np.random.default_rng(0)
    labels = (rng.random(1_000) < 0.6).astype(int)
    preds = np.where(labels == 1, rng.random(1_000) < 0.85, rng.random(1_000) < 0.1).astype(int)
    unlabelled = (rng.random(100_000) < 0.55).astype(int)

    def ours() -> tuple[float, float, float]:
        res = corrected_pass_rate(labels, preds, unlabelled, n_bootstrap=20_000, rng=1)
        return res.estimate, res.ci_low, res.ci_high

    def theirs() -> tuple[float, float, float]:
        np.random.seed(1)  # judgy draws from numpy's global RNG
        est, low, high = estimate_success_rate(
            labels, preds, unlabelled, bootstrap_iterations=20_000
        )
        return float(est), float(low), float(high)

    t_ours, r_ours = _best_of(ours, repeats)
    t_theirs, r_theirs = _best_of(theirs, max(1, repeats // 3))
    print("## (a) speed: 1,000 labelled, 100,000 unlabelled, 20,000 bootstrap draws")
    print(f"{'tool':<10} {'best of':>7} {'seconds':>9} {'estimate':>9} {'95% interval':>20}")
    for name, reps, sec, (est, low, high) in (
        ("jurybox", repeats, t_ours, r_ours),
        ("judgy", max(1, repeats // 3), t_theirs, r_theirs),
    ):
        print(f"{name:<10} {reps:>7} {sec:>9.4f} {est:>9.4f} {f'[{low:.4f}, {high:.4f}]':>20}")
    print(f"speed-up: {t_theirs / t_ours:.0f}x\n")


def _best_of(
    func: Callable[[], tuple[float, float, float]], repeats: int
) -> tuple[float, tuple[float, float, float]]:
    best, result = float("inf"), (0.0, 0.0, 0.0)
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


# --- (b) coverage ---------------------------------------------------------------------------


def simulate(
    rng: np.random.Generator, point: Point, sims: int
) -> tuple[LabelledCounts, FloatArray]:
    n_lab, m, tpr, tnr, theta = point
    n_pos = rng.binomial(n_lab, theta, sims)
    cells = LabelledCounts(
        tp=rng.binomial(n_pos, tpr).astype(float),
        n_pos=n_pos.astype(float),
        tn=rng.binomial(n_lab - n_pos, tnr).astype(float),
        n_neg=(n_lab - n_pos).astype(float),
    )
    hits = rng.binomial(m, theta * tpr + (1 - theta) * (1 - tnr), sims).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        youden = cells.tp / cells.n_pos + cells.tn / cells.n_neg - 1
    keep = (cells.n_pos > 0) & (cells.n_neg > 0) & (youden > 0)
    kept = LabelledCounts(cells.tp[keep], cells.n_pos[keep], cells.tn[keep], cells.n_neg[keep])
    return kept, hits[keep]


def jurybox_method(interval: Interval) -> Method:
    def bounds(
        cells: LabelledCounts, hits: FloatArray, m: float, draws: int, rng: np.random.Generator
    ) -> Bounds:
        return corrected_bounds(
            cells, hits, m, confidence=0.95, interval=interval, n_bootstrap=draws, rng=rng
        )

    return bounds


def judgy_method(
    cells: LabelledCounts, hits: FloatArray, m: float, draws: int, rng: np.random.Generator
) -> Bounds:
    """judgy 0.1.0's algorithm, vectorised: resample the labelled set only, p_obs fixed,
    drop resamples missing a class or with TPR + TNR <= 1, ``np.percentile`` 2.5/97.5."""
    n = cells.n_pos + cells.n_neg
    shape = (n.size, draws)
    n_pos = rng.binomial(n[:, None].astype(np.int64), (cells.n_pos / n)[:, None], shape)
    n_neg = n[:, None].astype(np.int64) - n_pos
    tp = rng.binomial(n_pos, (cells.tp / cells.n_pos)[:, None])
    tn = rng.binomial(n_neg, (cells.tn / cells.n_neg)[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr, tnr = tp / n_pos, tn / n_neg
        youden = tpr + tnr - 1
        theta = np.clip(((hits / m)[:, None] + tnr - 1) / youden, 0, 1)
    theta[~((n_pos > 0) & (n_neg > 0) & (youden > 0))] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanpercentile(theta, 2.5, axis=1), np.nanpercentile(theta, 97.5, axis=1)


METHODS: dict[str, Method] = {
    "jurybox": jurybox_method("jeffreys-bootstrap"),
    "percentile": jurybox_method("percentile-bootstrap"),
    "lang-reiczigel": jurybox_method("lang-reiczigel"),
    "judgy": judgy_method,
}


def coverage(
    grid: Iterable[Point], sims: int, draws: int, seed: int
) -> dict[Point, dict[str, float]]:
    rng = np.random.default_rng(seed)
    out: dict[Point, dict[str, float]] = {}
    for point in grid:
        cells, hits = simulate(rng, point, sims)
        row: dict[str, float] = {"usable": hits.size / sims}
        for name, method in METHODS.items():
            low, high = method(cells, hits, float(point[1]), draws, rng)
            theta = point[4]
            row[name] = float(np.mean((low <= theta) & (theta <= high)))
        out[point] = row
    return out


def report(results: dict[Point, dict[str, float]], sims: int) -> None:
    points = list(results)
    print(f"## (b) coverage of the 95% interval: {len(points)} grid points x {sims} data sets")
    print("Grid: labelled n x unlabelled n x TPR x TNR x prevalence =")
    print(f"  {LABELLED} x {UNLABELLED} x {RATES} x {RATES} x {PREVALENCE}")
    print(f"binomial MC standard error per point at 95%: {np.sqrt(0.95 * 0.05 / sims):.4f}\n")
    print(f"{'method':<15} {'min':>6} {'mean':>6} {'max':>6} {'in [93,97]%':>12}")
    for name in METHODS:
        cov = np.array([results[p][name] for p in points])
        share = np.mean((cov >= 0.93) & (cov <= 0.97))
        print(f"{name:<15} {cov.min():6.3f} {cov.mean():6.3f} {cov.max():6.3f} {share:12.1%}")
    print("\nMean (min) coverage by labelled n x unlabelled n, over TPR, TNR and prevalence:")
    header = "".join(f"{name:>17}" for name in METHODS)
    print(f"{'n_lab':>6} {'n_unlab':>8}{header}")
    for n_lab, m in itertools.product(LABELLED, UNLABELLED):
        cell = [p for p in points if p[0] == n_lab and p[1] == m]
        if not cell:
            continue
        parts = []
        for name in METHODS:
            cov = np.array([results[p][name] for p in cell])
            parts.append(f"{cov.mean():.3f} ({cov.min():.3f})".rjust(17))
        print(f"{n_lab:>6} {m:>8}" + "".join(parts))
    usable = min(results[p]["usable"] for p in points)
    print(f"\nShare of data sets with an interval (TPR + TNR > 1): min {usable:.4f}")
    worst = sorted(points, key=lambda p: results[p]["jurybox"])[:5]
    print("Lowest jurybox coverage (n_lab, n_unlab, TPR, TNR, prevalence):")
    for p in worst:
        others = ", ".join(f"{k} {results[p][k]:.3f}" for k in METHODS if k != "jurybox")
        print(f"  {p}: jurybox {results[p]['jurybox']:.3f}; {others}")
    print()


# --- (c) the vectorised judgy method against judgy itself -----------------------------------


def check_judgy(points: list[Point], sims: int, seed: int) -> None:
    from judgy import estimate_success_rate

    print(f"## (c) judgy itself vs the vectorised copy ({sims} data sets, 2,000 draws each)")
    rng = np.random.default_rng(seed)
    for point in points:
        cells, hits = simulate(rng, point, sims)
        low, high = judgy_method(cells, hits, float(point[1]), 2_000, rng)
        copy = np.mean((low <= point[4]) & (point[4] <= high))
        np.random.seed(seed)
        hit = [
            _judgy_covers(estimate_success_rate, cells, hits, i, point) for i in range(hits.size)
        ]
        print(f"  {point}: judgy {np.mean(hit):.3f}, vectorised copy {copy:.3f}")
    print()


def _judgy_covers(
    estimate: Callable[..., tuple[float, float, float]],
    cells: LabelledCounts,
    hits: FloatArray,
    i: int,
    point: Point,
) -> bool:
    tp, n_pos, tn, n_neg = (int(v[i]) for v in (cells.tp, cells.n_pos, cells.tn, cells.n_neg))
    labels = [1] * n_pos + [0] * n_neg
    preds = [1] * tp + [0] * (n_pos - tp) + [0] * tn + [1] * (n_neg - tn)
    unlabelled = [1] * int(hits[i]) + [0] * (point[1] - int(hits[i]))
    _, low, high = estimate(labels, preds, unlabelled, bootstrap_iterations=2_000)
    return bool(low <= point[4] <= high)


def machine() -> str:
    try:
        import psutil  # type: ignore[import-untyped]

        memory = f"{psutil.virtual_memory().total / 2**30:.0f} GB"
    except ImportError:
        memory = "? GB"
    return (
        f"{datetime.date.today()} | {platform.platform()} | {os.cpu_count()} cores, {memory} | "
        f"Python {sys.version.split()[0]} | numpy {np.__version__}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, default=1000, help="data sets per grid point")
    parser.add_argument("--draws", type=int, default=1000, help="bootstrap draws per data set")
    parser.add_argument("--repeats", type=int, default=6, help="timing repeats for jurybox")
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--quick", action="store_true", help="grid corners only, 300 data sets")
    args = parser.parse_args()
    print(f"# corrected pass rate benchmark\n{machine()}\n")
    speed(args.repeats)
    if args.quick:
        corners = ((50, 500), (100, 100_000), (0.7, 0.95), (0.7, 0.95), (0.2, 0.8))
        grid = list(itertools.product(*corners))
        args.sims = min(args.sims, 300)
    else:
        grid = list(itertools.product(LABELLED, UNLABELLED, RATES, RATES, PREVALENCE))
    start = time.perf_counter()
    report(coverage(grid, args.sims, args.draws, args.seed), args.sims)
    print(f"(coverage grid took {time.perf_counter() - start:.0f} s)\n")
    check_judgy([(100, 100, 0.85, 0.85, 0.5), (500, 100, 0.95, 0.7, 0.2)], 200, args.seed)


if __name__ == "__main__":
    main()
