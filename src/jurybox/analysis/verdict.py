"""The trust verdict: a plain-language answer to "can these judges be trusted for this
comparison?", built from the computed families.

Critical checks (a failure means "not trusted"): parse failure rate, swap consistency,
first-position preference significantly different from 0.5 (Holm across judges), judge-human
kappa. Warning checks (a failure means "use with caution"): provider failure rate, inter-judge
agreement, verbosity bias, self-enhancement, test-retest reliability, the bundled local judge.
A check whose input is absent is listed as skipped and named in the answer as untested.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from jurybox.analysis._common import TOTAL, value_of
from jurybox.analysis.model import Skipped
from jurybox.analysis.model.agreement import Agreement, AgreementBlock
from jurybox.analysis.model.bias import Bias, FirstPositionRate, PositionJudge, VerbosityJudge
from jurybox.analysis.model.human import HumanCalibration, HumanPreferenceJudge, HumanScoreJudge
from jurybox.analysis.model.metrics import ICCMetric
from jurybox.analysis.model.reliability import Reliability
from jurybox.analysis.model.self_enhancement import SelfPreference, SelfScores
from jurybox.analysis.model.summary import Summary
from jurybox.analysis.model.verdict import Check, JudgeVerdict, Level, Verdict
from jurybox.analysis.options import AnalysisOptions, VerdictThresholds

_CRITICAL = {"parse_failure_rate", "swap_consistency", "first_position_bias", "human_kappa"}
_LEVEL_WORDS = {
    "trusted": "Yes",
    "use_with_caution": "With caution",
    "not_trusted": "No",
    "insufficient_evidence": "Not enough evidence to say",
}


@dataclass(frozen=True)
class Evidence:
    """The computed sections the trust checks read."""

    summary: Summary
    agreement: Agreement
    bias: Bias
    reliability: Reliability
    human_calibration: HumanCalibration


def _check(
    name: str,
    judge: str | None,
    ok: bool | None,
    numbers: tuple[float | None, float | None],
    message: str,
) -> Check:
    """One check; ``numbers`` is (observed value, threshold)."""
    value, threshold = numbers
    if ok is None:
        status = "skipped"
    elif ok:
        status = "pass"
    else:
        status = "fail" if name in _CRITICAL else "warn"
    return Check(
        check=name, judge=judge, status=status, value=value, threshold=threshold, message=message
    )


def _failure_checks(report: Evidence, t: VerdictThresholds) -> Iterator[Check]:
    for judge, f in report.summary.failures.items():
        parse = f.parse_failure_rate
        yield _check(
            "parse_failure_rate",
            judge,
            None if parse is None else parse <= t.parse_failure_max,
            (parse, t.parse_failure_max),
            f"{judge}: {_pct(parse)} of answers could not be parsed",
        )
        rate = f.failure_rate
        if rate is not None and rate > t.parse_failure_max:
            yield _check(
                "failure_rate",
                judge,
                False,
                (rate, t.parse_failure_max),
                f"{judge}: {_pct(rate)} of judgments failed (all statuses but ok)",
            )


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _untested(reason: str | None, what: str) -> str:
    return f"{what} untested ({reason or 'no data'})"


def _position_judges(report: Evidence) -> dict[str, PositionJudge]:
    position = report.bias.position
    return (position.judges or {}) if position is not None and position.computed else {}


def _position_checks(report: Evidence, t: VerdictThresholds, alpha: float) -> Iterator[Check]:
    for judge, entry in _position_judges(report).items():
        swap = entry.swap_consistency
        value = value_of(swap)
        n = 0 if isinstance(swap, Skipped) else swap.n
        message = (
            f"{judge}: same verdict in both orders on {_pct(value)} of {n} pairs"
            if value is not None
            else _untested(swap.reason, f"{judge}: swap consistency")
        )
        yield _check(
            "swap_consistency",
            judge,
            None if value is None else value >= t.swap_consistency_min,
            (value, t.swap_consistency_min),
            message,
        )
        first = entry.first_position_rate
        p = first.p_holm if isinstance(first, FirstPositionRate) else None
        message = (
            f"{judge}: picks the first-shown response in {_pct(value_of(first))} of decisive "
            f"verdicts (Holm p = {p:.3g})"
            if p is not None
            else _untested(first.reason, f"{judge}: first-position preference")
        )
        yield _check(
            "first_position_bias",
            judge,
            None if p is None else p >= alpha,
            (value_of(first), alpha),
            message,
        )


def _human_judges(
    report: Evidence,
) -> tuple[dict[str, HumanPreferenceJudge], dict[str, HumanScoreJudge]]:
    human = report.human_calibration
    if not human.computed:
        return {}, {}
    prefs = human.preferences.judges if human.preferences and human.preferences.computed else None
    scores = human.scores.judges if human.scores and human.scores.computed else None
    return prefs or {}, scores or {}


def _human_checks(report: Evidence, t: VerdictThresholds) -> Iterator[Check]:
    prefs, scores = _human_judges(report)
    for judge, entry in prefs.items():
        kappa = value_of(entry.pooled)
        yield _check(
            "human_kappa",
            judge,
            None if kappa is None else kappa >= t.human_kappa_min,
            (kappa, t.human_kappa_min),
            f"{judge}: Cohen's kappa with human preferences = "
            f"{'n/a' if kappa is None else f'{kappa:.2f}'}",
        )
    for judge, score_entry in scores.items():
        for dim, metric in score_entry.dimensions.items():
            # Scores are ordinal: near misses count, so the quadratic-weighted kappa is judged.
            kappa = value_of(metric.weighted_quadratic)
            yield _check(
                "human_kappa",
                judge,
                None if kappa is None else kappa >= t.human_kappa_min,
                (kappa, t.human_kappa_min),
                f"{judge}: quadratic-weighted kappa with human {dim} scores = "
                f"{'n/a' if kappa is None else f'{kappa:.2f}'}",
            )
    if not prefs and not scores:
        yield _check(
            "human_kappa",
            None,
            None,
            (None, t.human_kappa_min),
            "no human labels: agreement with humans is untested",
        )


def _agreement_blocks(report: Evidence) -> dict[str, AgreementBlock | None]:
    agreement = report.agreement
    if not agreement.computed:
        return {}
    scores = agreement.scores
    total = (scores.dimensions or {}).get(TOTAL) if scores and scores.computed else None
    return {"preferences": agreement.preferences, f"{TOTAL} scores": total}


def _agreement_checks(report: Evidence, t: VerdictThresholds) -> Iterator[Check]:
    for name, block in _agreement_blocks(report).items():
        computed = block is not None and block.computed
        alpha = value_of(block.krippendorff_alpha) if block is not None and computed else None
        if alpha is not None:
            yield _check(
                "inter_judge_agreement",
                None,
                alpha >= t.inter_judge_alpha_min,
                (alpha, t.inter_judge_alpha_min),
                f"judges' Krippendorff alpha on {name} = {alpha:.2f}",
            )


def _verbosity_judges(report: Evidence) -> dict[str, VerbosityJudge]:
    bias = report.bias
    verbosity = bias.verbosity if bias.computed else None
    return (verbosity.judges or {}) if verbosity is not None and verbosity.computed else {}


def _self_judges(
    report: Evidence,
) -> tuple[dict[str, SelfScores], dict[str, SelfPreference]]:
    """Judges with a self-enhancement reading, on scores and on preferences."""
    bias = report.bias
    found = bias.self_enhancement if bias.computed else None
    if found is None or not found.computed:
        return {}, {}
    scores = {j: e for j, e in (found.judges or {}).items() if isinstance(e, SelfScores)}
    prefs = found.preferences
    by_pref = (prefs.judges or {}) if prefs is not None and prefs.computed else {}
    return scores, by_pref


def _content_checks(report: Evidence) -> Iterator[Check]:
    for judge, entry in _verbosity_judges(report).items():
        for kind, reading in (("scores", entry.scores), ("preferences", entry.preferences)):
            found = reading.detected if reading is not None else None
            if found is not None:
                yield _check(
                    "verbosity_bias",
                    judge,
                    not found,
                    (None, None),
                    f"{judge}: {'significant' if found else 'no significant'} "
                    f"length effect on {kind}",
                )
    by_scores, by_preference = _self_judges(report)
    readings: list[tuple[str, str, SelfScores | SelfPreference]] = [
        *(("scores", j, e) for j, e in by_scores.items()),
        *(("preferences", j, e) for j, e in by_preference.items()),
    ]
    for kind, judge, self_entry in readings:
        found = self_entry.detected
        if found is None:
            continue
        excess = (
            self_entry.excess
            if isinstance(self_entry, SelfPreference)
            else self_entry.relative_test.excess
        )
        yield _check(
            "self_enhancement",
            judge,
            not found,
            (excess, None),
            f"{judge}: {'favours' if found else 'does not favour'} its own family "
            f"({self_entry.family}) on {kind}",
        )


def _retest_judges(report: Evidence) -> dict[str, ICCMetric]:
    reliability = report.reliability
    retest = reliability.test_retest if reliability.computed else None
    return (retest.judges or {}) if retest is not None and retest.computed else {}


def _retest_checks(report: Evidence, t: VerdictThresholds) -> Iterator[Check]:
    for judge, metric in _retest_judges(report).items():
        icc = value_of(metric)
        if icc is not None:
            yield _check(
                "test_retest",
                judge,
                icc >= t.retest_icc_min,
                (icc, t.retest_icc_min),
                f"{judge}: test-retest ICC of the total = {icc:.2f}",
            )


def _local_checks(report: Evidence) -> Iterator[Check]:
    for judge in report.summary.judges:
        if judge.local_judge:
            yield _check(
                "local_judge",
                judge.name,
                False,
                (None, None),
                f"{judge.name}: the bundled local judge (SmolLM2-135M) is a weak "
                "judge, fit for demos only",
            )


def _level(checks: list[Check]) -> Level:
    statuses = {c.status for c in checks}
    if "fail" in statuses:
        return "not_trusted"
    if "warn" in statuses:
        return "use_with_caution"
    return "trusted" if "pass" in statuses else "insufficient_evidence"


def build_verdict(report: Evidence, options: AnalysisOptions) -> Verdict:
    """The ``verdict`` section of a report whose other sections are already computed."""
    t = options.thresholds
    checks = [
        *_failure_checks(report, t),
        *_position_checks(report, t, options.alpha),
        *_human_checks(report, t),
        *_agreement_checks(report, t),
        *_content_checks(report),
        *_retest_checks(report, t),
        *_local_checks(report),
    ]
    level = _level(checks)
    bad = [c.message for c in checks if c.status == "fail"]
    bad += [c.message for c in checks if c.status == "warn"]
    untested = sorted({c.message for c in checks if c.status == "skipped"})
    judges = {j.name: [c for c in checks if c.judge == j.name] for j in report.summary.judges}
    return Verdict(
        level=level,
        trustworthy={"trusted": True, "not_trusted": False}.get(level),
        answer=_answer(level, bad, untested),
        reasons=bad,
        checks=checks,
        judges={
            name: JudgeVerdict(
                level=_level(cs),
                reasons=[c.message for c in cs if c.status in ("fail", "warn")],
            )
            for name, cs in judges.items()
        },
    )


def _answer(level: str, bad: list[str], untested: list[str]) -> str:
    head = _LEVEL_WORDS[level]
    if level == "trusted":
        text = f"{head}: every check that could be run passed."
    elif level == "insufficient_evidence":
        text = f"{head}: no trust check could be run on these records."
    else:
        shown = "; ".join(bad[:5]) + (f"; and {len(bad) - 5} more" if len(bad) > 5 else "")
        text = f"{head}: {shown}."
    if untested:
        text += " Untested: " + "; ".join(untested) + "."
    return text
