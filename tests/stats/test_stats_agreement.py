"""Golden values for agreement statistics: ../shared/reference/statistics.md and cited R output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.stats import (
    cohen_kappa,
    cohen_kappa_table,
    fleiss_kappa,
    krippendorff_alpha,
    percent_agreement,
)

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", p. 8 (4 observers x 12 units).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
# Fleiss' kappa worked example (Wikipedia): 10 subjects x 14 raters, counts per category 1..5.
FLEISS_WIKI = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
# Fleiss (1971) psychiatric diagnoses, 30 patients x 6 raters (R irr::diagnoses, as coded in
# statsmodels' tests): irr::kappam.fleiss gives kappa = 0.4302445, z = 17.65183.
DIAGNOSES = np.array(
    [
        [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
    ]
)  # fmt: skip
# R irr::anxiety (20 subjects x 3 raters), as in statsmodels' tests.
ANXIETY = np.array(
    [
        [3, 3, 2], [3, 6, 1], [3, 4, 4], [4, 6, 4], [5, 2, 3], [5, 4, 2], [2, 2, 1],
        [3, 4, 6], [5, 3, 1], [2, 3, 1], [2, 2, 1], [6, 3, 2], [1, 3, 3], [5, 3, 3],
        [2, 2, 1], [2, 2, 1], [1, 1, 3], [2, 3, 3], [4, 3, 2], [3, 4, 2],
    ]
)  # fmt: skip


def test_cohen_kappa_sas_example() -> None:
    """SAS PROC FREQ example table: kappa 0.4842, ASE 0.1380, 95% CI 0.2137-0.7547."""
    res = cohen_kappa_table([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert round(res.kappa, 4) == 0.4842
    assert round(res.ase, 4) == 0.1380
    assert round(res.ci_low, 4) == 0.2137
    assert round(res.ci_high, 4) == 0.7547
    assert res.n_items == 19
    assert "unweighted" in res.method


def test_cohen_kappa_from_labels_matches_table() -> None:
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    a = [i for i in range(3) for j in range(3) for _ in range(table[i, j])]
    b = [j for i in range(3) for j in range(3) for _ in range(table[i, j])]
    from_labels, from_table = cohen_kappa(a, b), cohen_kappa_table(table)
    # rater 1 never used category 0, but rater 2 did, so the category stays
    assert from_labels.kappa == pytest.approx(from_table.kappa)
    assert from_labels.ase == pytest.approx(from_table.ase)


@pytest.mark.parametrize(
    ("weights", "kappa", "z"),
    [
        (None, -0.006289308, -0.0604067),
        ("linear", 0.1459075, 1.282472),
        ("quadratic", 0.2520325, 1.437451),
    ],
)
def test_cohen_kappa_weighted_matches_r_irr(weights: str | None, kappa: float, z: float) -> None:
    """R irr::kappa2(anxiety[, 2:3], weight = "unweighted" / "equal" / "squared")."""
    res = cohen_kappa(ANXIETY[:, 1], ANXIETY[:, 2], weights)  # type: ignore[arg-type]
    assert res.kappa == pytest.approx(kappa, abs=1e-7)
    assert res.z == pytest.approx(z, abs=1e-5)
    assert res.categories == (1, 2, 3, 4, 6)  # unused level 5 dropped, as irr does


def test_cohen_kappa_string_labels_and_categories_order() -> None:
    a = ["good", "bad", "good", "ok", "bad", "ok"]
    b = ["good", "bad", "ok", "ok", "bad", "good"]
    res = cohen_kappa(a, b, "linear", categories=["bad", "ok", "good"])
    assert res.categories == ("bad", "ok", "good")
    assert -1 <= res.kappa <= 1


def test_fleiss_kappa_wikipedia() -> None:
    res = fleiss_kappa(FLEISS_WIKI)
    assert round(res.kappa, 3) == 0.210
    assert res.n_items == 10 and res.n_raters == 14 and res.n_categories == 5


def test_fleiss_kappa_matches_r_irr_diagnoses() -> None:
    counts = np.stack([np.sum(c == DIAGNOSES, axis=1) for c in range(1, 6)], axis=1)
    res = fleiss_kappa(counts)
    assert res.kappa == pytest.approx(0.4302445, abs=1e-7)
    assert res.z == pytest.approx(17.65183, abs=1e-5)


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011(level: str, published: float) -> None:
    import krippendorff

    res = krippendorff_alpha(KRIPPENDORFF_2011, level)  # type: ignore[arg-type]
    assert round(res.alpha, 3) == published
    expected = krippendorff.alpha(
        reliability_data=KRIPPENDORFF_2011,
        level_of_measurement=level,  # type: ignore[arg-type]
    )
    assert res.alpha == pytest.approx(expected)
    assert res.n_units == 11  # unit 12 has a single value and is unpairable
    assert res.n_pairable_values == 40


def test_krippendorff_string_labels_nominal() -> None:
    data: list[list[str | None]] = [
        ["a", "b", None, "a"],
        ["a", "b", "b", "c"],
        ["a", "c", "b", None],
    ]
    codes: list[list[float]] = [[0, 1, NAN, 0], [0, 1, 1, 2], [0, 2, 1, NAN]]
    assert krippendorff_alpha(data).alpha == pytest.approx(krippendorff_alpha(codes).alpha)
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(data, "interval")


def test_percent_agreement() -> None:
    res = percent_agreement([1, 2, 3, 1], [1, 2, 1, 1])
    assert res.estimate == 0.75
    assert res.n_agree == 3 and res.n_items == 4
    assert res.ci_low < 0.75 < res.ci_high


@pytest.mark.shared_data
def test_pandalm_annotator_kappas(shared_data: Path) -> None:
    """PandaLM README: annotator pairs 1-2, 1-3, 2-3 have kappa 0.85, 0.88, 0.86."""
    items = json.loads((shared_data / "pandalm" / "testset-v1.json").read_text())
    labels = {k: [item[f"annotator{k}"] for item in items] for k in (1, 2, 3)}
    got = [round(cohen_kappa(labels[i], labels[j]).kappa, 2) for i, j in ((1, 2), (1, 3), (2, 3))]
    assert got == [0.85, 0.88, 0.86]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(8))
def test_krippendorff_matches_package_on_random_data_with_missing(level: str, seed: int) -> None:
    """The matrix-product coincidences agree with the ``krippendorff`` package to 1e-9."""
    import krippendorff

    rng = np.random.default_rng(seed)
    n_raters, n_units = int(rng.integers(2, 6)), int(rng.integers(5, 40))
    n_values = int(rng.integers(2, 12))
    # values include 0 (ratio's 0/0 case) and non-integers (continuous scores)
    domain = np.round(rng.uniform(0, 10, size=n_values), 2) if seed % 2 else np.arange(n_values)
    data = rng.choice(domain, size=(n_raters, n_units)).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    data[:, 0] = [domain[0], domain[-1]] + [np.nan] * (n_raters - 2)  # ≥ 2 distinct pairable
    res = krippendorff_alpha(data, level)  # type: ignore[arg-type]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)  # type: ignore[arg-type]
    assert res.alpha == pytest.approx(float(expected), abs=1e-9)


def test_krippendorff_many_values_is_memory_light() -> None:
    """~170 distinct continuous values over 20,000 units: the package's (units × values²)
    temporaries would be ~5 GB; the matrix product needs megabytes."""
    rng = np.random.default_rng(0)
    truth = rng.normal(6, 1.3, size=20_000)
    data = np.round(truth + rng.normal(0, 0.5, size=(3, truth.size)), 1)
    res = krippendorff_alpha(data, "ordinal")
    assert np.unique(data).size > 100
    assert 0.5 < res.alpha < 1


def test_weighted_kappa_uses_the_full_declared_scale() -> None:
    """statsmodels cohens_kappa and irrCAC on the 5 × 5 table: quadratic 0.9091, linear 0.7273.

    Scores 3 is never used; dropping it (the old behaviour) moved 4 and 5 closer to 1 and 2 and
    gave 0.824.
    """
    a, b, scale = [1, 1, 5, 5, 2, 4], [1, 2, 5, 4, 2, 5], [1, 2, 3, 4, 5]
    quad = cohen_kappa(a, b, "quadratic", categories=scale)
    assert quad.kappa == pytest.approx(10 / 11, abs=1e-12)
    assert round(quad.kappa, 3) == 0.909
    assert quad.categories == (1, 2, 3, 4, 5)
    assert cohen_kappa(a, b, "linear", categories=scale).kappa == pytest.approx(8 / 11)
    # Unweighted kappa is unaffected by unused categories.
    assert cohen_kappa(a, b, categories=scale).kappa == pytest.approx(cohen_kappa(a, b).kappa)


# --- issue 33: kappa's interval is a bootstrap over items ------------------------------------


def _scored_items(seed: int, items: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.choice(5, size=items, p=[0.05, 0.1, 0.2, 0.35, 0.3]) + 1
    judge = np.clip(human + rng.choice([-1, 0, 0, 1], size=items), 1, 5)
    return human, judge


def test_kappa_bootstrap_resamples_items_not_units() -> None:
    """Both responses of every item scored alike: the clusters hold two identical units, every
    replicate's kappa is the one of the items alone, so the interval is theirs exactly; without
    the clusters the duplicated units pass for independent ones and the interval narrows."""
    human, judge = _scored_items(1, 60)
    items = np.repeat(np.arange(60), 2)
    alone = cohen_kappa(human, judge, "quadratic", categories=range(1, 6), rng=7)
    twice = cohen_kappa(
        np.repeat(human, 2), np.repeat(judge, 2), "quadratic", categories=range(1, 6),
        clusters=items, rng=7,
    )  # fmt: skip
    naive = cohen_kappa(
        np.repeat(human, 2), np.repeat(judge, 2), "quadratic", categories=range(1, 6), rng=7
    )
    assert twice.kappa == pytest.approx(alone.kappa)
    assert (twice.ci_low, twice.ci_high) == pytest.approx((alone.ci_low, alone.ci_high))
    assert twice.n_clusters == 60 and twice.n_items == 120 and twice.n_bootstrap == 2000
    assert naive.ci_high - naive.ci_low < 0.85 * (twice.ci_high - twice.ci_low)
    assert "bootstrap over items" in twice.method


def test_kappa_bootstrap_agrees_with_scipy_bootstrap() -> None:
    """Its replicates are scipy.stats.bootstrap's (items resampled, kappa recomputed): the
    percentile intervals of the two agree to the Monte-Carlo error."""
    human, judge = _scored_items(2, 200)
    ours = cohen_kappa(human, judge, "quadratic", categories=range(1, 6), rng=3)

    def kappa(index: np.ndarray, axis: int = -1) -> np.ndarray:
        from jurybox.stats.kappa_ci import disagreement_weights, kappa_of_tables

        cells = human[index] * 5 + judge[index] - 6
        tables = np.apply_along_axis(np.bincount, axis, cells, minlength=25)
        return kappa_of_tables(tables.reshape(*tables.shape[:-1], 5, 5).astype(float),
                               disagreement_weights(5, "quadratic"))  # fmt: skip

    ref = sps.bootstrap(
        (np.arange(200),), kappa, n_resamples=2000, method="BCa", random_state=4, vectorized=True
    )
    assert ours.kappa == pytest.approx(kappa(np.arange(200)))
    # ours widens BCa's quantiles for small samples (t with n - 1 df): a hair wider at 200
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.02)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.02)
    assert ours.ci_low <= ref.confidence_interval.low + 0.005


def test_weighted_kappa_interval_is_never_a_nan_artefact() -> None:
    """Seven items rated alike: statsmodels' variance is NaN there and max(-1, NaN) made the
    interval [-1, 1]. Kappa 1 from a few items now has no interval, and says why."""
    a = [2, 1, 1, 1, 3, 2, 3]
    for interval in ("asymptotic", "bootstrap"):
        with pytest.raises(ValueError, match="every one of the 7 items agrees exactly"):
            cohen_kappa(a, a, "quadratic", interval=interval, rng=0)  # type: ignore[arg-type]
    one_off = cohen_kappa(a, [2, 1, 1, 2, 3, 2, 3], "quadratic", rng=0)
    assert -1 < one_off.ci_low < one_off.kappa <= one_off.ci_high <= 1


@pytest.mark.parametrize("level", ["ordinal", "interval", "ratio"])
def test_krippendorff_continuous_scores_need_memory_linear_in_values(level: str) -> None:
    """Issue 33: 3 coders × 2,000 continuous units (6,000 distinct values) took 1.3 GB as
    values × values matrices; a block at a time it stays under 40 MB (tracemalloc sees numpy's
    allocations). The value is the one the smaller-domain path (and the package) gives."""
    import tracemalloc

    import krippendorff

    rng = np.random.default_rng(33)
    truth = rng.normal(6, 1.3, size=2000)
    data = truth + rng.normal(0, 0.5, size=(3, truth.size))
    assert np.unique(data).size == 6000
    tracemalloc.start()
    try:
        res = krippendorff_alpha(data, level)  # type: ignore[arg-type]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40e6, f"{peak / 1e6:.0f} MB"
    assert 0.5 < res.alpha < 1
    small = data[:, :150]
    ref = krippendorff.alpha(reliability_data=small, level_of_measurement=level)
    assert krippendorff_alpha(small, level).alpha == pytest.approx(ref, abs=1e-9)  # type: ignore[arg-type]


def test_kappa_of_a_positional_judge_is_undefined_not_zero_to_zero() -> None:
    """Judged in both orders, a judge that always picks the first-shown arm gives each item one
    agreement and one disagreement with the gold: kappa is exactly 0 in every resample of the
    items, which used to be reported as 0 [0, 0]."""
    gold = np.repeat(np.where(np.arange(30) % 3 == 0, "A", "B"), 2)
    picked = np.tile(["A", "B"], 30)
    with pytest.raises(ValueError, match="no spread"):
        cohen_kappa(picked, gold, clusters=np.repeat(np.arange(30), 2), rng=0)


def test_kappa_of_a_stack_of_tables_is_each_tables_kappa() -> None:
    """More tables than are weighed at once, each one's kappa as the formula gives it alone;
    and the tables of each cluster counted as ``np.bincount`` counts them."""
    from jurybox.stats import kappa_ci
    from jurybox.stats.clustered import cluster_codes

    rng = np.random.default_rng(8)
    k = 6
    weights = kappa_ci.disagreement_weights(k, "quadratic")
    stack = rng.integers(0, 4, (kappa_ci._TABLES_AT_ONCE * 2 + 17, k, k)).astype(float)
    total = stack.sum(axis=(-2, -1))
    row, col = stack.sum(axis=-1) / total[:, None], stack.sum(axis=-2) / total[:, None]
    observed = np.sum(stack * weights, axis=(-2, -1)) / total
    expected = np.einsum("...i,ij,...j->...", row, weights, col)
    assert np.array_equal(kappa_ci.kappa_of_tables(stack, weights), 1 - observed / expected)
    assert kappa_ci.kappa_of_tables(stack[0], weights).shape == ()
    a, b = rng.integers(0, k, 500), rng.integers(0, k, 500)
    clusters = rng.integers(0, 40, 500)
    tables = kappa_ci.tables_by_cluster(a, b, k, clusters)
    cells = (cluster_codes(clusters, 500) * k + a) * k + b
    assert tables.dtype == np.float64
    assert np.array_equal(tables.ravel(), np.bincount(cells, minlength=tables.size))
