"""The trust verdict: one level per judge, from evidence, and the panel line derived from them.

``jurybox.analysis.evidence`` reads each judge's evidence from the computed families and
``jurybox.analysis.trust`` applies the rules (positive evidence of accuracy for ``trusted``,
consistency checks that can only lower a level, failures counted). This module turns the result
into the report's typed ``verdict`` section.
"""

from __future__ import annotations

from jurybox.analysis.evidence import Families, judge_evidence
from jurybox.analysis.frame import AnalysisFrame
from jurybox.analysis.model.verdict import (
    BiasFigure,
    Check,
    Figure,
    JudgeVerdict,
    PassFailFigure,
    SubsetLevel,
    Verdict,
)
from jurybox.analysis.options import AnalysisOptions
from jurybox.analysis.trust import (
    LEVEL_ORDER,
    STATUS_ORDER,
    BiasTest,
    Estimate,
    JudgeEvidence,
    JudgeTrust,
    PassFailAgreement,
    assess_panel,
)

_LEVEL_WORDS = {
    "trusted": "Yes",
    "use_with_caution": "With caution",
    "not_trusted": "No",
    "insufficient_evidence": "Not enough evidence to say",
}


def _figure(est: Estimate | None) -> Figure | None:
    return None if est is None else _shown(est)


def _shown(est: Estimate) -> Figure:
    return Figure(value=est.value, ci_low=est.ci_low, ci_high=est.ci_high)


def _bias(test: BiasTest | None) -> BiasFigure | None:
    if test is None:
        return None
    return BiasFigure(
        effect=test.effect, p_holm=test.p_adjusted, conditioned_on_truth=test.conditioned_on_truth
    )


def _pass_fail(found: PassFailAgreement) -> PassFailFigure:
    return PassFailFigure(
        tpr=_shown(found.tpr), tnr=_shown(found.tnr), n_items=found.n_items, method=found.method
    )


def _checks(trust: JudgeTrust) -> list[Check]:
    return [Check(judge=trust.judge, **c.model_dump()) for c in trust.checks]


def _judge_verdict(trust: JudgeTrust, ev: JudgeEvidence) -> JudgeVerdict:
    return JudgeVerdict(
        level=trust.level,
        reason=trust.reason,
        reasons=list(trust.reasons),
        checks=_checks(trust),
        n_items=ev.n_items,
        n_judgments=ev.n_judgments,
        failure_rate=ev.failure_rate,
        has_labels=ev.has_labels,
        positions_shown=ev.positions_shown,
        accuracy=_figure(ev.accuracy),
        accuracy_parsed=_figure(ev.accuracy_parsed),
        kappa=_figure(ev.kappa),
        kappa_is_icc=ev.kappa_is_icc,
        swap_consistency=ev.swap_consistency,
        swap_consistency_parsed=ev.swap_consistency_parsed,
        swap_consistency_interval=_figure(ev.swap_interval),
        position=_bias(ev.position),
        length=_bias(ev.length),
        self_preference=_bias(ev.self_preference),
        retest_agreement=ev.retest_agreement,
        retest_is_icc=ev.retest_is_icc,
        **({"accuracy_anytime": _figure(ev.accuracy_anytime)} if ev.accuracy_anytime else {}),
        **({"pass_fail": _pass_fail(ev.pass_fail)} if ev.pass_fail else {}),
    )


def _empty_verdict() -> Verdict:
    return Verdict(
        level="insufficient_evidence",
        trustworthy=None,
        line="no judges to assess",
        answer=f"{_LEVEL_WORDS['insufficient_evidence']}: no judge records to assess.",
        reasons=[],
        checks=[],
        judges={},
    )


def build_verdict(frame: AnalysisFrame, families: Families, options: AnalysisOptions) -> Verdict:
    """The ``verdict`` section of a report whose family sections are already computed."""
    evidence = judge_evidence(frame, families, options)
    if not evidence:
        return _empty_verdict()
    panel = assess_panel(evidence, options.thresholds)
    by_name = {ev.judge: ev for ev in evidence}
    judges = {t.judge: _judge_verdict(t, by_name[t.judge]) for t in panel.judges}
    checks = [c for verdict in judges.values() for c in verdict.checks]
    worst_first = sorted(
        (c for c in checks if c.status in ("fail", "warn")),
        key=lambda c: STATUS_ORDER[c.status],
    )
    # The panel is as trustworthy as its weakest judge (its aggregated verdicts mix them all);
    # the line names the judges that can be trusted on their own.
    level = max((t.level for t in panel.judges), key=LEVEL_ORDER.__getitem__)
    lines = [f"{t.judge} ({t.level.replace('_', ' ')}): {t.reason}" for t in panel.judges]
    return Verdict(
        level=level,
        trustworthy={"trusted": True, "not_trusted": False}.get(level),
        line=panel.line,
        answer=f"{_LEVEL_WORDS[level]}: {panel.line}. " + " | ".join(lines),
        reasons=[f"{c.judge}: {c.message}" for c in worst_first],
        checks=checks,
        judges=judges,
    )


def with_subsets(pooled: Verdict, by_subset: dict[str, Verdict]) -> Verdict:
    """The pooled verdict with each judge's level on every subset alone, and its ``answer``
    naming, per judge, the subsets where that level is worse than the pooled one."""
    subsets = {
        name: {
            judge: SubsetLevel(
                level=entry.level,
                reason=entry.reason,
                n_items=entry.n_items,
                accuracy=entry.accuracy,
            )
            for judge, entry in verdict.judges.items()
        }
        for name, verdict in by_subset.items()
    }
    split = pooled.model_copy(update={"subsets": subsets})
    worse = {judge: worse_subsets(split, judge) for judge in pooled.judges}
    notes = [
        f"{judge}: {', '.join(_level_on(name, alone) for name, alone in found)} alone"
        for judge, found in worse.items()
        if found
    ]
    answer = pooled.answer
    if notes:
        answer += " | Pooled over subsets; per subset: " + "; ".join(notes)
    return split.model_copy(update={"answer": answer})


def _level_on(name: str, alone: SubsetLevel) -> str:
    return f"{alone.level.replace('_', ' ')} on {name}"


def worse_subsets(verdict: Verdict, judge: str) -> list[tuple[str, SubsetLevel]]:
    """The subsets on which ``judge`` alone is at a worse level than pooled over them all."""
    pooled = verdict.judges[judge].level
    return [
        (name, levels[judge])
        for name, levels in (verdict.subsets or {}).items()
        if judge in levels and LEVEL_ORDER[levels[judge].level] > LEVEL_ORDER[pooled]
    ]
