"""Gwet's AC1/AC2 against the irrCAC package's documented examples (Gwet 2014)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from jurybox.stats import cohen_kappa, gwet_ac, gwet_ac_counts

N = None
# irrCAC::cac.raw4raters (subjects x raters, NA missing); gwet.ac1.raw: pa 0.8181818,
# pe 0.1903212, AC1 0.77544.
RAW4 = [
    [1, 1, N, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
    [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [N, 5, 5, 5], [N, N, 1, 1], [N, N, 3, N],
]  # fmt: skip
# irrCAC::distrib.6raters (subjects x categories); gwet.ac1.dist: AC1 0.4448007, pa 0.5511111,
# pe 0.1914815.
DIST6 = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
]  # fmt: skip
# irrCAC::cont3x3abstractors; gwet.ac1.table: AC1 0.8493305 (kappa2.table 0.7964094).
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])


def test_ac1_raw_ratings_with_missing() -> None:
    res = gwet_ac(np.array(RAW4, dtype=object).T)
    assert round(res.coefficient, 5) == 0.77544
    assert res.p_agreement == pytest.approx(0.8181818, abs=1e-7)
    assert res.p_chance == pytest.approx(0.1903212, abs=1e-7)
    assert res.n_units == 12 and res.n_categories == 5


def test_ac1_distribution_of_raters() -> None:
    res = gwet_ac_counts(DIST6)
    assert res.coefficient == pytest.approx(0.4448007, abs=1e-7)
    assert res.p_agreement == pytest.approx(0.5511111, abs=1e-7)
    assert res.p_chance == pytest.approx(0.1914815, abs=1e-7)


def test_ac1_two_raters_contingency_table() -> None:
    a = np.repeat(np.arange(3), ABSTRACTORS.sum(axis=1))
    b = np.concatenate([np.repeat(np.arange(3), row) for row in ABSTRACTORS])
    assert gwet_ac([a, b]).coefficient == pytest.approx(0.8493305, abs=1e-7)
    assert cohen_kappa(a, b).kappa == pytest.approx(0.7964094, abs=1e-7)


def test_ac2_quadratic_by_hand() -> None:
    """Pairs (1,1) (1,2) (3,3) (2,2) on 1..3: pa = 3.75/4, pe = 6·0.65625/6, AC2 = 9/11."""
    res = gwet_ac([[1, 1, 3, 2], [1, 2, 3, 2]], "quadratic")
    assert res.p_agreement == pytest.approx(0.9375)
    assert res.p_chance == pytest.approx(0.65625)
    assert res.coefficient == pytest.approx(9 / 11)


def test_ac2_uses_the_declared_scale_and_identity_weights_give_ac1() -> None:
    data = [[1, 1, 5, 5, 2, 4], [1, 2, 5, 4, 2, 5]]
    full = gwet_ac(data, "linear", categories=[1, 2, 3, 4, 5])
    assert full.n_categories == 5
    assert full.coefficient != pytest.approx(gwet_ac(data, "linear").coefficient)
    assert gwet_ac(data).weights is None and "AC1" in gwet_ac(data).method


def test_ac1_stays_high_where_kappa_collapses() -> None:
    """The kappa paradox: 95% agreement on a 95%-prevalent class gives kappa near 0."""
    a = [1] * 95 + [0] * 5
    b = [1] * 90 + [0] * 5 + [1] * 5
    assert cohen_kappa(a, b).kappa < 0.0
    assert gwet_ac([a, b]).coefficient > 0.8


def _gwet_by_loops(data: object, weights: Any = None, categories: Any = None) -> Any:
    """The per-value reference: counts by a Python loop over every rating (the former code)."""
    raw = np.asarray(data, dtype=object)
    missing = np.array(
        [[v is None or (isinstance(v, float) and math.isnan(v)) for v in row] for row in raw]
    )
    seen = set(raw[~missing].tolist())
    cats = sorted(seen) if categories is None else list(categories)
    index = {c: i for i, c in enumerate(cats)}
    counts = np.zeros((raw.shape[1], len(cats)))
    for rater, unit in zip(*np.nonzero(~missing), strict=True):
        counts[unit, index[raw[rater, unit]]] += 1
    return gwet_ac_counts(counts, weights, rng=0)


@pytest.mark.parametrize("kind", ["float", "object-float", "strings", "ints"])
@pytest.mark.parametrize("weights", [None, "linear"])
def test_vectorised_counting_equals_the_per_value_loop(kind: str, weights: Any) -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(1, 6, size=(4, 300)).astype(float)
    scores[rng.random(scores.shape) < 0.2] = np.nan
    scores[:, :3] = np.nan  # units nobody rated
    data: Any = {
        "float": scores,
        "object-float": np.where(np.isnan(scores), None, scores).astype(object),
        "strings": np.where(np.isnan(scores), None, np.char.add("s", scores.astype(str))),
        "ints": np.nan_to_num(scores, nan=1).astype(np.int64),
    }[kind]
    categories = None if kind == "strings" else [1, 2, 3, 4, 5]
    got = gwet_ac(data, weights, categories=categories, rng=0)
    assert got == _gwet_by_loops(data, weights, categories)
