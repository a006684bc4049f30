"""Many runs and comparisons at once (``jurybox view``): what each holds, and a leaderboard
where runs compared different models with one same model on the same items.

What the leaderboard shows, and why: a run's win rate is one judge's preference for one arm
over the other on that run's items, and it means something only where that run's own report
trusts the judge. So a row is one run, a model against the baseline model on the same item ids
as every other row of its board; a cell is the win rate (ties count half, Wilson interval, as
the run's report has it) of a judge that the run's report trusts, and only the level of one
it does not. Win rates are never pooled across judges or runs, and rows whose intervals
overlap are not ranked against each other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from jurybox import stats
from jurybox.analysis.model import Report
from jurybox.analysis.model.compare import CompareReport
from jurybox.analysis.model.effects import PreferenceWinRate
from jurybox.pipeline.manifest import RunManifest
from jurybox.stats.results import WinRateResult


@dataclass(frozen=True)
class ReportFound:
    """An analysis report (``analysis_report.json``) and the page beside it."""

    html: Path
    report: Report


@dataclass(frozen=True)
class ArmModels:
    """What a two-arm run compared: the model behind each arm (its ``authors`` entry where
    every item names the same one, else the arm's name) and the item ids judged."""

    control: str
    treatment: str
    items: frozenset[str]


@dataclass(frozen=True)
class RunFound:
    """A run folder (or, without ``manifest``, analysed judgments that have none: an import),
    its reports, and the commands that analyse it and carry it on."""

    folder: Path
    manifest: RunManifest | None
    reports: tuple[ReportFound, ...]
    analyse: str
    resume: str | None = None
    models: ArmModels | None = None
    problems: tuple[str, ...] = ()  # what could not be read, said on the page

    @property
    def report(self) -> ReportFound | None:
        return self.reports[0] if self.reports else None


@dataclass(frozen=True)
class ComparisonFound:
    """A ``jurybox compare`` folder: compare.json, its page and when it was written."""

    folder: Path
    html: Path
    report: CompareReport
    written: datetime


@dataclass(frozen=True)
class Standing:
    """One row of a leaderboard: ``model`` against the board's baseline in ``run``; per judge
    its win rate where the run's report trusts it, else its level there."""

    model: str
    run: RunFound
    win_rates: Mapping[str, WinRateResult]
    levels: Mapping[str, str]


@dataclass(frozen=True)
class Leaderboard:
    """Runs on the same item ids that each compared a model with ``baseline``."""

    baseline: str
    n_items: int
    judges: tuple[str, ...]
    rows: tuple[Standing, ...]
    confidence: float
    ordered_by: str | None  # the judge trusted on most rows: rows by its win rate, best first


@dataclass(frozen=True)
class Overview:
    """Everything ``jurybox view`` found under one folder."""

    folder: Path
    runs: tuple[RunFound, ...]
    comparisons: tuple[ComparisonFound, ...]
    leaderboards: tuple[Leaderboard, ...] = field(default=())


def leaderboards(runs: Iterable[RunFound]) -> tuple[Leaderboard, ...]:
    """A board per set of item ids on which two runs or more compared different models with
    one same model (the one most runs share)."""
    groups: dict[frozenset[str], list[RunFound]] = {}
    for run in runs:
        if run.models is not None and _preferences(run) is not None:
            groups.setdefault(run.models.items, []).append(run)
    boards = (_board(group) for group in groups.values())
    return tuple(board for board in boards if board is not None)


def _preferences(run: RunFound) -> dict[str, PreferenceWinRate] | None:
    found = run.report
    preferences = found.report.effects.preferences if found is not None else None
    return preferences.judges if preferences is not None else None


def _board(runs: Sequence[RunFound]) -> Leaderboard | None:
    models = [run.models for run in runs if run.models is not None]
    shared = Counter(name for arms in models for name in (arms.control, arms.treatment))
    baseline = max(sorted(shared), key=lambda name: shared[name])
    rows = [row for run in runs if (row := _standing(run, baseline)) is not None]
    if len({row.model for row in rows}) < 2:
        return None
    judges = tuple(dict.fromkeys(judge for row in rows for judge in row.levels))
    counted = Counter(judge for row in rows for judge in row.win_rates)
    ordered_by = max(judges, key=lambda judge: counted[judge]) if counted else None
    rows.sort(key=lambda row: _rank_key(row, ordered_by))
    confidence = rows[0].run.report.report.options.confidence if rows[0].run.report else 0.95
    return Leaderboard(baseline, len(models[0].items), judges, tuple(rows), confidence, ordered_by)


def _standing(run: RunFound, baseline: str) -> Standing | None:
    """The run as a row: the other model's win rate over ``baseline`` per trusted judge (the
    treatment's as the report has it, or recomputed with wins and losses swapped)."""
    models, found, judges = run.models, run.report, _preferences(run)
    if models is None or found is None or judges is None:
        return None
    if baseline not in (models.control, models.treatment):
        return None
    flip = models.treatment == baseline
    other = models.control if flip else models.treatment
    if other == baseline:
        return None
    verdicts = found.report.verdict.judges
    levels = {judge: verdict.level for judge, verdict in verdicts.items() if judge in judges}
    win_rates = {}
    for judge, level in levels.items():
        rate = judges[judge]
        if level == "trusted" and None not in (rate.wins, rate.losses, rate.ties):
            win_rates[judge] = _oriented(rate, flip, found.report.options.confidence)
    return Standing(other, run, win_rates, levels)


def _oriented(rate: PreferenceWinRate, flip: bool, confidence: float) -> WinRateResult:
    """The win rate of the treatment (``flip``: of the control) with its interval."""
    wins, losses, ties = int(rate.wins or 0), int(rate.losses or 0), int(rate.ties or 0)
    if flip:
        wins, losses = losses, wins
    return stats.win_rate_interval(wins, losses, ties, confidence=confidence, tie_policy="half")


def _rank_key(row: Standing, judge: str | None) -> tuple[float, str]:
    """Best first by ``judge``'s win rate; rows where it is not trusted last, by name."""
    rate = row.win_rates.get(judge) if judge is not None else None
    return (-rate.estimate if rate is not None else 1.0, row.model)
