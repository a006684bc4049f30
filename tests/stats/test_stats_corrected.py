"""Bias-corrected win rate: exact inversions, the binary Rogan-Gladen case, seeded coverage."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox.stats import corrected_win_rate, rogan_gladen
from jurybox.stats.corrected import corrected_win_rate_bounds


def _pairs(table: np.ndarray, names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    labels, preds = [], []
    for t, row in enumerate(table):
        for v, n in enumerate(row):
            labels += [names[t]] * int(n)
            preds += [names[v]] * int(n)
    return labels, preds


def test_exact_inversion_recovers_the_planted_shares() -> None:
    """M rows (0.8, 0.1, 0.1), (0.1, 0.8, 0.1), (0.2, 0.2, 0.6); π = (0.5, 0.3, 0.2).

    q = Mᵀπ = (0.47, 0.33, 0.20); the corrected rate is π_A + ½π_tie = 0.6, the raw 0.57.
    """
    names = ("A", "B", "tie")
    table = np.array([[80, 10, 10], [10, 80, 10], [20, 20, 60]])
    labels, preds = _pairs(table, names)
    unlabelled = ["A"] * 470 + ["B"] * 330 + ["tie"] * 200
    res = corrected_win_rate(labels, preds, unlabelled, rng=0)
    assert res.shares == pytest.approx((0.5, 0.3, 0.2))
    assert res.estimate == pytest.approx(0.6)
    assert res.raw_rate == pytest.approx(0.57)
    assert res.ci_low < 0.6 < res.ci_high
    assert res.n_labelled == 300 and res.n_unlabelled == 1000


def test_two_classes_reduce_to_rogan_gladen() -> None:
    labels, preds = _pairs(np.array([[45, 5], [10, 40]]), ("A", "B"))
    unlabelled = ["A"] * 300 + ["B"] * 200
    res = corrected_win_rate(labels, preds, unlabelled, classes=("A", "B"), rng=1)
    assert res.estimate == pytest.approx(rogan_gladen(0.6, 0.9, 0.8).estimate)


def test_a_perfect_judge_needs_no_correction() -> None:
    labels, preds = _pairs(np.diag([30, 30, 20]), ("A", "B", "tie"))
    res = corrected_win_rate(labels, preds, ["A", "B", "tie", "A"], rng=2)
    assert res.estimate == pytest.approx(res.raw_rate) == pytest.approx(0.625)


def test_corrected_win_rate_coverage() -> None:
    """200 seeded data sets at two grid points; binomial SE ≈ 0.015 (full grid: bench/)."""
    rng = np.random.default_rng(20261123)
    pi = np.array([0.5, 0.3, 0.2])
    hits, total = 0, 0
    for n_lab, acc in ((150, 0.75), (400, 0.9)):
        m = np.full((3, 3), (1 - acc) / 2)
        np.fill_diagonal(m, acc)
        tables = np.stack(
            [
                np.array(
                    [rng.multinomial(n, m[i]) for i, n in enumerate(rng.multinomial(n_lab, pi))]
                )
                for _ in range(200)
            ]
        ).astype(float)
        verdicts = rng.multinomial(2000, m.T @ pi, size=200).astype(float)
        low, high = corrected_win_rate_bounds(
            tables.astype(float), verdicts, confidence=0.95, n_bootstrap=1500, rng=rng
        )
        hits += int(np.sum((low <= 0.6) & (high >= 0.6)))
        total += 200
    assert 0.92 <= hits / total <= 0.98, f"coverage {hits / total:.3f}"


def test_gold_without_ties_against_a_judge_with_ties_is_solved_exactly() -> None:
    """M rows A (0.7, 0.1, 0.2), B (0.1, 0.6, 0.3) over verdicts A/B/tie; π = (0.6, 0.4).

    q = Mᵀπ = (0.46, 0.30, 0.24): the 2 × 3 least squares recovers π exactly; the raw rate
    counts the judge's ties half, 0.46 + 0.12 = 0.58.
    """
    labels, preds = _pairs(np.array([[70, 10, 20], [10, 60, 30]]), ("A", "B", "tie"))
    unlabelled = ["A"] * 460 + ["B"] * 300 + ["tie"] * 240
    res = corrected_win_rate(labels, preds, unlabelled, rng=3)
    assert res.classes == ("A", "B")
    assert res.shares == pytest.approx((0.6, 0.4))
    assert res.estimate == pytest.approx(0.6)
    assert res.raw_rate == pytest.approx(0.58)
    assert res.confusion.shape == (2, 3) and "least squares" in res.method
    assert res.ci_low < 0.6 < res.ci_high


def test_a_judge_whose_verdicts_ignore_the_truth_is_a_value_error() -> None:
    labels, preds = _pairs(np.array([[10, 10, 10], [10, 10, 10]]), ("A", "B", "tie"))
    with pytest.raises(ValueError, match="singular"):
        corrected_win_rate(labels, preds, ["A", "B", "tie"], rng=4)


def test_corrected_win_rate_coverage_without_labelled_ties() -> None:
    """The 2 × 3 case: 200 seeded data sets at two grid points (binomial SE ≈ 0.015)."""
    rng = np.random.default_rng(20261125)
    pi = np.array([0.6, 0.4])
    hits, total = 0, 0
    for n_lab, acc in ((150, 0.7), (400, 0.85)):
        tie = (1 - acc) / 2
        m = np.array([[acc, tie, tie], [tie, acc, tie]])
        tables = np.stack(
            [
                np.array(
                    [rng.multinomial(n, m[i]) for i, n in enumerate(rng.multinomial(n_lab, pi))]
                )
                for _ in range(200)
            ]
        ).astype(float)
        verdicts = rng.multinomial(2000, m.T @ pi, size=200).astype(float)
        low, high = corrected_win_rate_bounds(
            tables, verdicts, confidence=0.95, n_bootstrap=1500, rng=rng
        )
        hits += int(np.sum((low <= 0.6) & (high >= 0.6)))
        total += 200
    assert 0.92 <= hits / total <= 0.98, f"coverage {hits / total:.3f}"


def test_corrected_pass_rate_counts_items_where_an_item_gives_several_verdicts() -> None:
    """Every response judged twice alike (say on two criteria): with the items as clusters the
    interval is the one of the single verdicts (the same draws), the estimate unchanged; counted
    as independent verdicts it narrows."""
    from jurybox.stats import corrected_pass_rate

    rng = np.random.default_rng(33)
    labels = rng.random(80) < 0.6
    preds = np.where(rng.random(80) < 0.85, labels, ~labels)
    unlabelled = rng.random(300) < 0.55
    once = corrected_pass_rate(labels, preds, unlabelled, rng=5)
    items = (np.repeat(np.arange(80), 2), np.repeat(np.arange(300), 2))
    twice = corrected_pass_rate(
        np.repeat(labels, 2), np.repeat(preds, 2), np.repeat(unlabelled, 2), rng=5, clusters=items
    )
    naive = corrected_pass_rate(
        np.repeat(labels, 2), np.repeat(preds, 2), np.repeat(unlabelled, 2), rng=5
    )
    assert twice.estimate == pytest.approx(once.estimate)
    assert (twice.ci_low, twice.ci_high) == pytest.approx((once.ci_low, once.ci_high))
    assert naive.ci_high - naive.ci_low < 0.85 * (once.ci_high - once.ci_low)
    assert "Rao-Scott" in twice.method
