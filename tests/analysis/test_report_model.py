"""The typed report model reads every report the analysis writes, and writes it back unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from jurybox.analysis import analyze_records
from jurybox.analysis.model import Report, Skipped
from jurybox.analysis.model.bias import FirstPositionRate, SwapConsistency
from reporting.synthetic import pairwise_world, rubric_world

from .helpers import analyze
from .synth import JudgeSpec, make_world, pairwise_records, rubric_records
from .test_modes import _criterion_records, _ranking_records


def _planted_rubric() -> dict[str, Any]:
    rng = np.random.default_rng(7)
    world = make_world(120, rng, effect={"accuracy": 1.0}, human=True)
    judges = {
        "fair": JudgeSpec(family="gamma", confidence=True),
        "wordy": JudgeSpec(family="delta", verbosity=1.0),
        "selfish": JudgeSpec(family="alpha", self_bonus=1.5),
    }
    return analyze(rubric_records(world, judges, rng, retest_items=30), items=world.items)


def _planted_pairwise() -> dict[str, Any]:
    rng = np.random.default_rng(11)
    world = make_world(120, rng, effect={"accuracy": 3.0})
    judges = {"fair": JudgeSpec(noise=0.3, confidence=True), "lefty": JudgeSpec(first_bias=0.6)}
    return analyze(pairwise_records(world, judges, rng), items=world.items)


def _criterion() -> dict[str, Any]:
    records, human = _criterion_records(np.random.default_rng(3))
    return analyze(records, human=human)


def _demo_like(make: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        world = make()
        return analyze(world.records, human=world.human, items=world.items)

    return build


BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "planted_rubric": _planted_rubric,
    "planted_pairwise": _planted_pairwise,
    "ranking": lambda: analyze(_ranking_records(60, np.random.default_rng(2))),
    "criterion": _criterion,
    "empty": lambda: analyze([]),
    "demo_rubric": _demo_like(rubric_world),
    "demo_pairwise": _demo_like(pairwise_world),
}


def _bytes(report: dict[str, Any]) -> str:
    """What ``analysis_report.json`` holds for this report."""
    return json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def report(request: pytest.FixtureRequest) -> dict[str, Any]:
    return BUILDERS[request.param]()


def test_model_reads_and_writes_the_report_unchanged(report: dict[str, Any]) -> None:
    model = Report.model_validate(report)
    dumped = model.model_dump(mode="json")
    assert dumped == report
    assert _bytes(dumped) == _bytes(report)  # key order too: the file's bytes are unchanged


def test_attributes_are_typed() -> None:
    world = pairwise_world()
    model = analyze_records(world.records, human=world.human, items=world.items)
    assert model.bias.position is not None and model.bias.position.judges is not None
    for judge in model.bias.position.judges.values():
        swap = judge.swap_consistency
        assert isinstance(swap, SwapConsistency)
        assert swap.value is not None and 0 <= swap.value <= 1
        assert swap.n <= swap.n_pairs_total
        assert isinstance(judge.first_position_rate, FirstPositionRate | Skipped)
    assert model.agreement.preferences is not None and model.agreement.preferences.pairs
    kappa = model.agreement.preferences.pairs[0].cohen_kappa
    assert kappa.ci_low is not None and kappa.value is not None and kappa.ci_low <= kappa.value


def test_unknown_keys_are_rejected() -> None:
    report = BUILDERS["demo_pairwise"]()
    report["agreement"]["preferences"]["pairs"][0]["cohen_kappa"]["ci_lo"] = 0.1
    with pytest.raises(ValidationError, match="ci_lo"):
        Report.model_validate(report)


def test_model_is_frozen() -> None:
    model = Report.model_validate(BUILDERS["empty"]())
    with pytest.raises(ValidationError):
        model.summary.n_records = 3  # type: ignore[misc]
