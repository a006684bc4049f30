"""``Report``: the whole analysis report, one model per family, and its JSON Schema."""

from __future__ import annotations

from typing import Any, Literal

from jurybox.analysis.model._base import Model, Number
from jurybox.analysis.model.accuracy import AccuracyVsGold
from jurybox.analysis.model.agreement import Agreement
from jurybox.analysis.model.benchmarks import BenchmarkFigures
from jurybox.analysis.model.bias import Bias
from jurybox.analysis.model.effects import Effects
from jurybox.analysis.model.human import HumanCalibration
from jurybox.analysis.model.panels import Panels
from jurybox.analysis.model.reliability import Reliability
from jurybox.analysis.model.stopping import Stopping
from jurybox.analysis.model.summary import Summary
from jurybox.analysis.model.verdict import Verdict
from jurybox.thresholds import TrustThresholds


class GeneratedBy(Model):
    """The package and version that wrote the report."""

    package: str
    version: str


class Options(Model):
    """Echo of the ``AnalysisOptions`` the report applied."""

    control_arm: str | None
    treatment_arm: str | None
    alpha: Number
    confidence: Number
    equivalence_margin: Number
    judge_families: dict[str, str]
    verbosity_unit_chars: int
    min_items: int
    seed: int
    thresholds: TrustThresholds
    score_scale: list[int] | None = None


class Report(Model):
    """The analysis report (``analysis_report.json`` is its ``model_dump(mode="json")``)."""

    schema_version: Literal[1]
    generated_by: GeneratedBy
    options: Options
    summary: Summary
    verdict: Verdict
    agreement: Agreement
    bias: Bias
    effects: Effects
    reliability: Reliability
    human_calibration: HumanCalibration
    panels: Panels
    accuracy_vs_gold: AccuracyVsGold
    # Only for imported benchmark verdicts: their figures as each benchmark publishes them.
    benchmarks: BenchmarkFigures | None = None
    # Only for a `jurybox run --until` run: where each judge stopped, on anytime-valid intervals.
    stopping: Stopping | None = None


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``Report``, generated from the model."""
    schema = Report.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
