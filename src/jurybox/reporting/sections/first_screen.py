"""The first screen: what was compared, the result as the trusted judges see it, what is missing
from the data, and each judge's level with its defining finding first.

Read from the verdict's checks as the analysis wrote them (``Report.verdict``): here they are
only ordered and put into words. A judge's defining finding is its most severe check, and among
checks of one status a failure to answer, then the position and order checks, come before
accuracy: a judge that always picks the first response shown is wrong *because* of it. Each
finding names the limit its status was decided against and the count it rests on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jurybox.analysis.model import Report
from jurybox.analysis.model.bias import PositionJudge
from jurybox.analysis.model.effects import PairedTests
from jurybox.analysis.model.metrics import CorrectedWinRateMetric
from jurybox.analysis.model.verdict import Check, Figure, JudgeVerdict
from jurybox.analysis.verdict import worse_subsets
from jurybox.reporting.view.format import (
    few_items,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_percent,
    fmt_score,
    fmt_value_ci,
)
from jurybox.reporting.view.tables import of_judge, present

SMALL_SAMPLE = 30  # fewer items (or labelled items) than this: every interval is wide
NO_CONCLUSION = "No trusted judge: no conclusion."
# Within a status, the finding that explains the others first (see the module docstring).
_SEVERITY: tuple[str, ...] = (
    "failure_rate",
    "position",
    "swap_consistency",
    "length",
    "self_preference",
)
_SEVERITY += ("accuracy", "kappa", "retest")
_STATUS_RANK = {"fail": 0, "warn": 1, "skipped": 2, "pass": 3}
_QUALITY = ("accuracy", "kappa")
_CONSEQUENCE = {"fail": "not trusted", "warn": "use with caution", "pass": "passes"}
_RUN_STATES = {
    "interrupted": "Interrupted run",
    "failed": "The run stopped on an error",
    "running": "The run had not finished (still running, or killed without a word)",
}


@dataclass(frozen=True)
class JudgeLine:
    """One judge on the first screen: its level, its defining finding, then the others."""

    judge: str
    level: str
    finding: str
    also: tuple[str, ...]


@dataclass(frozen=True)
class FirstScreen:
    """What the first screen says, in reading order."""

    compared: str
    result: tuple[str, ...]
    gaps: tuple[str, ...]  # what is missing from the data, said before any figure
    resume: str | None
    judges: tuple[JudgeLine, ...]


def first_screen(report: Report) -> FirstScreen:
    """The first screen of ``report``."""
    run = report.summary.run
    return FirstScreen(
        compared=compared_line(report),
        result=tuple(result_lines(report)),
        gaps=tuple(gaps(report)),
        resume=run.resume if run is not None else None,
        judges=tuple(judge_lines(report)),
    )


# --- what was compared, and the result ------------------------------------------------------


def labelled_items(report: Report) -> int | None:
    """How many items carry a gold or human label the judges were checked against."""
    gold = report.accuracy_vs_gold.judges or {}
    most: int = max((int(entry.consolidated.n_total or 0) for entry in gold.values()), default=0)
    if most:
        return most
    labels = report.summary.human_labels
    if labels.items is not None:  # reports before it was recorded: the label counts
        return labels.items or None
    return labels.preferences or labels.scores or None


def judge_labelled_items(report: Report, judge: str) -> int | None:
    """How many labelled items ``judge``'s accuracy (or κ) against the labels rests on."""
    gold = of_judge(report.accuracy_vs_gold.judges, judge)
    if gold is not None and gold.pooled.n_clusters:
        return int(gold.pooled.n_clusters)
    return labelled_items(report)


def compared_line(report: Report) -> str:
    """E.g. "Compared treatment against control on 39 items (20 labelled), by 3 judges
    (coin, first_pick, long_pick) in pairwise mode." ("Judged production on ..." for one arm)."""
    summary = report.summary
    if summary.control_arm and summary.treatment_arm:
        arms = f"Compared {summary.treatment_arm} against {summary.control_arm}"
    else:
        arms = f"Judged {', '.join(summary.arms) or 'the responses'}"
    labelled = labelled_items(report)
    names = ", ".join(judge.name for judge in summary.judges)
    noun = "judge" if len(summary.judges) == 1 else "judges"
    modes = " and ".join(summary.modes) or "no"
    return (
        f"{arms} on {summary.n_items} items ({labelled or 'none'} labelled), by "
        f"{len(summary.judges)} {noun} ({names}) in {modes} mode."
    )


def judge_result(report: Report, judge: str) -> str | None:
    """What ``judge`` says of the treatment: its win rate, else its score difference."""
    effects, summary = report.effects, report.summary
    contrast = f"{summary.treatment_arm} over {summary.control_arm}"
    rate = of_judge(effects.preferences.judges, judge) if effects.preferences else None
    if rate is not None and rate.value is not None:
        return f"{contrast} win rate {fmt_value_ci(rate.value, rate.ci_low, rate.ci_high)}"
    scores = of_judge(effects.scores.per_judge, judge) if effects.scores else None
    if isinstance(scores, PairedTests) and scores.mean_difference is not None:
        return f"{contrast} Δ total {fmt_score(scores.mean_difference)}"
    return None


def _corrected(report: Report, judge: str) -> str | None:
    """The judge's win rate corrected for its errors on the labelled pairs, where computed."""
    preferences = report.effects.preferences
    found = of_judge(preferences.corrected, judge) if preferences else None
    if not isinstance(found, CorrectedWinRateMetric) or found.value is None:
        return None
    shown = fmt_value_ci(found.value, found.ci_low, found.ci_high)
    return f"corrected for its errors on {found.n_labelled} labelled pairs: {shown}"


def result_lines(report: Report) -> list[str]:
    """Per trusted judge its result (and the error-corrected one), or no conclusion; where the
    effects were not computed (one arm, or arms that are no treatment and control), why, once."""
    trusted = [j for j, entry in report.verdict.judges.items() if entry.level == "trusted"]
    if not trusted:
        return [NO_CONCLUSION]
    effects = report.effects
    if not effects.computed and effects.reason:  # e.g. "a single arm (production): ..."
        return [f"{effects.reason[:1].upper()}{effects.reason[1:]}."]
    lines = []
    for judge in trusted:
        said = judge_result(report, judge) or "no treatment effect to state"
        corrected = _corrected(report, judge)
        lines.append(f"{judge}: {said}" + (f"; {corrected}" if corrected else ""))
    return lines


# --- what is missing ----------------------------------------------------------------------


def _run_gap(report: Report) -> str | None:
    run = report.summary.run
    if run is None or run.status not in _RUN_STATES:
        return None
    done = fmt_count(run.units_done, run.units_planned)
    if run.units_done is not None and run.units_planned:
        share = fmt_percent(run.units_done / run.units_planned)
        done = f"{run.units_done} of {run.units_planned} planned judgments done ({share})"
    return f"{_RUN_STATES[run.status]}: {done}; every figure here covers only those."


def _failed_gap(report: Report) -> str | None:
    summary = report.summary
    excluded = summary.excluded
    if not excluded.total:
        return None
    why = [f"{status} {n}" for status, n in excluded.by_status.items()]
    if excluded.holistic_fallback:
        why.append(f"holistic fallback {excluded.holistic_fallback}")
    redo = "provider_error" in excluded.by_status
    return (
        f"{excluded.total} of {summary.n_records} judgments failed ({', '.join(why)}): counted "
        "as wrong in accuracy and swap consistency where these say 'failures counted', left "
        f"out of every other figure{'; --resume redoes the failed calls' if redo else ''}."
    )


def gap_lines(report: Report) -> Iterator[str]:
    """An interrupted run, pairs judged in one order only, failed calls and small samples."""
    summary = report.summary
    one_order = summary.one_order or {}
    if one_order:
        each = ", ".join(f"{judge} {n}" for judge, n in one_order.items())
        yield (
            f"Pairs judged in one presentation order only ({each}): swap consistency and "
            "the position test leave them out."
        )
    if summary.n_items < SMALL_SAMPLE:
        yield f"Only {summary.n_items} items (under {SMALL_SAMPLE}): every interval is wide."
    labelled = labelled_items(report)
    if labelled and labelled < SMALL_SAMPLE:
        yield (
            f"Only {labelled} labelled items (under {SMALL_SAMPLE}): accuracy, and so every "
            "trust level, rests on them."
        )


def gaps(report: Report) -> list[str]:
    """What is missing from the data, the run's state first."""
    first = [line for line in (_run_gap(report), _failed_gap(report)) if line is not None]
    return [*first, *gap_lines(report)]


# --- each judge's findings ------------------------------------------------------------------


def position_of(report: Report, judge: str) -> PositionJudge | None:
    """The judge's position-bias entry, where measured."""
    judges = report.bias.position.judges if report.bias.position else None
    return of_judge(judges, judge)


def _limit(check: Check, level: str) -> str:
    """The limit the check's status was decided against, and what it meant for the level (a
    moderate length or self-preference pull beside a shown accuracy is reported only)."""
    limit = check.applied if check.applied is not None else check.threshold
    if limit is None or check.status == "skipped":
        return ""
    shown = fmt_percent(limit) if check.check == "failure_rate" else fmt_num(limit, 2)
    meant = _CONSEQUENCE[check.status]
    if check.status == "warn" and level == "trusted":
        meant = "reported, the level kept"
    return f" (limit {shown}: {meant})"


def _position_words(report: Report, entry: JudgeVerdict, check: Check, judge: str) -> str | None:
    rate = present(shown.first_position_rate) if (shown := position_of(report, judge)) else None
    test = entry.position
    if rate is None or rate.value is None or test is None:
        return None
    side, share = ("first", rate.value) if test.effect > 0 else ("second", 1 - rate.value)
    beyond = "beyond the labels" if test.conditioned_on_truth else "raw"
    return (
        f"picks the {side} response shown in {fmt_percent(share)} of {rate.n} decisive "
        f"verdicts; effect {beyond} {fmt_num(abs(test.effect), 2)}, Holm p {fmt_p(test.p_holm)}"
    )


def _swap_words(report: Report, judge: str, check: Check) -> str | None:
    swap = present(entry.swap_consistency) if (entry := position_of(report, judge)) else None
    if swap is None or check.value is None:
        return None
    return (
        f"gives the same verdict in both presentation orders in {fmt_percent(check.value)} of "
        f"{swap.n_pairs_total} pairs, failures counted"
    )


def _accuracy_words(report: Report, judge: str, entry: JudgeVerdict) -> str | None:
    gold = of_judge(report.accuracy_vs_gold.judges, judge)
    accuracy = entry.accuracy
    if gold is None or accuracy is None or not gold.pooled.n_total:
        return None
    interval = _interval(accuracy)
    few = few_items(judge_labelled_items(report, judge))
    return (
        f"agrees with the labels in {fmt_percent(accuracy.value)} of {gold.pooled.n_total} "
        f"labelled judgments ({interval}){few}, failures counted"
    )


def _pass_fail_words(entry: JudgeVerdict) -> str | None:
    """A Pass/Fail judge's TNR and TPR against the human labels; the check read the worse."""
    found = entry.pass_fail
    if found is None:
        return None

    return (
        f"catches {fmt_percent(found.tnr.value)} of failures (TNR, {_interval(found.tnr)}) and "
        f"passes {fmt_percent(found.tpr.value)} of passes (TPR, {_interval(found.tpr)}) over "
        f"{found.n_items} labelled items{few_items(found.n_items)}, failures counted"
    )


def _interval(figure: Figure) -> str:
    return f"95% CI {fmt_num(figure.ci_low, 2)}–{fmt_num(figure.ci_high, 2)}"


def _failure_words(report: Report, judge: str, check: Check) -> str:
    failures = report.summary.failures.get(judge)
    if failures is None:
        return check.message
    if failures.n_failed >= failures.n_records:
        return f"never answers: all {failures.n_records} of its calls failed"
    return f"{failures.n_failed} of its {failures.n_records} calls failed"


def finding(report: Report, judge: str, entry: JudgeVerdict, check: Check) -> str:
    """One check in words, with the count it rests on and the limit that applied."""
    words: str | None = None
    if check.check == "failure_rate":
        words = _failure_words(report, judge, check)
    elif check.check == "position":
        words = _position_words(report, entry, check, judge)
    elif check.check == "swap_consistency":
        words = _swap_words(report, judge, check)
    elif check.check == "accuracy" and check.status != "skipped":
        words = _accuracy_words(report, judge, entry) or _pass_fail_words(entry)
    if words is None:
        words = check.message + _over(report, judge, entry, check)
    return words + _limit(check, entry.level)


def _over(report: Report, judge: str, entry: JudgeVerdict, check: Check) -> str:
    """The items a check's figure rests on: none for a check that could not be made; κ against
    the humans, and a length pull beyond the labels, rest on the labelled items only."""
    if check.status == "skipped":
        return ""
    beyond = entry.length is not None and entry.length.conditioned_on_truth
    if check.check == "kappa" or (check.check == "length" and beyond):
        labelled = judge_labelled_items(report, judge)
        return f", over its {labelled} labelled items" if labelled else ""
    return f", over {entry.n_items} items"


def _defining(entry: JudgeVerdict) -> list[Check]:
    """The checks that did not pass, most severe first (an untested accuracy among them; other
    untested checks are left to the checks table); for a trusted judge, the accuracy it showed
    first."""
    shown = [
        c
        for c in entry.checks
        if c.status in ("fail", "warn") or (c.status == "skipped" and c.check in _QUALITY)
    ]
    shown.sort(key=lambda c: (_STATUS_RANK[c.status], _rank(c.check)))
    quality = [c for c in entry.checks if c.check in _QUALITY and c.status == "pass"][:1]
    # A trusted judge is defined by the accuracy it showed; a warning beside it follows.
    return [*quality, *shown] if entry.level == "trusted" or not shown else shown


def _rank(check: str) -> int:
    return _SEVERITY.index(check) if check in _SEVERITY else len(_SEVERITY)


def judge_findings(report: Report, judge: str, entry: JudgeVerdict) -> list[str]:
    """The judge's findings in words, its defining one first, then the subsets of an import
    on which it alone is at a worse level than pooled."""
    if entry.level == "insufficient_evidence" and not entry.has_labels:
        return [f"{entry.reason}, over {entry.n_items} items"]
    found = [finding(report, judge, entry, check) for check in _defining(entry)]
    return (found or [entry.reason]) + _subset_findings(report, judge)


def _subset_findings(report: Report, judge: str) -> list[str]:
    return [
        f"{alone.level.replace('_', ' ')} on the subset {name} alone ({alone.n_items} items): "
        f"{alone.reason}"
        for name, alone in worse_subsets(report.verdict, judge)
    ]


def judge_lines(report: Report) -> Iterator[JudgeLine]:
    """Every judge, most trusted first, with its defining finding first."""
    for judge, entry in report.verdict.judges.items():
        first, *also = judge_findings(report, judge, entry)
        yield JudgeLine(judge, entry.level, first, tuple(also))
