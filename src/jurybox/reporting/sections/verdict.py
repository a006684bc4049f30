"""The verdict's tables: every trust check, and the level per judge."""

from __future__ import annotations

from typing import Any

from jurybox.reporting.view.tables import (
    Json,
    Table,
    fmt_rate,
    fmt_text,
    get,
)

LEVEL_TITLES = {
    "trusted": "Yes — these judges can be trusted for this comparison",
    "use_with_caution": "With caution — usable, but some checks raised warnings",
    "not_trusted": "No — these judges should not be trusted for this comparison",
    "insufficient_evidence": "Not enough evidence to say",
}


def verdict_table(report: Json) -> Table:
    """Every trust check, failures first."""
    table = Table(
        id="trust-checks",
        title="Every check, failures first",
        columns=("Status", "Check", "Judge", "Value", "Passes when", "Detail"),
    )
    order = {"fail": 0, "warn": 1, "pass": 2, "skipped": 3}
    checks = get(report, "verdict", "checks") or []
    for check in sorted(checks, key=lambda c: order.get(c.get("status"), 4)):
        name = str(check.get("check"))
        table.add(
            str(check.get("status")),
            name.replace("_", " "),
            fmt_text(check.get("judge")),
            fmt_rate(check.get("value")),
            pass_rule(name, check.get("threshold")),
            str(check.get("message", "")),
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


def judge_verdict_table(report: Json) -> Table:
    table = Table(id="judge-verdicts", title="Per judge", columns=("Judge", "Level", "Reasons"))
    for judge, entry in (get(report, "verdict", "judges") or {}).items():
        reasons = "; ".join(entry.get("reasons") or []) or "no failed or warned check"
        table.add(str(judge), str(entry.get("level", "")).replace("_", " "), reasons)
    return table
