"""Gwet's AC and the ICC with intervals over items (issue 33): an item's units (its two
presentation orders, its responses, its repeats) are resampled together."""

from __future__ import annotations

import numpy as np
import pytest

from jurybox.stats import fleiss_kappa, gwet_ac, gwet_ac_counts, icc
from jurybox.stats.agreement import _fleiss_of_sums
from jurybox.stats.reliability import _icc_of_sums

KINDS = ("1,1", "2,1", "3,1", "1,k", "2,k", "3,k")


def _two_orders(rng: np.random.Generator, items: int, p: float) -> np.ndarray:
    """Two raters × (items × 2 orders) yes/no labels, the second order a copy of the first."""
    truth = rng.random(items) < 0.8
    labels = [np.where(rng.random(items) < p, truth, rng.random(items) < 0.5) for _ in range(2)]
    return np.repeat(np.vstack(labels).astype(int), 2, axis=1)


def test_gwet_interval_over_items_is_wider_where_orders_repeat() -> None:
    data = _two_orders(np.random.default_rng(1), 40, 0.75)
    items = np.repeat(np.arange(40), 2)
    over_items = gwet_ac(data, clusters=items, rng=0)
    over_units = gwet_ac(data, rng=0)
    assert over_items.coefficient == over_units.coefficient
    assert over_items.n_clusters == 40 and over_units.n_clusters == 80
    assert over_items.ci_low is not None and over_units.ci_low is not None
    assert over_units.ci_high is not None and over_items.ci_high is not None
    width_items = over_items.ci_high - over_items.ci_low
    assert width_items > 1.25 * (over_units.ci_high - over_units.ci_low)
    assert over_items.ci_low <= over_items.coefficient <= over_items.ci_high
    assert "bootstrap interval over 40 items" in over_items.method


def test_gwet_interval_covers_with_repeated_orders() -> None:
    """200 data sets of 30 items in two identical orders: the interval over items covers AC1's
    limit about 95 % of the time, the one over units (60 'independent' units) far less."""
    rng = np.random.default_rng(2)
    p, prevalence = 0.75, 0.8
    s = p + (1 - p) / 2
    r = prevalence * s + (1 - prevalence) * (1 - s)
    p_a, p_e = s**2 + (1 - s) ** 2, 2 * r * (1 - r)
    truth = (p_a - p_e) / (1 - p_e)
    items = np.repeat(np.arange(30), 2)
    hits = {"items": 0, "units": 0}
    for _ in range(200):
        data = _two_orders(rng, 30, p)
        for name, clusters in (("items", items), ("units", None)):
            found = gwet_ac(data, clusters=clusters, n_bootstrap=500, rng=rng)
            assert found.ci_low is not None and found.ci_high is not None
            hits[name] += found.ci_low <= truth <= found.ci_high
    assert hits["items"] >= 0.91 * 200
    assert hits["units"] <= 0.90 * 200


def test_gwet_without_spread_has_no_interval_and_says_why() -> None:
    counts = np.array([[2, 0], [2, 0], [0, 2]] * 3)  # every unit agrees: pa = 1 everywhere
    found = gwet_ac_counts(counts, rng=0)
    assert found.coefficient == pytest.approx(1.0)
    assert found.ci_low is None and found.ci_high is None
    assert "no interval" in found.method and "no spread" in found.method


def _counts(labels: np.ndarray) -> np.ndarray:
    """Units × {no, yes} rating counts of raters × units yes/no labels."""
    yes = labels.sum(axis=0)
    return np.column_stack([labels.shape[0] - yes, yes])


def _panel(rng: np.random.Generator, items: int, p: float, raters: int = 3) -> np.ndarray:
    """``raters`` × (items × 2 orders) yes/no labels at 80 % prevalence, each rater right with
    probability p (else a coin), the second order a copy of the first."""
    truth = rng.random(items) < 0.8
    labels = [
        np.where(rng.random(items) < p, truth, rng.random(items) < 0.5) for _ in range(raters)
    ]
    return np.repeat(np.vstack(labels).astype(int), 2, axis=1)


def test_fleiss_of_summed_terms_is_fleiss_kappa() -> None:
    """The per-unit terms the bootstrap sums give the kappa statsmodels computes."""
    counts = _counts(_panel(np.random.default_rng(5), 40, 0.7))
    found = fleiss_kappa(counts, rng=0)
    agreement = (np.sum(counts**2, axis=1) - 3) / 6
    terms = np.column_stack([np.ones(len(counts)), agreement, counts])
    assert _fleiss_of_sums(terms.sum(axis=0)[None, :], 3)[0] == pytest.approx(found.kappa)


def test_fleiss_interval_over_items_equals_the_one_of_the_items_alone() -> None:
    """Both orders of every item alike: the interval over items of the 80 units is that of the
    40 items rated once (the same resamples, each item's terms doubled), wider than the one
    over 80 units taken as independent."""
    labels = _panel(np.random.default_rng(6), 40, 0.7)
    items = np.repeat(np.arange(40), 2)
    over_items = fleiss_kappa(_counts(labels), clusters=items, rng=0)
    alone = fleiss_kappa(_counts(labels[:, ::2]), rng=0)
    over_units = fleiss_kappa(_counts(labels), rng=0)
    assert over_items.kappa == pytest.approx(alone.kappa)
    assert (over_items.ci_low, over_items.ci_high) == pytest.approx((alone.ci_low, alone.ci_high))
    assert over_items.n_clusters == 40 and over_units.n_clusters == 80
    assert over_items.ci_low is not None and over_items.ci_high is not None
    assert over_units.ci_low is not None and over_units.ci_high is not None
    assert over_items.ci_high - over_items.ci_low > 1.25 * (over_units.ci_high - over_units.ci_low)
    assert "bootstrap interval over 40 items" in over_items.method


def test_fleiss_interval_covers_with_repeated_orders() -> None:
    """200 panels of 3 raters on 30 items in two identical orders: the interval over items
    covers kappa's limit about 95 % of the time, the one over 60 'independent' units far less
    (the full grid: bench/coverage_by_item.py --only fleiss)."""
    rng = np.random.default_rng(7)
    p = 0.75
    s = p + (1 - p) / 2
    r = 0.8 * s + 0.2 * (1 - s)
    p_o, p_e = s**2 + (1 - s) ** 2, r**2 + (1 - r) ** 2
    truth = (p_o - p_e) / (1 - p_e)
    items = np.repeat(np.arange(30), 2)
    hits = {"items": 0, "units": 0}
    for _ in range(200):
        counts = _counts(_panel(rng, 30, p))
        for name, clusters in (("items", items), ("units", None)):
            found = fleiss_kappa(counts, clusters=clusters, n_bootstrap=500, rng=rng)
            assert found.ci_low is not None and found.ci_high is not None
            hits[name] += found.ci_low <= truth <= found.ci_high
    assert hits["items"] >= 0.91 * 200
    assert hits["units"] <= 0.90 * 200


def test_fleiss_without_spread_has_no_interval_and_says_why() -> None:
    counts = np.array([[3, 0], [3, 0], [0, 3]] * 3)  # every unit agrees
    found = fleiss_kappa(counts, rng=0)
    assert found.kappa == pytest.approx(1.0)
    assert found.ci_low is None and found.ci_high is None
    assert "no interval" in found.method and "no spread" in found.method


@pytest.mark.parametrize("kind", KINDS)
def test_icc_of_summed_terms_equals_the_anova(kind: str) -> None:
    """The per-target terms the bootstrap sums give the ICC ``icc`` computes, every form."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(25, 1)) + rng.normal(scale=0.8, size=(25, 3)) + [0.0, 0.4, -0.2]
    y = x - x.mean()
    terms = np.column_stack([np.ones(25), y, y.sum(axis=1) ** 2, np.sum(y**2, axis=1)])
    assert _icc_of_sums(terms.sum(axis=0)[None, :], 3, kind)[0] == pytest.approx(
        icc(x, kind).icc, abs=1e-12
    )


def test_icc_interval_over_items_where_an_item_has_several_targets() -> None:
    rng = np.random.default_rng(4)
    shared = np.repeat(rng.normal(size=30), 2)  # both responses of an item alike
    true = shared + 0.3 * rng.normal(size=60)
    ratings = np.column_stack([true + rng.normal(scale=0.5, size=60), true + 0.5])
    items = np.repeat(np.arange(30), 2)
    over_items = icc(ratings, "2,1", clusters=items, rng=0)
    plain = icc(ratings, "2,1")
    assert over_items.icc == plain.icc
    assert "bootstrap interval over 30 items" in over_items.method
    assert "McGraw-Wong" in plain.method
    assert over_items.ci_low <= over_items.icc <= over_items.ci_high
    # one target per item: the F-based interval, exactly as without clusters
    alone = icc(ratings, "2,1", clusters=np.arange(60), rng=0)
    assert (alone.ci_low, alone.ci_high, alone.method) == (
        plain.ci_low,
        plain.ci_high,
        plain.method,
    )


def test_alpha_interval_over_items_where_orders_repeat() -> None:
    """Each item's two orders rated alike: alpha's bootstrap over the 40 items is wider than
    the one over its 80 units; items of one unit each give exactly the interval over units."""
    from jurybox.stats import krippendorff_alpha_ci

    rng = np.random.default_rng(6)
    truth = rng.integers(0, 3, size=40)
    raters = np.vstack(
        [np.where(rng.random(40) < 0.7, truth, rng.integers(0, 3, 40)) for _ in range(3)]
    )
    data = np.repeat(raters, 2, axis=1).astype(float)
    over_items = krippendorff_alpha_ci(data, clusters=np.repeat(np.arange(40), 2), rng=0)
    over_units = krippendorff_alpha_ci(data, rng=0)
    alone = krippendorff_alpha_ci(data, clusters=np.arange(80), rng=0)
    assert over_items.alpha == over_units.alpha
    assert "over 40 items" in over_items.method and "over units" in over_units.method
    width = over_items.ci_high - over_items.ci_low
    assert width > 1.25 * (over_units.ci_high - over_units.ci_low)
    assert (alone.ci_low, alone.ci_high) == (over_units.ci_low, over_units.ci_high)


def test_many_items_take_the_jackknife_normal_interval() -> None:
    """Past 2,000 items the bootstrap's weights and time grow with replicates x items: the
    interval is the jackknife's normal one, close to the bootstrap's where both run."""
    from jurybox.stats import cohen_kappa

    rng = np.random.default_rng(9)
    data = _two_orders(rng, 3000, 0.75)
    items = np.repeat(np.arange(3000), 2)
    big = gwet_ac(data, clusters=items, rng=0)
    assert big.ci_low is not None and big.ci_high is not None
    assert "jackknife standard error over 3000 items" in big.method
    part = gwet_ac(data[:, :3000], clusters=items[:3000], rng=0)  # 1,500 items: bootstrap
    assert part.ci_low is not None and part.ci_high is not None
    assert "bootstrap" in part.method
    ratio = (big.ci_high - big.ci_low) / (part.ci_high - part.ci_low)
    assert 0.6 < ratio < 0.85  # sqrt(1500 / 3000) = 0.71
    kappa = cohen_kappa(data[0], data[1], clusters=items, rng=0)
    assert "jackknife standard error over 3000 items" in kappa.method
    assert kappa.n_bootstrap is None and kappa.n_clusters == 3000
    assert kappa.ci_low < kappa.kappa < kappa.ci_high
