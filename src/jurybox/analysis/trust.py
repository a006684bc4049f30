"""Trust levels per judge, from typed evidence: positive evidence of accuracy or no "trusted".

The rules (issue #12):

* ``trusted`` needs positive evidence that the judge is accurate: agreement with gold or human
  labels (accuracy with failures counted as wrong, or κ for ordinal scores) whose confidence
  interval's lower bound clears a threshold.
* Without labels a judge is at most ``use_with_caution``, and the reason says "accuracy untested";
  when nothing at all was testable it is ``insufficient_evidence``.
* Consistency checks (swap consistency, first-position preference, test-retest) can only lower a
  level, never raise it. A length effect measured without labels is only a warning: an accurate
  judge on data whose better answers are the longer ones would otherwise look biased.
* Length and self-preference measured beyond the labels (or against neutral judges) lower a
  ``trusted`` judge only when large (``fail_bias_effect``); a moderate pull says where a judge
  whose accuracy is shown errs, and is reported as a warning beside the level.
* The failure rate is a check of its own; a judge none of whose calls produced a verdict is
  ``not_trusted``.
* A Pass/Fail (criterion) judge's accuracy is the worse of its TPR and TNR against the human
  labels, failures counted as wrong: plain accuracy would trust a judge that always says Pass
  where most labels are Pass.

This module reads no report: the caller builds one ``JudgeEvidence`` per judge (Holm-adjusting the
bias p-values across judges first) and gets back a ``JudgeTrust`` per judge and the panel line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from jurybox.thresholds import TrustThresholds

Level = Literal["trusted", "use_with_caution", "not_trusted", "insufficient_evidence"]
CheckStatus = Literal["fail", "warn", "skipped", "pass"]
STATUS_ORDER: dict[str, int] = {"fail": 0, "warn": 1, "skipped": 2, "pass": 3}
# Checks of equal status are listed in this order: the most telling first.
_CHECK_ORDER: tuple[str, ...] = ("failure_rate", "accuracy", "kappa", "position")
_CHECK_ORDER += ("swap_consistency", "length", "self_preference", "retest")


@dataclass(frozen=True)
class Estimate:
    """A figure with its two-sided confidence interval."""

    value: float
    ci_low: float
    ci_high: float

    def __post_init__(self) -> None:
        if not all(math.isfinite(v) for v in (self.value, self.ci_low, self.ci_high)):
            raise ValueError(f"estimate values must be finite, got {self}")
        # A rounding-level slack: Wilson's lower bound at 0 successes comes out as ~1e-18.
        if not self.ci_low - 1e-9 <= self.value <= self.ci_high + 1e-9:
            raise ValueError(f"estimate must lie in its interval, got {self}")


@dataclass(frozen=True)
class BiasTest:
    """One bias test of one judge: effect on [-1, 1] and its Holm-adjusted p-value.

    ``conditioned_on_truth``: the effect is measured beyond the gold labels (e.g.
    ``stats.length_preference_given_truth``); without labels it is a raw effect.
    """

    effect: float
    p_adjusted: float
    conditioned_on_truth: bool = True

    def __post_init__(self) -> None:
        if not -1.0 <= self.effect <= 1.0:
            raise ValueError(f"effect must lie in [-1, 1], got {self.effect}")
        if not 0.0 <= self.p_adjusted <= 1.0:
            raise ValueError(f"p_adjusted must lie in [0, 1], got {self.p_adjusted}")


@dataclass(frozen=True)
class PassFailAgreement:
    """A Pass/Fail judge against human labels, failures counted as wrong: TPR over the
    Pass-labelled responses, TNR over the Fail-labelled ones, each interval over items."""

    tpr: Estimate
    tnr: Estimate
    n_items: int  # labelled items the two rest on (an item's criteria share it)
    method: str

    @property
    def worse(self) -> Estimate:
        """min(TPR, TNR) with the lower of the two bounds at each end (each a valid interval
        for its rate, so the lower bound is conservative for the minimum)."""
        pair = (self.tpr, self.tnr)
        return Estimate(*(min(getattr(e, f) for e in pair) for f in ("value", "ci_low", "ci_high")))


@dataclass(frozen=True)
class JudgeEvidence:
    """What is known about one judge; ``None`` means "not measured" (the check is skipped).

    Accuracy and swap consistency are given two ways: failures counted as wrong / inconsistent
    (the headline, as published benchmarks count them) and over parsed verdicts only.
    """

    judge: str
    n_items: int
    n_judgments: int  # judgments asked for, failures included
    failure_rate: float  # share of those that produced no verdict
    has_labels: bool  # gold or human labels exist for (some of) the items
    positions_shown: bool = True  # False: each response scored alone (rating-derived verdicts)
    accuracy: Estimate | None = None  # failures counted as wrong
    accuracy_parsed: Estimate | None = None  # over parsed verdicts only
    kappa: Estimate | None = None  # ordinal scores vs humans
    kappa_is_icc: bool = False  # kappa is the ICC(2,1) of the total (fractional human scores)
    swap_consistency: float | None = None  # failures counted as inconsistent
    swap_consistency_parsed: float | None = None
    swap_interval: Estimate | None = None  # of swap_consistency, items as clusters
    position: BiasTest | None = None  # first-shown preference
    length: BiasTest | None = None
    self_preference: BiasTest | None = None  # own family's responses against neutral judges
    retest_agreement: float | None = None
    retest_is_icc: bool = False  # retest_agreement is the ICC of repeated scores (clipped at 0)
    # A `--until decided` run: its anytime-valid interval of the accuracy. The run looked after
    # every block and stopped when the data said so; a fixed-n interval then claims too much,
    # so the check reads this one.
    accuracy_anytime: Estimate | None = None
    pass_fail: PassFailAgreement | None = None  # a criterion judge against Pass/Fail labels

    def __post_init__(self) -> None:
        if self.n_items < 0 or self.n_judgments < 0:
            raise ValueError(f"{self.judge}: counts must be ≥ 0")
        shares = (self.failure_rate, self.swap_consistency, self.swap_consistency_parsed)
        for share in (*shares, self.retest_agreement):
            if share is not None and not 0.0 <= share <= 1.0:
                raise ValueError(f"{self.judge}: rates must lie in [0, 1], got {share}")
        measured = (self.accuracy, self.kappa, self.pass_fail)
        if not self.has_labels and any(m is not None for m in measured):
            raise ValueError(f"{self.judge}: accuracy or κ given but has_labels is False")


class TrustCheck(BaseModel):
    """One check behind a level: what was measured, against which threshold, and what it says.

    ``threshold`` is the limit a check must meet to pass; ``applied`` the one its status was
    decided against (the stricter ``fail_*`` limit for a ``fail``), which its message names.
    """

    model_config = ConfigDict(frozen=True)

    check: str
    status: CheckStatus
    value: float | None = None
    threshold: float | None = None
    applied: float | None = None
    message: str


class JudgeTrust(BaseModel):
    """A judge's level, its one-line reason, and the checks behind it, most severe first."""

    model_config = ConfigDict(frozen=True)

    judge: str
    level: Level
    reason: str
    checks: tuple[TrustCheck, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        """Messages of the checks that did not pass, most severe first."""
        return tuple(c.message for c in self.checks if c.status != "pass")


class PanelTrust(BaseModel):
    """Every judge's verdict, most trusted first, and the panel line derived from them."""

    model_config = ConfigDict(frozen=True)

    judges: tuple[JudgeTrust, ...]
    line: str

    @property
    def trusted(self) -> tuple[str, ...]:
        return tuple(j.judge for j in self.judges if j.level == "trusted")


def _share(value: float) -> str:
    return f"{value:.2f}"


def _ci(est: Estimate) -> str:
    return f"{_share(est.value)} (95% CI {_share(est.ci_low)}–{_share(est.ci_high)})"


def _graded(value: float, warn: float, fail: float, *, higher_is_better: bool) -> CheckStatus:
    def bad(limit: float) -> bool:
        return value < limit if higher_is_better else value > limit

    if bad(fail):
        return "fail"
    return "warn" if bad(warn) else "pass"


def _checked(
    check: str, status: CheckStatus, value: float, limits: tuple[float, float], message: str
) -> TrustCheck:
    """A check decided against ``limits`` (warn, fail): the fail limit applied to a fail."""
    warn, fail = limits
    applied = fail if status == "fail" else warn
    return TrustCheck(
        check=check, status=status, value=value, threshold=warn, applied=applied, message=message
    )


def failure_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """The share of calls with no verdict; every call failed is a failure whatever the limits."""
    rate = ev.failure_rate
    status = _graded(rate, th.warn_failure_rate, th.fail_failure_rate, higher_is_better=False)
    every = rate >= 1.0 and ev.n_judgments > 0
    status = "fail" if every else status
    applied = th.fail_failure_rate if status == "fail" else th.warn_failure_rate
    message = (
        f"every one of its {ev.n_judgments} calls failed: no verdict to trust"
        if every
        else f"{rate:.0%} of calls failed (limit {applied:.0%})"
    )
    limits = (th.warn_failure_rate, th.fail_failure_rate)
    return _checked("failure_rate", status, rate, limits, message)


def accuracy_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Positive evidence of accuracy: the CI's lower bound must clear ``min_accuracy``."""
    if ev.accuracy is None and ev.pass_fail is not None:
        return pass_fail_check(ev.pass_fail, th)
    if ev.accuracy is None:
        return _untested(ev, "accuracy")
    parsed = ev.accuracy_parsed
    also = f"; {_share(parsed.value)} over parsed verdicts" if parsed else ""
    shown = f"accuracy {_ci(ev.accuracy)}, failures counted{also}"
    used = ev.accuracy_anytime
    if used is not None:  # the interval that holds however often the run looked
        bounds = f"{_share(used.ci_low)}–{_share(used.ci_high)}"
        shown += f"; anytime-valid interval {bounds} (--until decided)"
    return _quality("accuracy", shown, used or ev.accuracy, th.min_accuracy, th.fail_accuracy)


def pass_fail_check(found: PassFailAgreement, th: TrustThresholds) -> TrustCheck:
    """The worse of TPR and TNR against the accuracy limits: both must be shown to clear
    ``min_accuracy``, and either below ``fail_accuracy`` fails (an always-Pass judge has TNR 0)."""
    shown = (
        f"worse of TPR {_ci(found.tpr)} and TNR {_ci(found.tnr)} against the human Pass/Fail "
        f"labels over {found.n_items} items, failures counted, intervals over items"
    )
    return _quality("accuracy", shown, found.worse, th.min_accuracy, th.fail_accuracy)


def kappa_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Ordinal scores vs human labels: κ's CI lower bound must clear ``min_kappa``.

    On fractional human scores κ is undefined and the ICC(2,1) of the total is read against the
    same limits (quadratic-weighted κ equals an ICC on a continuous scale: Fleiss & Cohen 1973).
    """
    if ev.kappa is None:
        return TrustCheck(check="kappa", status="skipped", message="κ vs humans not measured")
    what = (
        "ICC(2,1) vs humans (fractional human scores: κ undefined)"
        if ev.kappa_is_icc
        else "κ vs humans"
    )
    shown = f"{what} {_ci(ev.kappa)}"
    return _quality("kappa", shown, ev.kappa, th.min_kappa, th.fail_kappa)


def _quality(check: str, shown: str, est: Estimate, minimum: float, fail: float) -> TrustCheck:
    if est.value < fail:
        status: CheckStatus = "fail"
        # At two decimals 0.598 reads 0.60: give the third where rounding hides the gap.
        close = _share(est.value) == _share(fail)
        message = (
            f"{shown}: {est.value:.3f} is below {fail:.3f}"
            if close
            else f"{shown}: below {_share(fail)}"
        )
    elif est.ci_low >= minimum:
        status, message = "pass", f"{shown}: clears {_share(minimum)}"
    else:
        status, message = "warn", f"{shown}: not shown to clear {_share(minimum)}"
    return _checked(check, status, est.value, (minimum, fail), message)


def _untested(ev: JudgeEvidence, check: str) -> TrustCheck:
    why = "no labels to compare with" if not ev.has_labels else "no accuracy measured"
    return TrustCheck(check=check, status="skipped", message=f"accuracy untested: {why}")


def swap_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Same verdict whichever response is shown first (failures count as inconsistent)."""
    if ev.swap_consistency is None:
        why = "positions were not shown" if not ev.positions_shown else "not judged in both orders"
        return TrustCheck(
            check="swap_consistency", status="skipped", message=f"swap consistency untested: {why}"
        )
    value = ev.swap_consistency
    status = _graded(
        value,
        th.warn_swap_consistency,
        th.fail_swap_consistency,
        higher_is_better=True,
    )
    parsed = ev.swap_consistency_parsed
    also = f" ({_share(parsed)} over parsed pairs)" if parsed is not None else ""
    applied = th.fail_swap_consistency if status == "fail" else th.warn_swap_consistency
    shown = _ci(ev.swap_interval) if ev.swap_interval is not None else _share(value)
    message = f"swap consistency {shown}{also}, failures counted (limit {_share(applied)})"
    limits = (th.warn_swap_consistency, th.fail_swap_consistency)
    return _checked("swap_consistency", status, value, limits, message)


def _bias_status(test: BiasTest, th: TrustThresholds, *, may_fail: bool) -> CheckStatus:
    if test.p_adjusted >= th.alpha or abs(test.effect) < th.warn_bias_effect:
        return "pass"
    return "fail" if may_fail and abs(test.effect) >= th.fail_bias_effect else "warn"


def _bias_check(
    check: str, test: BiasTest, th: TrustThresholds, status: CheckStatus, *, found: str, clean: str
) -> TrustCheck:
    """A bias test's check: ``found`` describes a preference, ``clean`` its absence."""
    limits = (th.warn_bias_effect, th.fail_bias_effect)
    return _checked(check, status, test.effect, limits, clean if status == "pass" else found)


def position_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Preference for the first-shown response; only where the judge saw both together."""
    if not ev.positions_shown or ev.position is None:
        shown = ev.positions_shown
        why = "not measured" if shown else "the judge never saw both responses together"
        return TrustCheck(check="position", status="skipped", message=f"position untested: {why}")
    test = ev.position
    # A raw first-pick rate may fail too: judged in both orders, the gold is first half the time.
    status = _bias_status(test, th, may_fail=True)
    side = "first" if test.effect > 0 else "second"
    given = " beyond the labels" if test.conditioned_on_truth else ""
    found = (
        f"prefers the {side}-shown response{given} by {abs(test.effect):.2f} "
        f"(Holm p {test.p_adjusted:.3g})"
    )
    clean = (
        f"no position preference shown (effect {test.effect:+.2f}, Holm p {test.p_adjusted:.3g})"
    )
    return _bias_check("position", test, th, status, found=found, clean=clean)


def length_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Preference for the longer response; without labels it can only warn."""
    if ev.length is None:
        return TrustCheck(check="length", status="skipped", message="length untested")
    test = ev.length
    conditioned = test.conditioned_on_truth and ev.has_labels
    status = _bias_status(test, th, may_fail=conditioned)
    side = "longer" if test.effect > 0 else "shorter"
    what = "beyond the labels" if conditioned else "raw, not conditioned on labels"
    found = (
        f"prefers the {side} response by {abs(test.effect):.2f} ({what}; Holm p "
        f"{test.p_adjusted:.3g})"
    )
    clean = f"no length preference shown ({what}; effect {test.effect:+.2f})"
    return _bias_check("length", test, th, status, found=found, clean=clean)


def self_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Favouring its own model family's responses beyond the neutral judges: a warning only.

    Measured against other judges rather than the truth, so it can lower a level by one step
    but never alone make a judge ``not_trusted``.
    """
    if ev.self_preference is None:
        return TrustCheck(
            check="self_preference",
            status="skipped",
            message="self-preference untested: no response by the judge's own family",
        )
    test = ev.self_preference
    status = _bias_status(test, th, may_fail=False)
    verb = "favours" if test.effect > 0 else "disfavours"
    found = (
        f"{verb} its own family's responses beyond neutral judges by {abs(test.effect):.2f} "
        f"(Holm p {test.p_adjusted:.3g})"
    )
    clean = f"does not favour its own family (effect {test.effect:+.2f})"
    return _bias_check("self_preference", test, th, status, found=found, clean=clean)


def retest_check(ev: JudgeEvidence, th: TrustThresholds) -> TrustCheck:
    """Same verdict when the same judgment is asked again."""
    if ev.retest_agreement is None:
        return TrustCheck(check="retest", status="skipped", message="test-retest not measured")
    value = ev.retest_agreement
    warn, fail = (
        (th.warn_retest_icc, th.fail_retest_icc)
        if ev.retest_is_icc
        else (th.warn_retest_agreement, th.fail_retest_agreement)
    )
    status = _graded(value, warn, fail, higher_is_better=True)
    what = "test-retest ICC of the total" if ev.retest_is_icc else "test-retest agreement"
    applied = fail if status == "fail" else warn
    message = f"{what} {_share(value)} (limit {_share(applied)})"
    return _checked("retest", status, value, (warn, fail), message)


def _ordered(checks: Sequence[TrustCheck]) -> tuple[TrustCheck, ...]:
    return tuple(
        sorted(checks, key=lambda c: (STATUS_ORDER[c.status], _CHECK_ORDER.index(c.check)))
    )


def _base_level(quality: TrustCheck, others: Sequence[TrustCheck]) -> Level:
    """The level the accuracy evidence alone allows; consistency checks may only lower it."""
    if quality.status == "pass":
        return "trusted"
    if quality.status == "fail":
        return "not_trusted"
    if quality.status == "warn":
        return "use_with_caution"
    consistency = [c for c in others if c.check != "failure_rate"]
    tested = any(c.status != "skipped" for c in consistency)
    return "use_with_caution" if tested else "insufficient_evidence"


_ADVISORY = ("length", "self_preference")


def _lowers(check: TrustCheck, th: TrustThresholds) -> bool:
    """Whether a warning lowers a ``trusted`` judge.

    A moderate length or self-preference pull (below ``fail_bias_effect``) only says where a judge
    errs; for a judge whose accuracy is shown, those errors are already counted in it. It is
    reported, and only a large pull lowers the level.
    """
    if check.check not in _ADVISORY:
        return True
    return check.value is not None and abs(check.value) >= th.fail_bias_effect


def _lowered(level: Level, checks: Sequence[TrustCheck], th: TrustThresholds) -> Level:
    if any(c.status == "fail" for c in checks):
        return "not_trusted"
    if level == "trusted" and any(c.status == "warn" and _lowers(c, th) for c in checks):
        return "use_with_caution"
    return level


def assess_judge(evidence: JudgeEvidence, thresholds: TrustThresholds | None = None) -> JudgeTrust:
    """The judge's level, its checks (most severe first) and the one-line reason.

    Args:
        evidence: What was measured about the judge (bias p-values already Holm-adjusted).
        thresholds: The limits; ``TrustThresholds()`` when None.

    Returns:
        ``JudgeTrust``; its ``reason`` is the most severe check's message, and for a judge
        without labels it says "accuracy untested" plainly.
    """
    th = thresholds or TrustThresholds()
    if evidence.n_judgments == 0:
        empty = TrustCheck(check="failure_rate", status="skipped", message="no judgments")
        return JudgeTrust(
            judge=evidence.judge,
            level="insufficient_evidence",
            reason="no judgments to assess",
            checks=(empty,),
        )
    use_kappa = evidence.accuracy is None and evidence.kappa is not None
    quality = kappa_check(evidence, th) if use_kappa else accuracy_check(evidence, th)
    others = [
        check(evidence, th)
        for check in (
            failure_check,
            swap_check,
            position_check,
            length_check,
            self_check,
            retest_check,
        )
    ]
    # Self-preference only applies when the judge's own family wrote responses: no noise else.
    others = [c for c in others if c.check != "self_preference" or c.status != "skipped"]
    level = _lowered(_base_level(quality, others), others, th)
    checks = _ordered([quality, *others])
    return JudgeTrust(
        judge=evidence.judge, level=level, reason=_reason(level, quality, checks), checks=checks
    )


def _reason(level: Level, quality: TrustCheck, checks: Sequence[TrustCheck]) -> str:
    """The most severe finding; an untested accuracy is always said, first."""
    if level == "insufficient_evidence":
        return "accuracy untested and no consistency check could run"
    worst = checks[0]
    if level == "trusted" or worst.status in ("skipped", "pass"):
        return quality.message
    if quality.status == "skipped" and worst is not quality:
        return f"{quality.message}; {worst.message}"
    return worst.message


LEVEL_ORDER: dict[str, int] = {
    "trusted": 0,
    "use_with_caution": 1,
    "insufficient_evidence": 2,
    "not_trusted": 3,
}


def assess_panel(
    evidence: Sequence[JudgeEvidence], thresholds: TrustThresholds | None = None
) -> PanelTrust:
    """Every judge's verdict, most trusted first (then by name), and the derived panel line."""
    if not evidence:
        raise ValueError("no judges to assess")
    judges = sorted(
        (assess_judge(ev, thresholds) for ev in evidence),
        key=lambda j: (LEVEL_ORDER[j.level], j.judge),
    )
    return PanelTrust(judges=tuple(judges), line=panel_line(judges))


def panel_line(judges: Sequence[JudgeTrust]) -> str:
    """E.g. "1 of 4 judges can be trusted: GPT-4" or "0 of 2 judges can be trusted"."""
    trusted = [j.judge for j in judges if j.level == "trusted"]
    noun = "judge" if len(judges) == 1 else "judges"
    line = f"{len(trusted)} of {len(judges)} {noun} can be trusted"
    return f"{line}: {', '.join(trusted)}" if trusted else line
