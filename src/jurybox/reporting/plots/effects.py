"""Plot data for the treatment-effect, dimension and calibration figures (see ``plots``)."""

from __future__ import annotations

from collections.abc import Sequence

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.effects import item_arm_scores
from jurybox.analysis.model import Report
from jurybox.analysis.model.bias import JudgeMean, LeniencyJudge
from jurybox.analysis.model.effects import Effects, PairedTests
from jurybox.analysis.model.human import CriterionJudge
from jurybox.analysis.model.reliability import (
    ConfidenceBin,
    PreferenceCalibrationSection,
    ScoreCalibrationSection,
)
from jurybox.reporting.plots.common import interval_series, number, value_of, why
from jurybox.reporting.plots.specs import (
    BarPanel,
    HeatmapPanel,
    LinePanel,
    LineSeries,
    PairedPanel,
    PlotSpec,
    not_applicable,
)
from jurybox.reporting.view.format import fmt_rate, fmt_score
from jurybox.reporting.view.tables import present

# --- treatment effect ----------------------------------------------------------------------


def treatment_effect(report: Report, frame: AnalysisFrame | None) -> PlotSpec:
    name, title = "treatment_effect", "Treatment effect"
    effects = report.effects
    if not effects.computed:
        return not_applicable(name, title, why(effects, "no treatment-effect analysis"))
    control, treatment = str(effects.control_arm), str(effects.treatment_arm)
    scores = effects.scores
    overall = scores.overall if scores is not None and scores.computed else None
    total = present(overall.dimensions.get(TOTAL)) if overall else None
    if frame is not None and total is not None:
        wide = item_arm_scores(frame, TOTAL)
        if {control, treatment} <= set(wide.columns):
            both = wide[[control, treatment]].dropna()
            pairs = [(float(a), float(b)) for a, b in both.itertuples(index=False)]
            means = (number(total.control_mean), number(total.treatment_mean))
            panel = PairedPanel(
                f"Total score per item: {control} vs {treatment}",
                "total score (mean over judges)",
                (control, treatment),
                pairs,
                means,
            )
            return PlotSpec(
                name,
                title,
                (panel,),
                caption="Grey lines: one item each (its "
                "mean total score under each arm); orange: the means.",
            )
    return _effect_fallback(effects, control, treatment, name, title)


def _effect_fallback(
    effects: Effects, control: str, treatment: str, name: str, title: str
) -> PlotSpec:
    prefs = effects.preferences
    if prefs is None or not prefs.computed:
        reason = why(effects.scores, "no scores") + "; " + why(prefs, "no preferences")
        return not_applicable(name, title, reason)
    raters = {str(j): m for j, m in (prefs.judges or {}).items()}
    if prefs.panel:
        raters["panel (majority)"] = prefs.panel
    metrics = list(raters.values())
    panel = BarPanel(
        title=f"Win rate of {treatment} over {control}",
        ylabel="win rate (ties count half)",
        categories=list(raters),
        series=[
            interval_series(
                "win rate", metrics, annotations=[fmt_rate(value_of(m)) for m in metrics]
            )
        ],
        reference=0.5,
        reference_label="no difference (0.5)",
        ylim=(0.0, 1.08),
    )
    return PlotSpec(
        name,
        title,
        (panel,),
        status="fallback",
        note="fallback: pairwise data has no paired scores, so the plot shows win rates per judge",
        caption="Win rate of the treatment arm per judge and for the panel's majority, "
        "with 95% intervals.",
    )


# --- dimension heatmap ---------------------------------------------------------------------


def dimension_heatmap(report: Report) -> PlotSpec:
    name, title = "dimension_heatmap", "Mean score per dimension and condition"
    effects = report.effects
    scores = effects.scores
    overall = scores.overall if scores is not None and scores.computed else None
    dims = overall.dimensions if overall else {}
    if dims:
        control, treatment = str(effects.control_arm), str(effects.treatment_arm)
        tests = {d: t for d, t in dims.items() if isinstance(t, PairedTests)}
        rows = list(tests)
        values = [[number(tests[d].control_mean), number(tests[d].treatment_mean)] for d in rows]
        if rows:
            return _heatmap_spec(
                name,
                title,
                rows,
                [control, treatment],
                values=values,
                colorbar="mean score (over items)",
            )
    leniency = report.bias.leniency.judges if report.bias.leniency else None
    if leniency:
        return _leniency_heatmap(leniency, name, title)
    reason = why(scores, "") or why(effects, "no per-dimension scores")
    return not_applicable(name, title, f"no per-dimension scores ({reason})")


def _leniency_heatmap(judges: dict[str, LeniencyJudge], name: str, title: str) -> PlotSpec:
    dims = list(dict.fromkeys(d for e in judges.values() for d in e.dimensions))
    if not dims:
        return not_applicable(name, title, "the records carry no per-dimension scores")
    values = [[_mean(judges[j].dimensions.get(d)) for j in judges] for d in dims]
    spec = _heatmap_spec(
        name, title, dims, list(judges), values=values, colorbar="mean score per judge"
    )
    return PlotSpec(
        name,
        title,
        spec.panels,
        status="fallback",
        note="fallback: no two-arm contrast, so columns are judges, not conditions",
        caption=spec.caption,
    )


def _mean(entry: JudgeMean | None) -> float | None:
    return number(entry.mean) if entry else None


def _heatmap_spec(
    name: str,
    title: str,
    rows: Sequence[str],
    columns: Sequence[str],
    *,
    values: list[list[float | None]],
    colorbar: str,
) -> PlotSpec:
    cells = [[fmt_score(v) for v in row] for row in values]
    labels = ["total (overall)" if r == TOTAL else r for r in rows]
    panel = HeatmapPanel(title, labels, columns, values, cells, colorbar)
    return PlotSpec(name, title, (panel,), caption="Cell: mean score (2 decimals).")


# --- calibration ---------------------------------------------------------------------------


def calibration(report: Report) -> PlotSpec:
    """Judges against human labels (left) and a reliability diagram of stated confidence."""
    name, title = "calibration", "Calibration against humans and stated confidence"
    left = _human_panel(report)
    right = _confidence_panel(report)
    panels = [p for p in (left, right) if p is not None]
    if not panels:
        return not_applicable(
            name, title, "no human labels and no judgment with a stated confidence"
        )
    return PlotSpec(
        name,
        title,
        panels,
        caption="Left: agreement of each judge with the human labels, with 95% "
        "intervals. Right (when judges state a confidence): share of judgments that "
        "were right at each stated confidence level.",
    )


def _human_panel(report: Report) -> BarPanel | None:
    """The first kind of human comparison the report holds: gold accuracy, preference κ,
    score κ / ICC, criterion TPR / TNR."""
    for build in (_accuracy_panel, _preference_kappa_panel, _score_kappa_panel, _criterion_panel):
        panel = build(report)
        if panel is not None:
            return panel
    return None


def _accuracy_panel(report: Report) -> BarPanel | None:
    accuracy = report.accuracy_vs_gold.judges
    if not report.accuracy_vs_gold.computed or not accuracy:
        return None
    orders = sorted({o for e in accuracy.values() for o in e.orders})
    series = [
        interval_series(f"order {o}", [e.orders.get(o) for e in accuracy.values()]) for o in orders
    ]
    series.append(interval_series("consolidated", [e.consolidated for e in accuracy.values()]))
    return BarPanel(
        "Accuracy against the gold label",
        "accuracy",
        list(accuracy),
        series,
        reference=0.5,
        reference_label="coin flip (0.5)",
        ylim=(0.0, 1.0),
    )


def _preference_kappa_panel(report: Report) -> BarPanel | None:
    node = report.human_calibration.preferences
    prefs = node.judges if node else None
    if not prefs:
        return None
    series = [interval_series("pooled κ", [e.pooled for e in prefs.values()])]
    return BarPanel(
        "Cohen's κ with human preferences",
        "Cohen's κ",
        list(prefs),
        series,
        reference=0.4,
        reference_label="moderate (0.4)",
        ylim=(-0.2, 1.0),
    )


def _score_kappa_panel(report: Report) -> BarPanel | None:
    node = report.human_calibration.scores
    judges = node.judges if node else None
    if not judges:
        return None
    entries = list(judges.values())
    totals = [e.dimensions.get(TOTAL) for e in entries]
    series = [
        interval_series("Cohen's κ (total, rounded)", totals),
        interval_series(
            "quadratic κ (total)", [t.weighted_quadratic if t else None for t in totals]
        ),
        interval_series("ICC(2,1) (total)", [e.total_icc for e in entries]),
    ]
    return BarPanel(
        "Judge vs human total scores",
        "agreement",
        list(judges),
        series,
        reference=0.4,
        reference_label="κ moderate (0.4)",
        ylim=(-0.2, 1.0),
    )


def _criterion_panel(report: Report) -> BarPanel | None:
    node = report.human_calibration.criterion
    criterion = {
        name: entry.tpr_tnr
        for name, entry in ((node.judges if node else None) or {}).items()
        if isinstance(entry, CriterionJudge)
    }
    if not criterion:
        return None
    names = list(criterion)
    series = [
        interval_series("TPR", [criterion[n].tpr for n in names]),
        interval_series("TNR", [criterion[n].tnr for n in names]),
    ]
    return BarPanel("Criterion verdicts vs human Pass/Fail", "rate", names, series, ylim=(0.0, 1.0))


_CONFIDENCE_TITLES = {
    "preferences": ("Stated confidence vs being right", "share right"),
    "scores": ("Stated confidence vs score error", "share within one point of the reference"),
}


def _confidence_blocks(
    report: Report,
) -> list[tuple[str, PreferenceCalibrationSection | ScoreCalibrationSection | None]]:
    node = report.reliability.confidence_calibration
    if node is None:
        return []
    return [("preferences", node.preferences), ("scores", node.scores)]


def _confidence_panel(report: Report) -> LinePanel | None:
    """A reliability diagram: share right per stated confidence level, per judge."""
    for kind, block in _confidence_blocks(report):
        title, ylabel = _CONFIDENCE_TITLES[kind]
        if block is None or not block.computed or block.judges is None:
            continue
        series = [s for s in (_bin_series(j, e.bins) for j, e in block.judges.items()) if s]
        if series:
            stated = (
                block.confidence_levels if isinstance(block, PreferenceCalibrationSection) else None
            )
            levels = {float(v): str(k) for k, v in (stated or {}).items()}
            return LinePanel(
                f"{title} ({kind})",
                "stated confidence",
                ylabel,
                series,
                xticks=levels or None,
                ylim=(0.0, 1.05),
            )
    return None


def _bin_series(judge: str, all_bins: list[ConfidenceBin]) -> LineSeries | None:
    """One judge's bins; None when the bins do not carry distinct confidence levels."""
    bins = [b for b in all_bins if value_of(b) is not None]
    levels = [number(b.stated_confidence) for b in bins]
    if len(bins) < 2 or None in levels or len(set(levels)) != len(levels):
        return None
    return LineSeries(
        str(judge),
        [float(x or 0.0) for x in levels],
        [value_of(b) or 0.0 for b in bins],
        [number(b.ci_low) for b in bins],
        [number(b.ci_high) for b in bins],
    )
