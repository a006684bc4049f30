"""Every pair at once (``cohen_kappa_pairs``, ``percent_agreement_pairs``) equals the per-pair
reference estimators (golden-tested in test_stats_agreement.py, kappa with its asymptotic
interval) on random panels with missing labels, perfect agreement, one category, a constant rater
and raters who share no unit."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
import pytest

from jurybox import stats
from jurybox.stats.pairwise import pair_tables, rater_pairs

TOL = 1e-12
pytestmark = pytest.mark.filterwarnings(
    "ignore::RuntimeWarning"
)  # the reference on degenerate pairs


def _panel(rng: np.random.Generator, trial: int) -> tuple[np.ndarray[Any, Any], list[int]]:
    """units x raters codes: some raters copy the first (ties, perfect pairs), some miss labels,
    one rater may use a single category and one may miss every unit another rated."""
    units, raters, k = int(rng.integers(2, 40)), int(rng.integers(2, 7)), int(rng.integers(1, 6))
    codes = rng.integers(0, k, size=(units, raters))
    if trial % 3 == 0:
        copy = rng.random((units, raters - 1)) < 0.85
        codes[:, 1:] = np.where(copy, codes[:, :1], codes[:, 1:])
    if trial % 5 == 0:
        codes[:, -1] = 0
    codes[rng.random((units, raters)) < rng.uniform(0, 0.5)] = -1
    if trial % 7 == 0 and raters > 2:
        codes[: units // 2, 0], codes[units // 2 :, 1] = -1, -1
    return codes, list(range(1, k + 1))


def _reference(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ValueError:
        return None


def _assert_same(reference: Any, fast: Any) -> None:
    for field in dataclasses.fields(reference):
        want, got = getattr(reference, field.name), getattr(fast, field.name)
        if isinstance(want, float):
            assert math.isclose(want, got, rel_tol=TOL, abs_tol=TOL), (field.name, want, got)
        else:
            assert want == got, (field.name, want, got)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_every_pair_equals_the_reference(weights: Any) -> None:
    rng = np.random.default_rng(19)
    computed = left_open = 0
    for trial in range(100):
        codes, cats = _panel(rng, trial)
        kappas = stats.cohen_kappa_pairs(codes, cats, weights, confidence=0.9)
        shares = stats.percent_agreement_pairs(codes, len(cats), confidence=0.9)
        names = np.array(cats)
        for p, (i, j) in enumerate(itertools.combinations(range(codes.shape[1]), 2)):
            both = (codes[:, i] >= 0) & (codes[:, j] >= 0)
            a, b = names[codes[both, i]], names[codes[both, j]]
            kappa = _reference(
                stats.cohen_kappa,
                a,
                b,
                weights,
                categories=cats,
                confidence=0.9,
                interval="asymptotic",
            )
            share = _reference(stats.percent_agreement, a, b, confidence=0.9)
            assert (share is None) == (shares[p] is None)
            assert share == shares[p]  # the Wilson interval is the same computation: exact
            if kappas[p] is None:
                left_open += 1
                continue
            assert kappa is not None, "a pair the reference rejects must be left open"
            _assert_same(kappa, kappas[p])
            computed += 1
    assert computed > 300 and left_open > 50  # both paths are exercised


def test_string_categories_and_unweighted_drop_unused() -> None:
    codes = np.array([[0, 0, 2], [1, 1, 2], [0, 1, -1], [1, 1, 0], [0, 0, 2]])
    cats = ["bad", "ok", "good"]
    kappas = stats.cohen_kappa_pairs(codes, cats)
    first = kappas[0]
    assert first is not None and first.categories == ("bad", "ok")
    ref = stats.cohen_kappa(
        ["bad", "ok", "bad", "ok", "bad"], ["bad", "ok", "ok", "ok", "bad"], interval="asymptotic"
    )
    _assert_same(ref, first)


def test_tables_count_shared_units_in_combinations_order() -> None:
    codes = np.array([[0, 1, -1], [1, 1, 0], [-1, 0, 0]])
    first, second = rater_pairs(3)
    assert list(zip(first.tolist(), second.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 2)]
    tables = pair_tables(codes, 2)
    assert tables[0].tolist() == [[0, 1], [0, 1]]
    assert tables[1].tolist() == [[0, 0], [1, 0]]  # only unit 1 is rated by raters 0 and 2
    assert tables[2].tolist() == [[1, 0], [1, 0]]


def test_no_shared_unit_and_one_category_are_left_to_the_reference() -> None:
    codes = np.array([[0, -1, 1], [-1, 0, 1], [0, -1, 1]])
    assert stats.cohen_kappa_pairs(codes, [1, 2]) == [None, None, None]
    assert stats.percent_agreement_pairs(codes, 2)[0] is None


@pytest.mark.parametrize(
    ("codes", "message"),
    [
        (np.array([[0.0, 1.0]]), "integer matrix"),
        (np.array([0, 1]), "integer matrix"),
        (np.array([[0, 3]]), "-1 \\(missing\\) .. 2"),
        (np.array([[-2, 0]]), "-1 \\(missing\\) .. 2"),
    ],
)
def test_bad_codes_are_named(codes: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        stats.cohen_kappa_pairs(codes, [1, 2, 3])


def test_bad_weights_are_named() -> None:
    with pytest.raises(ValueError, match="weights must be"):
        stats.cohen_kappa_pairs(np.zeros((2, 2), dtype=int), [1, 2], "cubic")  # type: ignore[arg-type]
