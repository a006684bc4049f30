"""Monte-Carlo coverage of the corrected-pass-rate interval (the full grid: bench/)."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from jurybox.stats import corrected_pass_rate
from jurybox.stats.prevalence import LabelledCounts, corrected_bounds

# Corners of the grid in the issue: labelled n 50-500, unlabelled n 100-100,000,
# TPR/TNR 0.7-0.95, prevalence 0.2-0.8.
GRID = list(itertools.product([50, 500], [100, 100_000], [0.7, 0.95], [0.7, 0.95], [0.2, 0.8]))
N_SIM, N_DRAWS = 400, 2000


def _simulate(
    rng: np.random.Generator, point: tuple[int, int, float, float, float]
) -> tuple[LabelledCounts, np.ndarray]:
    """N_SIM datasets as sufficient counts: labelled set drawn from the population, so the
    class sizes vary; unlabelled verdicts are Bernoulli(theta TPR + (1 - theta)(1 - TNR))."""
    n_lab, m, tpr, tnr, theta = point
    n_pos = rng.binomial(n_lab, theta, N_SIM)
    n_neg = n_lab - n_pos
    cells = LabelledCounts(
        tp=rng.binomial(n_pos, tpr).astype(float),
        n_pos=n_pos.astype(float),
        tn=rng.binomial(n_neg, tnr).astype(float),
        n_neg=n_neg.astype(float),
    )
    hits = rng.binomial(m, theta * tpr + (1 - theta) * (1 - tnr), N_SIM).astype(float)
    return cells, hits


def _usable(cells: LabelledCounts) -> np.ndarray:
    """Datasets where corrected_pass_rate returns an interval (both classes, TPR + TNR > 1)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        youden = cells.tp / cells.n_pos + cells.tn / cells.n_neg - 1
    return (cells.n_pos > 0) & (cells.n_neg > 0) & (youden > 0)


def _subset(cells: LabelledCounts, keep: np.ndarray) -> LabelledCounts:
    return LabelledCounts(cells.tp[keep], cells.n_pos[keep], cells.tn[keep], cells.n_neg[keep])


@pytest.mark.slow
def test_corrected_pass_rate_covers_95_percent_across_the_grid() -> None:
    rng = np.random.default_rng(20261122)
    start = time.perf_counter()
    covered, total, per_point = 0, 0, []
    for point in GRID:
        n_lab, m, tpr, tnr, theta = point
        cells, hits = _simulate(rng, point)
        keep = _usable(cells)
        low, high = corrected_bounds(
            _subset(cells, keep),
            hits[keep],
            float(m),
            confidence=0.95,
            interval="jeffreys-bootstrap",
            n_bootstrap=N_DRAWS,
            rng=rng,
        )
        hit = (low <= theta) & (theta <= high)
        covered, total = covered + int(hit.sum()), total + hit.size
        per_point.append(((n_lab, m, tpr, tnr, theta), hit.mean(), keep.mean()))
    pooled = covered / total
    assert 0.935 <= pooled <= 0.965, f"pooled coverage {pooled:.3f}"
    # each point: 400 datasets give a binomial SE of ~0.011, so allow ±3.5 SE around 0.95
    bad = [(p, round(c, 3)) for p, c, _ in per_point if not 0.91 <= c <= 0.99]
    assert not bad, f"grid points outside [0.91, 0.99]: {bad}"
    assert min(k for *_, k in per_point) > 0.98  # almost every dataset yields an interval
    assert time.perf_counter() - start < 60


def test_public_function_uses_the_simulated_core() -> None:
    """The coverage test runs the vectorised core; the public function must be that core."""
    rng = np.random.default_rng(3)
    labels = rng.random(120) < 0.4
    preds = np.where(labels, rng.random(120) < 0.85, rng.random(120) < 0.2)
    unlabelled = rng.random(700) < 0.45
    res = corrected_pass_rate(labels, preds, unlabelled, n_bootstrap=3000, rng=11)
    cells = LabelledCounts(
        tp=np.array([np.sum(labels & preds)], float),
        n_pos=np.array([labels.sum()], float),
        tn=np.array([np.sum(~labels & ~preds)], float),
        n_neg=np.array([(~labels).sum()], float),
    )
    low, high = corrected_bounds(
        cells,
        np.array([unlabelled.sum()], float),
        700.0,
        confidence=0.95,
        interval="jeffreys-bootstrap",
        n_bootstrap=3000,
        rng=np.random.default_rng(11),
    )
    assert (res.ci_low, res.ci_high) == (float(low[0]), float(high[0]))
