"""Analysis options: the knobs of ``analyze_records`` in one frozen value.

The thresholds of the trust verdict (``TrustThresholds``, documented in ``jurybox.analysis.trust``)
ride along here so that a user can make the verdict stricter or looser
without editing code, and so that the report can echo exactly which thresholds it applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from jurybox.config import JudgeConfig
from jurybox.thresholds import TrustThresholds


@dataclass(frozen=True)
class AnalysisOptions:
    """Options of ``analyze_records``.

    Attributes:
        control_arm: Arm treated as control in treatment effects. Default: the first arm of the
            first item, else an arm named "control", else the first arm seen in the records.
        treatment_arm: Arm compared with control. Default: the other arm (two-arm data only).
        alpha: Significance level of every test and of Holm's adjustment.
        confidence: Level of every confidence interval.
        equivalence_margin: TOST margin in score points (symmetric) on items marked normal.
        judge_families: Judge name -> model family, matched against dataset ``authors`` for
            self-enhancement; judges not listed fall back to the record's ``judge_vendor``.
        verbosity_unit_chars: Response length is expressed in units of this many characters in
            the OLS coefficient, so that the slope is readable.
        min_items: Fewest paired items a subgroup (category, difficulty) needs to be tested.
        seed: Seed of every stochastic step (bootstrap intervals, Dawid-Skene initialisation).
        score_scale: The rubric's declared (min, max) integer scale: weighted kappa and AC2 on
            scores weigh disagreements over every point of it, used or not. Without it, the
            span of the integer scores observed stands in (the report's ``method`` says which).
        thresholds: Where the trust verdict's checks pass, warn or fail (``TrustThresholds``).
        run_judges: The run's judges by name, as configured (``jurybox analyze`` reads them from
            the run's manifest.json): what batch records saved is priced at their synchronous
            prices. A judge not listed is assumed to have had the vendors' 50% batch discount.
        stopping: The manifest's ``until`` entry of a ``jurybox run --until`` run (where each
            judge stopped, with its anytime-valid interval): the report's ``stopping``, and the
            interval the accuracy check reads for a judge it stopped. None: no early stop.
    """

    control_arm: str | None = None
    treatment_arm: str | None = None
    alpha: float = 0.05
    confidence: float = 0.95
    equivalence_margin: float = 0.5
    judge_families: Mapping[str, str] = field(default_factory=dict)
    verbosity_unit_chars: int = 100
    min_items: int = 5
    seed: int = 0
    score_scale: tuple[int, int] | None = None
    thresholds: TrustThresholds = field(default_factory=TrustThresholds)
    run_judges: Mapping[str, JudgeConfig] = field(default_factory=dict)
    stopping: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence}")
        if self.equivalence_margin <= 0:
            raise ValueError(f"equivalence_margin must be > 0, got {self.equivalence_margin}")
        if self.verbosity_unit_chars <= 0:
            raise ValueError("verbosity_unit_chars must be > 0")
        if self.min_items < 2:
            raise ValueError(f"min_items must be >= 2, got {self.min_items}")
        if self.score_scale is not None and not self.score_scale[0] < self.score_scale[1]:
            raise ValueError(
                f"score_scale must be (min, max) with min < max, got {self.score_scale}"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready echo of the options, for the report."""
        # The run's own settings and stop are its manifest's (and the report's ``stopping``).
        data = asdict(replace(self, run_judges={}, stopping=None))
        del data["run_judges"], data["stopping"]
        data["judge_families"] = dict(self.judge_families)
        data["thresholds"] = self.thresholds.model_dump()
        data["score_scale"] = list(self.score_scale) if self.score_scale is not None else None
        return data
