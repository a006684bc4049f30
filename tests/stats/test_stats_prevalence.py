"""Wilson intervals, TPR/TNR, Rogan-Gladen and the corrected pass rate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from jurybox.stats import (
    LowDiscriminationWarning,
    corrected_pass_rate,
    rogan_gladen,
    tpr_tnr,
    wilson_interval,
    win_rate_interval,
)
from jurybox.stats.prevalence import LabelledCounts, corrected_bounds


def _dataset(
    seed: int, n_lab: int, m: int, *, tpr: float, tnr: float, theta: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.random(n_lab) < theta
    preds = np.where(labels, rng.random(n_lab) < tpr, rng.random(n_lab) > tnr)
    unlabelled = rng.random(m) < theta * tpr + (1 - theta) * (1 - tnr)
    return labels, preds, unlabelled


def test_wilson_interval_textbook() -> None:
    """Brown, Cai & DasGupta (2001) / Newcombe (1998) example: 81/263 -> (0.2553, 0.3662)."""
    res = wilson_interval(81, 263)
    assert round(res.ci_low, 4) == 0.2553
    assert round(res.ci_high, 4) == 0.3662
    assert res.method == "Wilson score interval"


def test_wilson_interval_edges() -> None:
    zero = wilson_interval(0, 10)
    assert zero.ci_low == pytest.approx(0.0, abs=1e-12) and 0 < zero.ci_high < 0.35
    assert wilson_interval(10, 10).ci_high == pytest.approx(1.0)


def test_tpr_tnr_counts_and_intervals() -> None:
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    preds = [1, 1, 1, 0, 0, 0, 1, 0, 0, 1]
    res = tpr_tnr(labels, preds)
    assert res.tpr.estimate == pytest.approx(4 / 5) and res.tnr.estimate == pytest.approx(4 / 5)
    assert (res.n_positive, res.n_negative) == (5, 5)
    assert res.youden == pytest.approx(0.6)
    assert res.tpr.ci_low == pytest.approx(wilson_interval(4, 5).ci_low)
    assert tpr_tnr(np.array(labels, bool), np.array(preds, bool)) == res


def test_rogan_gladen_worked_example() -> None:
    """Shankar & Husain, ch. 5: TPR 0.85, TNR 0.90, p_obs 0.72 -> 0.827."""
    res = rogan_gladen(0.72, 0.85, 0.90)
    assert round(res.estimate, 3) == 0.827
    assert not res.clipped


def test_rogan_gladen_clips() -> None:
    res = rogan_gladen(0.02, 0.9, 0.9)
    assert res.estimate == 0.0 and res.raw < 0 and res.clipped


def test_rogan_gladen_useless_judge() -> None:
    with pytest.raises(ValueError, match="no better than chance"):
        rogan_gladen(0.5, 0.5, 0.5)
    with pytest.warns(LowDiscriminationWarning, match="close to 0"):
        rogan_gladen(0.5, 0.55, 0.6)


@pytest.mark.parametrize(
    "case",
    [
        # R asht::prevSeSp examples, reproducing Lang & Reiczigel (2014), examples 1-4.
        (4060 / 11284, 11284, 178 / 179, 179, 358 / 359, 359, 0.349, 0.372, 3),
        (51 / 2971, 2971, 32 / 33, 33, 20 / 20, 20, 0.0, 0.053, 3),
        (259 / 509, 509, 84 / 127, 127, 96 / 109, 109, 0.58, 0.87, 2),
        (51 / 509, 509, 23 / 41, 41, 187 / 195, 195, 0.037, 0.195, 3),
    ],
)
def test_lang_reiczigel_published_examples(case: tuple[float, ...]) -> None:
    ap, n_p, se, n_se, sp, n_sp, low, high, digits = case
    cells = LabelledCounts(
        tp=np.array([round(se * n_se)], float),
        n_pos=np.array([n_se], float),
        tn=np.array([round(sp * n_sp)], float),
        n_neg=np.array([n_sp], float),
    )
    lo, hi = corrected_bounds(
        cells,
        np.array([round(ap * n_p)], float),
        float(n_p),
        confidence=0.95,
        interval="lang-reiczigel",
        n_bootstrap=1,
        rng=np.random.default_rng(0),
    )
    assert round(float(lo[0]), int(digits)) == low
    assert round(float(hi[0]), int(digits)) == high


def test_corrected_pass_rate_point_estimate_and_fields() -> None:
    labels, preds, unlabelled = _dataset(0, 400, 5000, tpr=0.85, tnr=0.9, theta=0.6)
    res = corrected_pass_rate(labels, preds, unlabelled, rng=1, n_bootstrap=5000)
    rates = tpr_tnr(labels, preds)
    expected = rogan_gladen(unlabelled.mean(), rates.tpr.estimate, rates.tnr.estimate).estimate
    assert res.estimate == pytest.approx(expected)
    assert res.ci_low < res.estimate < res.ci_high
    assert (res.n_labelled, res.n_unlabelled, res.n_bootstrap) == (400, 5000, 5000)
    assert res.p_obs == pytest.approx(unlabelled.mean())
    assert "Jeffreys" in res.method and "unlabelled" in res.method


def test_corrected_pass_rate_is_seeded() -> None:
    data = _dataset(1, 200, 1000, tpr=0.8, tnr=0.8, theta=0.5)
    a = corrected_pass_rate(*data, rng=7)
    assert a == corrected_pass_rate(*data, rng=np.random.default_rng(7))
    assert a != corrected_pass_rate(*data, rng=8)


def test_small_unlabelled_set_widens_the_interval() -> None:
    """The unlabelled set's sampling error must show: same labelled set, 100 vs 100,000 items."""
    labels, preds, big = _dataset(2, 500, 100_000, tpr=0.9, tnr=0.9, theta=0.5)
    small = big[:100]
    wide = corrected_pass_rate(labels, preds, small, rng=0)
    narrow = corrected_pass_rate(labels, preds, big, rng=0)
    assert (wide.ci_high - wide.ci_low) > 2 * (narrow.ci_high - narrow.ci_low)


@pytest.mark.parametrize("interval", ["percentile-bootstrap", "lang-reiczigel"])
def test_other_interval_methods_agree_on_large_samples(interval: str) -> None:
    data = _dataset(3, 2000, 50_000, tpr=0.85, tnr=0.9, theta=0.4)
    default = corrected_pass_rate(*data, rng=0)
    other = corrected_pass_rate(*data, rng=0, interval=interval)  # type: ignore[arg-type]
    assert other.estimate == default.estimate
    assert other.ci_low == pytest.approx(default.ci_low, abs=0.005)
    assert other.ci_high == pytest.approx(default.ci_high, abs=0.005)
    assert other.method != default.method


def test_corrected_pass_rate_warns_for_a_weak_judge() -> None:
    labels = np.array([1] * 50 + [0] * 50)
    preds = np.array([1] * 29 + [0] * 21 + [1] * 22 + [0] * 28)  # TPR .58, TNR .56
    with pytest.warns(LowDiscriminationWarning):
        corrected_pass_rate(labels, preds, [1, 0] * 50, rng=0)


def test_corrected_pass_rate_warns_when_labels_cannot_exclude_chance() -> None:
    labels = np.array([1] * 6 + [0] * 6)
    preds = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1])  # TPR .67, TNR .67, J = .33
    with pytest.warns(LowDiscriminationWarning, match="lower bound"):
        corrected_pass_rate(labels, preds, [1, 0, 0] * 30, rng=0)


def test_corrected_pass_rate_no_warning_for_a_good_judge() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corrected_pass_rate(*_dataset(4, 300, 1000, tpr=0.9, tnr=0.9, theta=0.5), rng=0)


def test_corrected_pass_rate_rejects_chance_judge() -> None:
    labels = np.array([1] * 10 + [0] * 10)
    preds = np.array([1] * 5 + [0] * 5 + [1] * 5 + [0] * 5)
    with pytest.raises(ValueError, match="no better than chance"):
        corrected_pass_rate(labels, preds, [1, 0] * 10)


def test_corrected_pass_rate_is_fast() -> None:
    """20,000 draws at 1,000 labelled / 100,000 unlabelled: vectorised, well under a second."""
    import time

    data = _dataset(5, 1000, 100_000, tpr=0.85, tnr=0.9, theta=0.6)
    start = time.perf_counter()
    corrected_pass_rate(*data, n_bootstrap=20_000, rng=0)
    assert time.perf_counter() - start < 1.0


def test_win_rate_interval() -> None:
    half = win_rate_interval(6, 2, 2)
    assert half.estimate == pytest.approx(0.7) and half.n == 10
    excluded = win_rate_interval(6, 2, 2, tie_policy="exclude")
    assert excluded.estimate == pytest.approx(0.75) and excluded.n == 8
    assert excluded.ci_low == pytest.approx(wilson_interval(6, 8).ci_low)
    assert "half" in half.method and "excluded" in excluded.method
