"""The ``verdict`` section: can these judges be trusted for this comparison? One answer per judge.

Built by ``jurybox.analysis.verdict`` from the rules of ``jurybox.analysis.trust``. Every accuracy
and consistency figure is given two ways: failures counted as wrong / inconsistent (the headline,
as published benchmarks count them) and over parsed verdicts only (``*_parsed``).
"""

from __future__ import annotations

from typing import Literal

from jurybox.analysis.model._base import Model, Number

Level = Literal["trusted", "use_with_caution", "not_trusted", "insufficient_evidence"]
CheckStatus = Literal["pass", "warn", "fail", "skipped"]


class Check(Model):
    """One trust check of one judge; ``value`` is what was observed, ``threshold`` the limit it
    must meet to pass, ``applied`` the limit its status was decided against (the stricter
    not-trusted limit for a ``fail``; absent in reports written before it was recorded)."""

    check: str
    judge: str | None
    status: CheckStatus
    value: Number | None
    threshold: Number | None
    message: str
    applied: Number | None = None


class Figure(Model):
    """A share with its confidence interval (None where it could not be measured)."""

    value: Number
    ci_low: Number
    ci_high: Number


class PassFailFigure(Model):
    """A Pass/Fail judge against the human labels, failures counted as wrong: TPR over the
    Pass-labelled responses, TNR over the Fail-labelled ones, each interval over items; the
    accuracy check reads the worse of the two."""

    tpr: Figure
    tnr: Figure
    n_items: int
    method: str


class BiasFigure(Model):
    """A bias effect on [-1, 1] and its p-value, Holm-adjusted across judges and tests."""

    effect: Number
    p_holm: Number
    conditioned_on_truth: bool


class JudgeVerdict(Model):
    """One judge's level, its one-line reason, the checks behind it, and the figures they read.

    ``reasons``: messages of the checks that did not pass, most severe first.
    """

    level: Level
    reason: str
    reasons: list[str]
    checks: list[Check]
    n_items: int
    n_judgments: int
    failure_rate: Number
    has_labels: bool
    positions_shown: bool
    accuracy: Figure | None
    accuracy_parsed: Figure | None
    kappa: Figure | None
    kappa_is_icc: bool = False  # kappa holds the ICC(2,1) of the total (fractional human scores)
    swap_consistency: Number | None
    swap_consistency_parsed: Number | None
    swap_consistency_interval: Figure | None = None
    position: BiasFigure | None
    length: BiasFigure | None
    self_preference: BiasFigure | None
    retest_agreement: Number | None
    retest_is_icc: bool
    # Only for a `--until decided` run: the anytime-valid interval the accuracy check read.
    accuracy_anytime: Figure | None = None
    # Only for a Pass/Fail (criterion) judge with both classes labelled.
    pass_fail: PassFailFigure | None = None


class SubsetLevel(Model):
    """One judge's level on one subset of an import alone (e.g. LLMBar's FairEval)."""

    level: Level
    reason: str
    n_items: int
    accuracy: Figure | None


class Verdict(Model):
    """The per-judge answers, most trusted first, and the panel line derived from them.

    ``level`` is the weakest judge's level (the panel's aggregated verdicts mix every judge);
    ``line`` names the judges that can be trusted on their own; ``reasons`` lists every judge's
    failed and warned checks, most severe first, each prefixed with the judge's name.
    """

    level: Level
    trustworthy: bool | None
    line: str
    answer: str
    reasons: list[str]
    checks: list[Check]
    judges: dict[str, JudgeVerdict]
    # An import spanning several subsets (item metadata ``subset``): subset -> judge -> its
    # level on that subset alone; ``answer`` names, per judge, the subsets where it is worse.
    subsets: dict[str, dict[str, SubsetLevel]] | None = None
