"""Spearman and partial Spearman against scipy and the textbook partial-correlation formula."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from jurybox.stats import partial_spearman, spearman


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=60)
    x = z + rng.normal(size=60)
    y = 0.5 * x + z + rng.normal(size=60)
    return x, y, z


def test_spearman_matches_scipy() -> None:
    x, y, _ = _data()
    res = spearman(x, y)
    expected = sps.spearmanr(x, y)
    assert res.rho == pytest.approx(expected.statistic)
    assert res.p_value == pytest.approx(expected.pvalue)
    se = np.sqrt((1 + res.rho**2 / 2) / 57)
    assert res.ci_low == pytest.approx(np.tanh(np.arctanh(res.rho) - 1.959963984540054 * se))
    assert res.n_covariates == 0


def test_partial_spearman_first_order_formula() -> None:
    """Conover (1999) §5.4, on ranks: r_xy.z = (r_xy - r_xz r_yz) / √((1 - r_xz²)(1 - r_yz²))."""
    x, y, z = _data(1)
    rxy, rxz, ryz = (sps.spearmanr(a, b).statistic for a, b in ((x, y), (x, z), (y, z)))
    expected = (rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2))
    res = partial_spearman(x, y, z)
    assert res.rho == pytest.approx(expected)
    t = expected * np.sqrt(57 / (1 - expected**2))
    assert res.p_value == pytest.approx(2 * sps.t.sf(abs(t), 57))
    assert res.ci_low < res.rho < res.ci_high and res.n_covariates == 1


def test_partial_spearman_two_covariates() -> None:
    x, y, z = _data(2)
    w = np.random.default_rng(9).normal(size=60)
    res = partial_spearman(x, y, np.column_stack([z, w]))
    assert res.n_covariates == 2 and -1 < res.rho < 1
