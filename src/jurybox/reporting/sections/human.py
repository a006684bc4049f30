"""Human-calibration section: judges against human labels, and the annotators."""

from __future__ import annotations

from jurybox.analysis.model import Skipped
from jurybox.analysis.model.human import (
    HumanCalibration,
    HumanCriterion,
    HumanPreferences,
    HumanScores,
    InterAnnotator,
)
from jurybox.analysis.model.metrics import PPIMeanMetric, ProportionMetric
from jurybox.reporting.sections.family import Family
from jurybox.reporting.view.format import fmt_value_ci
from jurybox.reporting.view.tables import (
    Part,
    Section,
    Table,
    add_parts,
    cell,
    fmt_count,
    fmt_num,
    fmt_rate,
    label,
    ordered_items,
    present,
    skip_reason,
)

# --- human calibration ---------------------------------------------------------------------


def _human_parts(section: Section, node: HumanCalibration) -> None:
    parts = (
        Part("inter_annotator", node.inter_annotator, _annotator_table),
        Part("preferences", node.preferences, _human_pref_table),
        Part("scores", node.scores, _human_score_table),
        Part("criterion", node.criterion, _criterion_table),
    )
    add_parts(section, parts)


def _annotator_table(section: Section, node: InterAnnotator) -> None:
    table = section.table(
        Table(
            id="human-annotators",
            title="Agreement among the human annotators",
            columns=("Statistic", "Value", "n"),
        )
    )
    table.add(
        "Krippendorff's α",
        cell(table, node.krippendorff_alpha, interval=False),
        fmt_num(node.krippendorff_alpha.n if node.krippendorff_alpha else None),
    )
    table.add(
        "Fleiss' κ",
        cell(table, node.fleiss_kappa),
        fmt_num(node.fleiss_kappa.n if node.fleiss_kappa else None),
    )
    for pair in node.pairs or []:
        raters = " vs ".join(map(str, pair.raters))
        kappa = pair.cohen_kappa
        table.add(f"Cohen's κ, {raters}", cell(table, kappa), fmt_num(kappa.n))
    counts = node.majority_counts or {}
    if counts:
        table.note(
            "Majority labels: "
            + ", ".join(f"{k}: {v}" for k, v in counts.items())
            + f"; no majority: {node.no_majority or 0}."
        )


def _human_pref_table(section: Section, node: HumanPreferences) -> None:
    judges = node.judges or {}
    orders = sorted({o for e in judges.values() for o in e.orders})
    table = section.table(
        Table(
            id="human-preferences",
            title="Judge vs human preferences (Cohen's κ [95% CI])",
            columns=(
                "Judge",
                *[f"Order {o}" for o in orders],
                "Pooled",
                "Consolidated",
                "Gwet's AC1 (consolidated)",
                "n",
            ),
        )
    )
    for judge, entry in judges.items():
        cells = [cell(table, entry.orders.get(o)) for o in orders]
        table.add(
            str(judge),
            *cells,
            cell(table, entry.pooled),
            cell(table, entry.consolidated),
            cell(table, entry.consolidated_ac1),
            fmt_num(entry.pooled.n),
        )
    table.note("κ ≥ 0.4 is 'moderate' agreement (Landis & Koch 1977).")


def _human_score_table(section: Section, node: HumanScores) -> None:
    table = section.table(
        Table(
            id="human-scores",
            title="Judge vs human scores",
            columns=(
                "Judge",
                "Dimension",
                "Cohen's κ [95% CI]",
                "Linear κ",
                "Quadratic κ",
                "Gwet's AC2 (linear)",
                "ICC(2,1)",
                "n",
            ),
        )
    )
    for judge, entry in (node.judges or {}).items():
        for dim, metric in ordered_items(entry.dimensions):
            icc = entry.total_icc if dim == "total" else None
            table.add(
                str(judge),
                label(dim),
                cell(table, metric),
                cell(table, metric.weighted_linear, interval=False),
                cell(table, metric.weighted_quadratic, interval=False),
                cell(table, metric.gwet_ac2, interval=False),
                cell(table, icc) if icc else "—",
                fmt_num(metric.n),
            )
    if node.rounding:
        table.note(f"κ uses the {node.rounding}; weighted κ weighs over every point of the scale.")
    _prediction_powered_table(section, node)


def _prediction_powered_table(section: Section, node: HumanScores) -> None:
    """Each arm's mean score from the human-scored subset, sharpened by a judge's scores."""
    if not node.prediction_powered:
        return
    table = section.table(
        Table(
            id="human-ppi",
            title="Mean score from the human-scored subset and the judge (PPI++)",
            columns=(
                "Judge",
                "Arm",
                "Dimension",
                "Human-scored",
                "Judge only",
                "Human-only mean [95% CI]",
                "PPI++ mean [95% CI]",
            ),
        )
    )
    for judge, arms in node.prediction_powered.items():
        for arm, dims in arms.items():
            for dim, metric in ordered_items(dims):
                found = isinstance(metric, PPIMeanMetric) and metric.value is not None
                table.add(
                    str(judge),
                    str(arm),
                    label(dim),
                    *_ppi_counts(metric if found else None),
                    cell(table, metric),
                )
    if node.prediction_powered_method:
        table.note(f"PPI++: {node.prediction_powered_method}.")


def _ppi_counts(metric: PPIMeanMetric | Skipped | None) -> tuple[str, str, str]:
    """Labelled and unlabelled counts and the human-only mean with its interval."""
    if not isinstance(metric, PPIMeanMetric):
        return ("—", "—", "—")
    classical = fmt_value_ci(
        metric.classical_estimate, metric.classical_ci_low, metric.classical_ci_high, 2
    )
    return (fmt_num(metric.n_labelled), fmt_num(metric.n_unlabelled), classical)


def _criterion_table(section: Section, node: HumanCriterion) -> None:
    table = section.table(
        Table(
            id="human-criterion",
            title="Criterion verdicts against human Pass/Fail",
            columns=(
                "Judge",
                "TPR [95% CI]",
                "TNR [95% CI]",
                "Human pass rate",
                "Judge pass rate",
                "Corrected pass rate [95% CI]",
            ),
        )
    )
    for judge, entry in (node.judges or {}).items():
        if isinstance(entry, Skipped):
            table.add(str(judge), *["—"] * 5)
            table.note(f"{judge}: {skip_reason(entry)}")
            continue
        corrected = present(entry.corrected_pass_rate)
        if corrected is None:
            table.note(f"{judge}: corrected pass rate: {skip_reason(entry.corrected_pass_rate)}")
        table.add(
            str(judge),
            _prop(entry.tpr_tnr.tpr),
            _prop(entry.tpr_tnr.tnr),
            cell(table, entry.human_pass_rate),
            cell(table, entry.judge_pass_rate),
            cell(table, corrected) if corrected is not None else "—",
        )
    table.note(
        "Corrected pass rate: Rogan–Gladen over the unlabelled responses, interval "
        "carrying the uncertainty of both sets."
    )


def _prop(metric: ProportionMetric | None) -> str:
    """A nested proportion with its counts."""
    if metric is None:
        return "—"
    ci = f" [{fmt_rate(metric.ci_low)}, {fmt_rate(metric.ci_high)}]"
    return f"{fmt_rate(metric.value)} ({fmt_count(metric.successes, metric.n)}){ci}"


HUMAN_CALIBRATION: Family[HumanCalibration] = Family(
    key="human_calibration",
    title="Human calibration",
    question="Do the judges agree with humans?",
    node=lambda report: report.human_calibration,
    build=_human_parts,
    plots=("calibration",),
)
