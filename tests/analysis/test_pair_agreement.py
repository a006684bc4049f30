"""The agreement family's judge pairs, computed all at once, equal the per-pair reference loop
(``stats.cohen_kappa`` and ``stats.percent_agreement`` through ``attempt``, as before issue 19),
field by field, reasons and warnings included."""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import pytest

from jurybox import stats
from jurybox.analysis._common import attempt, with_fields
from jurybox.analysis.agreement import Scale, _pair_metrics, agreement_block
from jurybox.analysis.model.agreement import AgreementBlock, PairAgreement
from jurybox.analysis.model.metrics import KappaMetric, PercentAgreementMetric
from jurybox.analysis.options import AnalysisOptions

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # degenerate reference pairs


def _reference(matrix: pd.DataFrame, options: AnalysisOptions, scale: Scale) -> list[Any]:
    weights, categories, note = scale
    out = []
    for first, second in combinations(matrix.columns, 2):
        both = matrix[[first, second]].dropna()
        a, b, n = both[first].to_numpy(), both[second].to_numpy(), len(both)
        conf = options.confidence
        kappa = attempt(
            KappaMetric,
            stats.cohen_kappa,
            a,
            b,
            weights,
            categories=categories,
            n=n,
            confidence=conf,
            interval="asymptotic",
        )
        if note and kappa.method is not None:
            kappa = with_fields(kappa, method=f"{kappa.method}; {note}")
        share = attempt(PercentAgreementMetric, stats.percent_agreement, a, b, n=n, confidence=conf)
        out.append(
            PairAgreement(
                raters=[str(first), str(second)], cohen_kappa=kappa, percent_agreement=share
            )
        )
    return out


def _same(want: Any, got: Any, path: str = "") -> None:
    if isinstance(want, dict):
        assert want.keys() == got.keys(), path
        for key in want:
            _same(want[key], got[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert len(want) == len(got), path
        for index, (w, g) in enumerate(zip(want, got, strict=True)):
            _same(w, g, f"{path}[{index}]")
    elif isinstance(want, float) and isinstance(got, float):
        assert math.isclose(want, got, rel_tol=1e-12, abs_tol=1e-12), (path, want, got)
    else:
        assert want == got, (path, want, got)


def _judges(rng: np.random.Generator, labels: list[Any], units: int, judges: int) -> pd.DataFrame:
    """Judges who mostly copy judge 0 (perfect and near-perfect pairs), miss some units, one who
    uses a single label and one who shares no unit with judge 0."""
    base = rng.choice(np.array(labels, dtype=object), size=units)
    columns = {}
    for j in range(judges):
        own = rng.choice(np.array(labels, dtype=object), size=units)
        copy = rng.random(units) < (1.0 if j == 1 else 0.7)
        column = np.where(copy, base, own).astype(object)
        column[rng.random(units) < 0.15] = None
        columns[f"judge-{j:02d}"] = column
    columns[f"judge-{judges - 2:02d}"][:] = labels[0]
    late = columns[f"judge-{judges - 1:02d}"]
    late[: units // 2] = None
    columns["judge-00"][units // 2 :] = None
    return pd.DataFrame(columns)


@pytest.mark.parametrize(
    ("labels", "scale"),
    [
        (["control", "treatment", "tie"], (None, None, "")),
        ([1.0, 2.0, 3.0, 4.0, 5.0], ("linear", [1, 2, 3, 4, 5], "over the declared scale 1-5")),
        ([2.0, 3.0], ("linear", [1, 2, 3, 4], "over the declared scale 1-4")),
        ([1.0, 2.5, 3.0], ("linear", [1, 2, 3], "off the scale: every pair by the reference")),
        ([1, "a"], (None, None, "")),  # labels that cannot be sorted: the reference's reason
    ],
)
def test_pairs_equal_the_reference(labels: list[Any], scale: Scale) -> None:
    rng = np.random.default_rng(7)
    options = AnalysisOptions(confidence=0.9)
    for units in (1, 6, 40):
        matrix = _judges(rng, labels, units, judges=7)
        if all(isinstance(label, float) for label in labels):
            matrix = matrix.astype(float)
        got = [p.model_dump(mode="json") for p in _pair_metrics(matrix, options, scale)]
        want = [p.model_dump(mode="json") for p in _reference(matrix, options, scale)]
        _same(want, got)


def test_pairs_whose_items_repeat_count_items() -> None:
    """Both orders of every item rated alike: each pair's kappa is the bootstrap over items and
    its agreement's interval counts the 30 items, wider than Wilson over the 60 units."""
    rng = np.random.default_rng(3)
    items = 30
    truth = rng.choice(np.array(["A", "B", "tie"], dtype=object), size=items)
    columns = {}
    for j in range(3):
        own = np.where(rng.random(items) < 0.75, truth, rng.choice(truth, size=items))
        columns[f"judge-{j}"] = np.repeat(own, 2)  # the second order repeats the first
    index = pd.MultiIndex.from_product([[f"q{i:02d}" for i in range(items)], [0, 1]])
    matrix = pd.DataFrame(columns, index=index.set_names(["query_id", "order"]))
    options = AnalysisOptions(seed=5)
    for pair in _pair_metrics(matrix, options, (None, None, "")):
        kappa, share = pair.cohen_kappa, pair.percent_agreement
        assert kappa.n_clusters == items and share.n_clusters == items
        a, b = matrix[pair.raters[0]].to_numpy(), matrix[pair.raters[1]].to_numpy()
        want = stats.cohen_kappa(a, b, clusters=matrix.index.get_level_values(0), rng=5)
        assert (kappa.ci_low, kappa.ci_high) == (want.ci_low, want.ci_high)
        wilson = stats.percent_agreement(a, b)
        assert share.ci_high - share.ci_low > wilson.ci_high - wilson.ci_low
    block = agreement_block(matrix, "nominal", options, AgreementBlock)
    every = block.percent_agreement
    assert every is not None and every.n_clusters == items
    assert every.design_effect == pytest.approx(2.0)  # both orders alike: half the units
