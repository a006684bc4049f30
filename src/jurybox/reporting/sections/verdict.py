"""The verdict's tables: every trust check, and the level per judge."""

from __future__ import annotations

from typing import Any

from jurybox.analysis.model import Report
from jurybox.reporting.view.tables import Table, fmt_rate, fmt_text

LEVEL_TITLES = {
    "trusted": "Yes — these judges can be trusted for this comparison",
    "use_with_caution": "With caution — usable, but some checks raised warnings",
    "not_trusted": "No — these judges should not be trusted for this comparison",
    "insufficient_evidence": "Not enough evidence to say",
}


def verdict_table(report: Report) -> Table:
    """Every trust check, failures first."""
    table = Table(
        id="trust-checks",
        title="Every check, failures first",
        columns=("Status", "Check", "Judge", "Value", "Passes when", "Detail"),
    )
    order = {"fail": 0, "warn": 1, "pass": 2, "skipped": 3}
    for check in sorted(report.verdict.checks, key=lambda c: order[c.status]):
        table.add(
            check.status,
            check.check.replace("_", " "),
            fmt_text(check.judge),
            fmt_rate(check.value),
            pass_rule(check.check, check.threshold),
            check.message,
        )
    table.note(
        "Value: the observed figure the check reads (for first-position bias, the share of "
        "decisive verdicts for the first-shown response; the check itself tests its Holm p)."
    )
    return table


_RULES = {
    "parse_failure_rate": "≤ {t}",
    "failure_rate": "≤ {t}",
    "first_position_bias": "Holm p ≥ {t}",
    "verbosity_bias": "no significant length effect",
    "self_enhancement": "no significant own-family excess",
    "local_judge": "not the bundled local judge",
}


def pass_rule(check: str, threshold: Any) -> str:
    """How a check passes, in words (the threshold formatted by ``view.format``)."""
    rule = _RULES.get(check, "≥ {t}")
    if "{t}" in rule and threshold is None:
        return "—"
    return rule.format(t=fmt_rate(threshold) if "{t}" in rule else "")


def judge_verdict_table(report: Report) -> Table:
    table = Table(id="judge-verdicts", title="Per judge", columns=("Judge", "Level", "Reasons"))
    for judge, entry in report.verdict.judges.items():
        reasons = "; ".join(entry.reasons) or "no failed or warned check"
        table.add(str(judge), entry.level.replace("_", " "), reasons)
    return table
