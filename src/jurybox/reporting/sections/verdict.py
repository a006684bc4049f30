"""The verdict's tables: the per-judge answer (the first screen), and every trust check."""

from __future__ import annotations

from typing import Any

from jurybox.analysis.model import Report
from jurybox.analysis.model.verdict import Figure, JudgeVerdict
from jurybox.reporting.sections.first_screen import judge_findings, judge_labelled_items
from jurybox.reporting.view.format import MISSING, few_items, fmt_value_ci
from jurybox.reporting.view.tables import Table, fmt_rate, fmt_text

LEVEL_TITLES = {
    "trusted": "Yes — every judge can be trusted for this comparison",
    "use_with_caution": "With caution — no judge fails, but not every one is shown to be accurate",
    "not_trusted": "No — at least one judge should not be trusted for this comparison",
    "insufficient_evidence": "Not enough evidence to say",
}
JUDGE_COLUMNS = (
    "Judge",
    "Level",
    "Reason",
    "Accuracy (failures wrong) [95% CI]",
    "Accuracy (parsed only)",
    "Swap consistency (failures counted / parsed)",
    "Failure rate",
)


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
        "Value: the observed figure the check reads. Position and length: the judge's pull "
        "toward the first-shown / longer response beyond the gold labels (difference of error "
        "rates; raw effect where there are no labels), p-values Holm-adjusted across judges."
    )
    return table


_RULES = {
    "failure_rate": "≤ {t}",
    "accuracy": "95% CI low ≥ {t}",
    "kappa": "95% CI low ≥ {t}",
    "position": "|effect| < {t} or not significant (Holm)",
    "length": "|effect| < {t} or not significant (Holm)",
    "self_preference": "|effect| < {t} or not significant (Holm)",
}


def pass_rule(check: str, threshold: Any) -> str:
    """How a check passes, in words (the threshold formatted by ``view.format``)."""
    rule = _RULES.get(check, "≥ {t}")
    if "{t}" in rule and threshold is None:
        return "—"
    return rule.format(t=fmt_rate(threshold) if "{t}" in rule else "")


def _figure(figure: Figure | None, labelled: int | None) -> str:
    """An accuracy (or κ) with its interval, marked where its labelled items are few."""
    if figure is None:
        return MISSING
    return fmt_value_ci(figure.value, figure.ci_low, figure.ci_high) + few_items(labelled)


def _quality(entry: JudgeVerdict, labelled: int | None) -> str:
    if entry.accuracy is None and entry.kappa is not None:
        name = "ICC" if entry.kappa_is_icc else "κ"
        return f"{name} {_figure(entry.kappa, labelled)}"
    return _figure(entry.accuracy, labelled)


def _swap(entry: JudgeVerdict) -> str:
    if entry.swap_consistency is None:
        return MISSING if entry.positions_shown else "— (positions not shown)"
    both = f"{fmt_rate(entry.swap_consistency)} / {fmt_rate(entry.swap_consistency_parsed)}"
    return both + few_items(entry.n_items)


def judge_verdict_table(report: Report) -> Table:
    """The per-judge answer, most trusted first: level, defining finding, figures both ways."""
    verdict = report.verdict
    # A static title: judge names are user text, escaped in cells, never in headings.
    table = Table(id="judge-verdicts", title="Per judge, most trusted first", columns=JUDGE_COLUMNS)
    for judge, entry in verdict.judges.items():
        labelled = judge_labelled_items(report, str(judge))
        table.add(
            str(judge),
            entry.level.replace("_", " "),
            judge_findings(report, str(judge), entry)[0],
            _quality(entry, labelled),
            _figure(entry.accuracy_parsed, labelled),
            _swap(entry),
            fmt_rate(entry.failure_rate),
        )
    table.note(
        "Accuracy against gold labels with failed calls counted as wrong (the headline, as "
        "published benchmarks count them), and over parsed verdicts only; for judges that only "
        "scored, quadratic-weighted κ against human scores stands in (the ICC of the total "
        "where human scores are fractional). Intervals count items: an item's orders and "
        "repeats are one cluster; a figure on fewer than 30 items says so. Swap consistency: "
        "same verdict in both presentation orders, a failed order counted as inconsistent / "
        "over pairs parsed in both orders. Thresholds: the report's options.thresholds."
    )
    for name, levels in (verdict.subsets or {}).items():
        n_items = max((entry.n_items for entry in levels.values()), default=0)
        shown = ", ".join(
            f"{judge} {entry.level.replace('_', ' ')}" for judge, entry in levels.items()
        )
        table.note(f"On the subset {name} alone ({n_items} items): {shown}.")
    return table
