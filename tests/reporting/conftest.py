"""Fixtures: synthetic worlds analysed once per session, and their written report folders."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jurybox.analysis import AnalysisFrame, AnalysisOptions
from jurybox.analysis.model import Report
from jurybox.analysis.model.bias import SwapConsistency
from jurybox.app import build_report
from jurybox.reporting import ReportPaths, write_reports

from .cdp import Chromium, start_chromium
from .synthetic import World, pairwise_world, rubric_world


@dataclass
class Built:
    world: World
    report: Report
    frame: AnalysisFrame
    paths: ReportPaths


def _build(world: World, out: Path) -> Built:
    report, frame = build_report(
        world.records, human=world.human, items=world.items, options=AnalysisOptions()
    )
    paths = write_reports(report, frame, out, records=world.records, source="synthetic.jsonl")
    return Built(world, report, frame, paths)


def swap_consistency(report: Report, judge: str) -> SwapConsistency:
    """A judge's swap consistency (computed) from a report's position bias."""
    position = report.bias.position
    assert position is not None and position.judges is not None
    swap = position.judges[judge].swap_consistency
    assert isinstance(swap, SwapConsistency)
    return swap


@pytest.fixture(scope="session")
def rubric(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _build(rubric_world(), tmp_path_factory.mktemp("rubric"))


@pytest.fixture(scope="session")
def pairwise(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _build(pairwise_world(), tmp_path_factory.mktemp("pairwise"))


@pytest.fixture(params=["rubric", "pairwise"])
def built(request: pytest.FixtureRequest) -> Built:
    value: Built = request.getfixturevalue(request.param)
    return value


@pytest.fixture(scope="session")
def browser() -> Iterator[Chromium]:
    chromium = start_chromium()
    try:
        yield chromium
    finally:
        chromium.close()
