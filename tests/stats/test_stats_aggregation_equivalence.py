"""The faster Dawid–Skene (labels one-hot encoded per distinct value, numpy log-sum-exp) gives
what the implementation before it gave (``_dawid_skene_before.py``, kept verbatim) under the
stopping rule it had (the log-likelihood's relative gain alone: ``tol_posterior=math.inf``): the
same classes, labels, iterations and starts, posteriors and confusion matrices within 1e-9."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _dawid_skene_before import dawid_skene as dawid_skene_before  # beside this file

from jurybox.stats import dawid_skene

WORDS = np.array(["control", "tie", "treatment", "other"], dtype=object)


def _panel(seed: int, judges: int, items: int, classes: int, kind: str) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, classes, items)
    right = rng.random((judges, items)) < rng.uniform(0.5, 0.95, (judges, 1))
    labels = np.where(right, truth, rng.integers(0, classes, (judges, items)))
    if kind == "words":
        out = WORDS[labels]
        out[rng.random(out.shape) < 0.1] = None
        return out
    floats = labels.astype(float)
    floats[rng.random(floats.shape) < 0.1] = np.nan
    if kind == "mixed":  # 1.0 and 1 are one class; NaN and None both missing
        mixed = floats.astype(object)
        mixed[0, ::3] = [None if np.isnan(v) else int(v) for v in floats[0, ::3]]
        return mixed
    return floats


@pytest.mark.parametrize("kind", ["floats", "words", "mixed"])
@pytest.mark.parametrize(
    ("seed", "judges", "items", "classes"),
    [(0, 2, 30, 2), (1, 3, 500, 3), (2, 5, 2000, 2), (3, 4, 300, 4), (4, 3, 8, 3)],
)
def test_same_result_as_before(seed: int, judges: int, items: int, classes: int, kind: str) -> None:
    labels = _panel(seed, judges, items, classes, kind)
    for start_seed in (0, 7):
        before = dawid_skene_before(labels, rng=start_seed, n_starts=3)
        now = dawid_skene(labels, rng=start_seed, n_starts=3, tol_posterior=math.inf)
        assert now.classes == before.classes
        assert now.labels == before.labels
        assert now.n_iter == before.n_iter and now.converged == before.converged
        np.testing.assert_allclose(now.posteriors, before.posteriors, rtol=0, atol=1e-9)
        np.testing.assert_allclose(now.confusion, before.confusion, rtol=0, atol=1e-9)
        np.testing.assert_allclose(now.priors, before.priors, rtol=0, atol=1e-9)
        assert now.log_likelihood == pytest.approx(before.log_likelihood, rel=1e-12)
        np.testing.assert_allclose(now.start_log_likelihoods, before.start_log_likelihoods)


def test_given_classes_and_errors_as_before() -> None:
    labels = _panel(5, 3, 100, 2, "floats")
    before = dawid_skene_before(labels, classes=(0, 1, 2), rng=1)
    now = dawid_skene(labels, classes=(0, 1, 2), rng=1, tol_posterior=math.inf)
    np.testing.assert_allclose(now.posteriors, before.posteriors, rtol=0, atol=1e-9)
    for bad, classes in [
        (np.full((3, 4), np.nan), None),
        (labels, (0,)),
        (labels, (1, 2)),
    ]:
        with pytest.raises(ValueError) as old:
            dawid_skene_before(bad, classes=classes)
        with pytest.raises(ValueError) as new:
            dawid_skene(bad, classes=classes)
        assert str(new.value) == str(old.value)
