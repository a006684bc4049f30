"""Reliability section: test–retest, internal consistency, confidence calibration."""

from __future__ import annotations

from jurybox.analysis.model.metrics import CronbachAlphaMetric
from jurybox.analysis.model.reliability import (
    ConfidenceCalibration,
    InternalConsistency,
    PreferenceCalibrationSection,
    Reliability,
    ScoreCalibration,
    ScoreCalibrationSection,
    TestRetest,
)
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.tables import (
    Part,
    Section,
    Table,
    add_parts,
    cell,
    fmt_num,
    fmt_p,
    fmt_score,
    label,
    ordered_items,
)


def _reliability_parts(section: Section, node: Reliability) -> None:
    parts = (
        Part("test_retest", node.test_retest, _retest_tables),
        Part("internal_consistency", node.internal_consistency, _consistency_table),
        Part("confidence_calibration", node.confidence_calibration, _confidence_table),
    )
    add_parts(section, parts)


def _retest_tables(section: Section, node: TestRetest) -> None:
    table = section.table(
        Table(
            id="reliability-retest",
            title="Test–retest reliability (ICC(2,1))",
            columns=("Scope", "ICC [95% CI]", "Pairs"),
        )
    )
    for dim, metric in ordered_items(node.dimensions or {}):
        table.add(f"dimension: {label(dim)}", cell(table, metric), fmt_num(metric.n))
    for judge, metric in (node.judges or {}).items():
        table.add(f"judge: {judge} (total)", cell(table, metric), fmt_num(metric.n))
    for name, block in (("preferences", node.preferences), ("verdicts", node.verdicts)):
        if block is not None:
            table.add(
                f"{name}: percent agreement",
                cell(table, block.percent_agreement),
                fmt_num(block.n_pairs),
            )
            table.add(f"{name}: Cohen's κ", cell(table, block.cohen_kappa), fmt_num(block.n_pairs))


def _consistency_table(section: Section, node: InternalConsistency) -> None:
    table = section.table(
        Table(
            id="reliability-internal",
            title="Internal consistency across rubric dimensions",
            columns=("Scope", "Cronbach's α [95% CI]", "Subjects"),
        )
    )
    rows: list[tuple[str, CronbachAlphaMetric | None]] = [("pooled", node.pooled)]
    rows.extend((node.judges or {}).items())
    for scope, metric in rows:
        table.add(str(scope), cell(table, metric), fmt_num(metric.n if metric else None))
    table.note(f"Subjects: {node.subjects or 'record x arm'}.")


def _confidence_table(section: Section, node: ConfidenceCalibration) -> None:
    table = section.table(
        Table(
            id="reliability-confidence",
            title="Does stated confidence track being right?",
            columns=("Judgments", "Judge", "Spearman ρ [95% CI]", "p", "n", "Mean absolute error"),
        )
    )
    blocks: tuple[tuple[str, PreferenceCalibrationSection | ScoreCalibrationSection | None], ...]
    blocks = (("preferences", node.preferences), ("scores", node.scores))
    for kind, block in blocks:
        if block is None or not block.computed:
            continue
        table.note(f"{kind}: target = {block.target or '—'}.")
        for judge, entry in (block.judges or {}).items():
            rho = entry.spearman
            error = entry.mean_abs_error if isinstance(entry, ScoreCalibration) else None
            table.add(
                kind,
                str(judge),
                cell(table, rho),
                fmt_p(rho.p_value),
                fmt_num(rho.n),
                fmt_score(error),
            )


RELIABILITY: Family[Reliability] = Family(
    key="reliability",
    title="Reliability",
    question="Would the judges say the same thing again?",
    node=lambda report: report.reliability,
    build=_reliability_parts,
)
