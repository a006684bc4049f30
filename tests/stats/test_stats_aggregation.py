"""Dawid-Skene on a synthetic panel with known accuracies, and Borda count."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jurybox.stats import borda_count, dawid_skene

ACCURACIES = np.array([0.92, 0.85, 0.75, 0.65, 0.6])


def _panel(seed: int, n_items: int = 3000, missing: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """Binary items (40% pass); judge j is right with probability ACCURACIES[j]."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(n_items) < 0.4).astype(int)
    right = rng.random((ACCURACIES.size, n_items)) < ACCURACIES[:, None]
    labels = np.where(right, truth, 1 - truth).astype(float)
    labels[rng.random(labels.shape) < missing] = np.nan
    return labels, truth


def test_dawid_skene_recovers_known_accuracies() -> None:
    labels, truth = _panel(0)
    res = dawid_skene(labels, rng=0)
    assert res.converged
    assert res.classes == (0, 1)
    np.testing.assert_allclose(res.accuracy, ACCURACIES, atol=0.025)
    assert res.priors[1] == pytest.approx(0.4, abs=0.03)
    assert res.confusion.shape == (5, 2, 2)
    np.testing.assert_allclose(res.confusion.sum(axis=2), 1.0)
    np.testing.assert_allclose(res.posteriors.sum(axis=1), 1.0)
    ds_acc = np.mean(np.array(res.labels) == truth)
    vote = np.nanmean(labels, axis=0) > 0.5
    assert ds_acc > np.mean(vote == truth)  # weighting judges beats the plain majority


def test_dawid_skene_is_deterministic_per_seed_and_takes_any_labels() -> None:
    labels, _ = _panel(1, n_items=400)
    words = np.where(labels == 1, "Pass", "Fail").astype(object)
    words[np.isnan(labels)] = None
    a, b = dawid_skene(words, rng=3), dawid_skene(words, rng=3)
    assert a.classes == ("Fail", "Pass")
    np.testing.assert_array_equal(a.posteriors, b.posteriors)
    numeric = dawid_skene(labels, rng=3)
    np.testing.assert_allclose(a.accuracy, numeric.accuracy)


def test_dawid_skene_three_classes() -> None:
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, 1500)
    acc = np.array([0.9, 0.8, 0.7, 0.6])
    right = rng.random((4, 1500)) < acc[:, None]
    wrong = (truth + rng.integers(1, 3, (4, 1500))) % 3
    res = dawid_skene(np.where(right, truth, wrong), rng=0)
    np.testing.assert_allclose(res.accuracy, acc, atol=0.03)


def test_borda_count() -> None:
    res = borda_count([["a", "b", "c"], ["b", "a", "c"], ["a", "c", "b"]])
    assert res.ranking == ("a", "b", "c")
    assert dict(res.scores) == {"a": 5.0, "b": 3.0, "c": 1.0}
    assert res.n_rankings == 3


def test_borda_ties_keep_first_ranking_order() -> None:
    res = borda_count([["x", "y"], ["y", "x"]])
    assert res.ranking == ("x", "y") and res.scores["x"] == res.scores["y"] == 1.0


def test_borda_rejects_inconsistent_rankings() -> None:
    with pytest.raises(ValueError, match="same 3 candidates"):
        borda_count([["a", "b", "c"], ["a", "b", "d"]])


def _multiclass_panel(rng: np.random.Generator, n_items: int = 300) -> np.ndarray:
    """5 judges of accuracy U(0.5, 0.9) on 3 skewed classes, 20% labels missing."""
    truth = rng.choice(3, size=n_items, p=rng.dirichlet(np.full(3, 3.0)))
    acc = rng.uniform(0.5, 0.9, size=5)[:, None]
    wrong = (truth + rng.integers(1, 3, (5, n_items))) % 3
    labels = np.where(rng.random((5, n_items)) < acc, truth, wrong).astype(float)
    labels[rng.random(labels.shape) < 0.2] = np.nan
    return labels


def test_dawid_skene_converges_on_every_simulation() -> None:
    """The old default (absolute tol 1e-8, 200 iterations) left 6 of 20 such panels unconverged."""
    rng = np.random.default_rng(0)
    for seed in range(8):
        res = dawid_skene(_multiclass_panel(rng), rng=seed)
        assert res.converged, f"panel {seed} did not converge in {res.n_iter} iterations"
        assert res.n_starts == 4 and len(res.start_log_likelihoods) == 4
        assert res.log_likelihood == pytest.approx(max(res.start_log_likelihoods), rel=1e-6)
        assert np.isfinite(res.log_likelihood) and res.log_likelihood < 0


def test_dawid_skene_random_starts_do_not_relabel_classes() -> None:
    """Random starts that land on permuted classes are matched back to the majority vote."""
    labels, truth = _panel(2, n_items=600)
    one, many = dawid_skene(labels, n_starts=1, rng=0), dawid_skene(labels, n_starts=6, rng=0)
    assert np.mean(np.array(many.labels) == truth) >= np.mean(np.array(one.labels) == truth) - 0.01
    np.testing.assert_allclose(many.accuracy, one.accuracy, atol=0.01)


def _slow_panel(seed: int) -> np.ndarray:
    """A panel on which EM creeps (weak judges, 30 % missing): found by search, seed 4."""
    rng = np.random.default_rng(seed)
    judges, n, k = rng.integers(2, 5), rng.integers(20, 400), rng.integers(2, 4)
    truth = rng.integers(0, k, n)
    right = rng.random((judges, n)) < rng.uniform(0.45, 0.8, (judges, 1))
    labels = np.where(right, truth, rng.integers(0, k, (judges, n))).astype(float)
    labels[rng.random(labels.shape) < 0.3] = np.nan
    return labels


def test_dawid_skene_is_converged_only_when_the_posteriors_have_settled() -> None:
    """The relative log-likelihood gain alone stopped this run after 100 iterations with the
    posteriors still 0.005 from where EM settles, and called it converged."""
    labels = _slow_panel(4)
    early = dawid_skene(labels, rng=0, n_starts=1, tol_posterior=math.inf)
    now = dawid_skene(labels, rng=0, n_starts=1)
    settled = dawid_skene(labels, rng=0, n_starts=1, tol=1e-14, tol_posterior=1e-9, max_iter=5000)
    assert early.converged and now.converged and settled.converged
    assert np.max(np.abs(early.posteriors - settled.posteriors)) > 1e-3
    assert np.max(np.abs(now.posteriors - settled.posteriors)) < 1e-4
    assert now.n_iter > early.n_iter and "posterior tol=1e-06" in now.method


def test_dawid_skene_says_when_it_did_not_converge() -> None:
    labels = _slow_panel(11)  # still creeping after 1000 iterations
    res = dawid_skene(labels, rng=0, n_starts=1)
    assert not res.converged and res.n_iter == 1000
