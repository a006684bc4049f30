"""CompareReport -> formatted tables, shared by compare.md and compare.html.

Every number goes through ``view.format``; a metric without a value shows an em dash and its
reason becomes a table note; each table notes the methods its figures were computed with.
"""

from __future__ import annotations

from collections.abc import Iterable

from jurybox.analysis.model import Metric
from jurybox.analysis.model.compare import (
    CompareReport,
    ConcisenessMetric,
    JudgeComparison,
    RunComparison,
    ScoreStudy,
    StudyComparison,
)
from jurybox.reporting.view.compare_answer import RunLinks
from jurybox.reporting.view.format import (
    few_items,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_rate,
    fmt_score,
    fmt_text,
    fmt_value_ci,
)
from jurybox.reporting.view.tables import Link, Section, Table, interval_of


def _value_ci(metric: Metric | None, digits: int = 3, items: int | None = None) -> str:
    """The value and its interval, `` (<30 items)`` when ``items`` (what it rests on) are few."""
    if metric is None:
        return fmt_num(None)
    few = few_items(items) if metric.value is not None else ""
    return fmt_value_ci(metric.value, *interval_of(metric), digits) + few


def _p(metric: Metric | None) -> str:
    return fmt_p(getattr(metric, "p_value", None))


def _explain(table: Table, label: str, metrics: Iterable[Metric | None]) -> None:
    """Each metric's method once, and each missing value's reason, as notes."""
    for metric in metrics:
        if metric is None:
            continue
        if metric.value is None and metric.reason:
            table.note(f"{label}: {metric.reason}")
        elif metric.method:
            table.note(metric.method)


def _judge_label(judge: JudgeComparison) -> str:
    if judge.judge_a == judge.judge_b:
        return judge.judge_a
    return f"{judge.judge_a} → {judge.judge_b}"


def runs_table(report: CompareReport, links: RunLinks) -> Table:
    table = Table(
        "runs",
        "Runs compared",
        [
            "Run",
            "Source",
            "Records",
            "OK",
            "Items",
            "Judges",
            "Mode",
            "Dimensions",
            "Gold",
            "Items from",
            "Trust (jurybox analyze)",
            "Report",
        ],
    )
    for run in report.runs:
        href = links.report(run.label)
        trust = [f"{one.judge}: {one.level.replace('_', ' ')}" for one in run.trust or []]
        table.add(
            run.label,
            run.source,
            fmt_num(run.n_records),
            fmt_num(run.n_ok),
            fmt_num(run.n_items),
            fmt_text(run.judges),
            fmt_text(run.modes),
            fmt_text(run.dimensions),
            fmt_num(run.has_gold),
            fmt_text(run.items_source),
            fmt_text(trust or None),
            Link("open", href) if href is not None else fmt_text(None),
        )
    for note in report.notes:
        table.note(note)
    return table


def _pairing_table(comparison: RunComparison, key: str) -> Table:
    table = Table(f"{key}-pairing", "Judge pairing", ["Judge in A", "Judge in B", "Matched by"])
    for pair in comparison.pairing:
        table.add(pair.judge_a, pair.judge_b, pair.matched_by)
    if comparison.unpaired_judges:
        table.note("Not paired (no counterpart): " + ", ".join(comparison.unpaired_judges))
    return table


def _accuracy_table(comparison: RunComparison, key: str) -> Table:
    table = Table(
        f"{key}-accuracy",
        "Verdict accuracy against the gold/human label (paired)",
        [
            "Judge",
            "Items (judgments A / B)",
            "Accuracy A",
            "Accuracy B",
            "B − A (mean over items)",
            "Sign test p (items)",
            "Items higher in A / B",
        ],
    )
    for judge in comparison.judges:
        verdicts = judge.verdicts
        if verdicts is None:
            continue
        acc = verdicts.accuracy
        if acc is None:
            table.note(f"{_judge_label(judge)}: {verdicts.accuracy_skipped}")
            continue
        table.add(
            _judge_label(judge),
            f"{fmt_num(acc.n_items)} ({fmt_num(acc.n_judgments_a)} / {fmt_num(acc.n_judgments_b)})",
            _value_ci(acc.accuracy_a, items=acc.n_items),
            _value_ci(acc.accuracy_b, items=acc.n_items),
            _value_ci(acc.difference, items=acc.n_items),
            _p(acc.mcnemar),
            fmt_count(acc.mcnemar.b, acc.mcnemar.c).replace("/", " / ")
            if acc.mcnemar.b is not None
            else fmt_num(None),
        )
        _explain(table, _judge_label(judge), [acc.accuracy_a, acc.difference, acc.mcnemar])
    return table


def _position_table(comparison: RunComparison, key: str) -> Table:
    table = Table(
        f"{key}-position",
        "Position consistency (same winner in both orders)",
        ["Judge", "Items", "Consistent A", "Consistent B", "B − A", "McNemar p"],
    )
    for judge in comparison.judges:
        position = judge.verdicts.position if judge.verdicts else None
        if position is None:
            continue
        table.add(
            _judge_label(judge),
            fmt_num(position.n_items),
            _value_ci(position.consistency_a, items=position.n_items),
            _value_ci(position.consistency_b, items=position.n_items),
            _value_ci(position.difference, items=position.n_items),
            _p(position.mcnemar),
        )
        _explain(table, _judge_label(judge), [position.difference, position.mcnemar])
    return table


def _agreement_table(comparison: RunComparison, key: str) -> Table:
    table = Table(
        f"{key}-agreement",
        "Agreement between the two runs' verdicts",
        ["Judge", "Units (items)", "Same verdict", "Cohen's κ", "Changed"],
    )
    for judge in comparison.judges:
        verdicts = judge.verdicts
        if verdicts is None:
            continue
        table.add(
            _judge_label(judge),
            f"{fmt_num(verdicts.n_units)} ({fmt_num(verdicts.n_items)})",
            _value_ci(verdicts.agreement, items=verdicts.n_items),
            _value_ci(verdicts.kappa, items=verdicts.n_items),
            fmt_num(verdicts.n_changed),
        )
        _explain(table, _judge_label(judge), [verdicts.agreement, verdicts.kappa])
    return table


def _scores_table(comparison: RunComparison, key: str) -> Table:
    table = Table(
        f"{key}-scores",
        "Score differences (B − A, same responses)",
        [
            "Judge",
            "Dimension",
            "Responses (items)",
            "Mean A",
            "Mean B",
            "Mean diff",
            "t p",
            "HL shift",
            "Wilcoxon p",
            "Rank-biserial",
            "Spearman A~B",
        ],
    )
    for judge in comparison.judges:
        for row in judge.scores:
            table.add(
                _judge_label(judge),
                row.dimension,
                f"{fmt_num(row.n_units)} ({fmt_num(row.n_items)})",
                fmt_score(row.mean_a),
                fmt_score(row.mean_b),
                _value_ci(row.mean_difference, 2, items=row.n_items),
                _p(row.mean_difference),
                _value_ci(row.shift, 2, items=row.n_items),
                _p(row.wilcoxon),
                fmt_rate(row.rank_biserial.value),
                _value_ci(row.correlation, items=row.n_items),
            )
            label = f"{_judge_label(judge)} {row.dimension}"
            metrics = [row.mean_difference, row.shift, row.wilcoxon, row.rank_biserial]
            _explain(table, label, [*metrics, row.correlation])
    return table


def _changed_table(comparison: RunComparison, key: str, links: RunLinks) -> Table:
    a, b = comparison.run_a, comparison.run_b
    table = Table(
        f"{key}-changed",
        "Units whose verdict changed",
        ["Judge", "Order", "Verdict A", "Verdict B", "Gold", f"Item in {a}", f"Item in {b}"],
    )
    for judge in comparison.judges:
        verdicts = judge.verdicts
        if verdicts is None:
            continue
        for unit in verdicts.changed:
            table.add(
                _judge_label(judge),
                unit.order,
                fmt_text(unit.verdict_a),
                fmt_text(unit.verdict_b),
                fmt_text(unit.gold),
                links.cell(a, unit.item_id),
                links.cell(b, unit.item_id),
            )
        if verdicts.changed_omitted:
            table.note(f"{_judge_label(judge)}: {verdicts.changed_omitted} more not listed")
    table.note("An item links to its row in that run's own report explorer, where one was found.")
    return table


def _versus_table(study: StudyComparison, key: str) -> Table:
    table = Table(
        f"{key}-holistic",
        f"Rubric dimensions ({study.rubric_run}) vs the holistic score ({study.holistic_run})",
        [
            "Dimension",
            "Inter-reviewer variance",
            "Holistic variance",
            "Difference (paired by item)",
            "Less inter-reviewer variance",
            "α",
            "Holistic α",
            "α difference",
        ],
    )
    for row in study.dimensions:
        verdict = {True: "yes", False: "no"}.get(row.lower_variance)  # type: ignore[arg-type]
        table.add(
            row.dimension,
            fmt_score(row.variance.variance),
            fmt_score(row.variance.holistic_variance),
            _value_ci(row.variance),
            verdict or "undecided (the interval holds 0)",
            fmt_rate(row.alpha),
            fmt_rate(row.holistic_alpha),
            _value_ci(row.difference),
        )
        _explain(table, row.dimension, [row.variance, row.difference])
    diff = study.ranking_stability_difference
    table.note(
        "Ranking stability, rubric − holistic (mean Kendall τ-b between judges): " + _value_ci(diff)
    )
    _explain(table, "ranking stability difference", [diff])
    table.note(
        "Variance: of the judges' scores of one response, averaged over each item's responses; "
        "α: Krippendorff's alpha, interval metric (agreement relative to each score's own "
        "spread, so it can move the other way); see the reliability table."
    )
    return table


def _conciseness(paired: ConcisenessMetric | None) -> str:
    """``median −1.5 over 35 items, p 0.012``: the per-item difference with its sign."""
    if paired is None:
        return fmt_num(None)
    median = paired.median_difference
    shown = f"median {fmt_score(median)}, " if median is not None else ""
    return f"{shown}{fmt_num(paired.n)} items{few_items(paired.n)}, p {_p(paired)}"


def reliability_table(studies: list[ScoreStudy]) -> Table:
    table = Table(
        "reliability",
        "Inter-judge reliability per dimension (ADR-016)",
        ["Run", "Dimension", "Units", "Inter-judge SD", "α (interval)", "ICC(2,1)"],
    )
    for study in studies:
        for row in study.reliability:
            table.add(
                study.run,
                row.dimension,
                fmt_num(row.n_units),
                fmt_score(row.inter_judge_sd),
                _value_ci(row.alpha),
                _value_ci(row.icc),
            )
            _explain(table, f"{study.run} {row.dimension}", [row.alpha, row.icc])
    return table


def stability_table(studies: list[ScoreStudy]) -> Table:
    table = Table(
        "stability",
        "Ranking stability and conciseness vs length (ADR-016)",
        [
            "Run",
            "Judges",
            "Mean Kendall τ-b",
            "Kendall's W (chance 1/m)",
            "W p (permutation)",
            "Rankings agree",
            "Conciseness, longer − shorter (one-sided p)",
            "Conciseness~length ρ",
        ],
    )
    for study in studies:
        w, paired = study.concordance, study.conciseness_paired
        table.add(
            study.run,
            fmt_num(study.n_judges),
            _value_ci(study.ranking_stability),
            f"{fmt_rate(w.value)} ({fmt_rate(w.null_expectation)})",
            _p(w),
            {"above chance": "yes, above chance"}.get(w.decision or "", "no evidence"),
            _conciseness(paired),
            _value_ci(study.conciseness_length),
        )
        _explain(table, study.run, [study.ranking_stability, w, paired, study.conciseness_length])
        if study.conciseness_dimension is None:
            table.note(f"{study.run}: no dimension named for conciseness, so no length check")
    return table


def build_compare_sections(report: CompareReport, links: RunLinks | None = None) -> list[Section]:
    """The sections of compare.md / compare.html, in order (after the first screen:
    ``view.compare_answer``); ``links`` lead to each run's report, relative to the page."""
    links = links or RunLinks()
    overview = Section("runs", "Runs", "Which runs are compared, and how are they read?")
    overview.table(runs_table(report, links))
    sections = [overview]
    for index, comparison in enumerate(report.comparisons, start=1):
        key = f"cmp{index}"
        section = Section(
            key,
            f"{comparison.run_a} vs {comparison.run_b}",
            f"Did {comparison.run_b} judge the same {comparison.n_shared_items} items differently "
            f"from {comparison.run_a}, and is the difference real?",
        )
        for build in (
            _pairing_table,
            _accuracy_table,
            _position_table,
            _agreement_table,
            _scores_table,
        ):
            table = build(comparison, key)
            if table.rows or build is _pairing_table:
                section.table(table)
        changed = _changed_table(comparison, key, links)
        if changed.rows:
            section.table(changed)
        if comparison.study is not None:
            section.table(_versus_table(comparison.study, key))
        elif comparison.study_skipped:
            section.notes.append(f"Rubric vs holistic (ADR-016): {comparison.study_skipped}")
        sections.append(section)
    if report.studies:
        study = Section(
            "study",
            "Score study (ADR-016)",
            "Do judges agree more on rubric dimensions than on one holistic score, and do "
            "they rank the responses alike?",
        )
        study.table(reliability_table(report.studies))
        study.table(stability_table(report.studies))
        sections.append(study)
    return sections
