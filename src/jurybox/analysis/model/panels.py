"""The ``panels`` family: several judges combined into one verdict."""

from __future__ import annotations

from typing import ClassVar

from jurybox.analysis.model._base import Label, Model, Number, Section, Skipped
from jurybox.analysis.model.metrics import ProportionMetric, WinRateMetric


class Majority(Model):
    """The panel's strict-plurality labels, and their accuracy against gold where there is one."""

    n_items: int
    counts: dict[str, int]
    no_majority: int
    accuracy_vs_gold: ProportionMetric | None = None


class MajorityVote(Section):
    """Majority vote over preferences and criterion verdicts."""

    method: str | None = None
    preferences: Majority | None = None
    verdicts: Majority | None = None


class ArmScore(Model):
    """An arm's panel score: mean of the judges' means, and of their z-scores."""

    mean: Number | None
    n_items: int
    z_mean: Number | None


class ScorePanel(Section):
    """The panel's mean and z-normalised mean score per arm."""

    arms: dict[str, ArmScore] | None = None
    judges_without_spread: list[str] | None = None
    method: str | None = None


class BordaBlock(Model):
    """A Borda count: ranking best first, points per candidate."""

    ranking: list[Label]
    scores: dict[str, Number]
    n_rankings: int
    method: str


class Borda(Section):
    """Borda count of the panel and of each judge."""

    panel: BordaBlock | Skipped | None = None
    judges: dict[str, BordaBlock | Skipped] | None = None


class JudgeAccuracy(Model):
    """A judge's accuracy as Dawid-Skene estimates it."""

    accuracy: Number | None


class DawidSkeneBlock(Model):
    """Dawid-Skene estimates of one kind of label."""

    judges: dict[str, JudgeAccuracy]
    priors: dict[str, Number | None]
    label_counts: dict[str, int]
    n_items: int
    converged: bool
    n_iter: int
    log_likelihood: Number | None
    method: str


class DawidSkene(Section):
    """Dawid-Skene over preferences and criterion verdicts."""

    preferences: DawidSkeneBlock | Skipped | None = None
    verdicts: DawidSkeneBlock | Skipped | None = None


class WinRateRow(WinRateMetric):
    """How often ``arm`` beats ``opponent`` according to ``rater``."""

    arm: str
    opponent: str
    rater: str
    source: str

    leading: ClassVar[tuple[str, ...]] = ("arm", "opponent", "rater", "source")


class WinRates(Section):
    """Pairwise win rates between arms, per judge and for the panel."""

    pairs: list[WinRateRow] | None = None
    tie_policy: str | None = None


class Panels(Section):
    """The panel family."""

    majority_vote: MajorityVote | None = None
    scores: ScorePanel | None = None
    borda: Borda | None = None
    dawid_skene: DawidSkene | None = None
    win_rates: WinRates | None = None
