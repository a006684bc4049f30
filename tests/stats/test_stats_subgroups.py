"""Treatment × subgroup heterogeneity against scipy's Kruskal–Wallis and Wilcoxon + Holm."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from jurybox.stats import subgroup_heterogeneity


def test_matches_scipy_and_statsmodels() -> None:
    rng = np.random.default_rng(11)
    groups = {"easy": rng.normal(0.0, 1, 40), "hard": rng.normal(1.0, 1, 35), "code": np.zeros(5)}
    res = subgroup_heterogeneity(groups)
    kw = sps.kruskal(*groups.values())
    assert res.statistic == pytest.approx(kw.statistic)
    assert res.p_value == pytest.approx(kw.pvalue)
    assert res.df == 2
    raw = [sps.wilcoxon(groups["easy"]).pvalue, sps.wilcoxon(groups["hard"]).pvalue, 1.0]
    assert [e.p_value for e in res.effects] == pytest.approx(raw)
    holm = multipletests(raw, method="holm")[1]
    assert [e.p_holm for e in res.effects] == pytest.approx(list(holm))
    assert [e.subgroup for e in res.effects] == ["easy", "hard", "code"]
    assert res.effects[1].median_difference == pytest.approx(np.median(groups["hard"]))


def test_planted_heterogeneity_is_detected() -> None:
    rng = np.random.default_rng(12)
    res = subgroup_heterogeneity({"a": rng.normal(0, 1, 60), "b": rng.normal(1.2, 1, 60)})
    assert res.p_value < 1e-4
    assert res.effects[1].p_holm < 0.01 < res.effects[0].p_holm
