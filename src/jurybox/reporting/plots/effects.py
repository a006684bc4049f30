"""Plot data for the treatment-effect, dimension and calibration figures (see ``plots``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.effects import item_arm_scores
from jurybox.reporting.plots.common import Json, interval_series, value_of, why
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
from jurybox.reporting.view.tables import computed, get

# --- treatment effect ----------------------------------------------------------------------


def treatment_effect(report: Json, frame: AnalysisFrame | None) -> PlotSpec:
    name, title = "treatment_effect", "Treatment effect"
    effects = report.get("effects")
    if not computed(effects) or effects is None:
        return not_applicable(name, title, why(effects, "no treatment-effect analysis"))
    control, treatment = str(effects.get("control_arm")), str(effects.get("treatment_arm"))
    total = get(effects, "scores", "overall", "dimensions", TOTAL)
    if frame is not None and computed(effects.get("scores")) and isinstance(total, Mapping):
        wide = item_arm_scores(frame, TOTAL)
        if {control, treatment} <= set(wide.columns):
            both = wide[[control, treatment]].dropna()
            pairs = [(float(a), float(b)) for a, b in both.itertuples(index=False)]
            means = (value_of(total, "control_mean"), value_of(total, "treatment_mean"))
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
    effects: Json, control: str, treatment: str, name: str, title: str
) -> PlotSpec:
    prefs = effects.get("preferences")
    if not computed(prefs) or prefs is None:
        reason = why(effects.get("scores"), "no scores") + "; " + why(prefs, "no preferences")
        return not_applicable(name, title, reason)
    raters = {**{str(j): m for j, m in (prefs.get("judges") or {}).items()}}
    if prefs.get("panel"):
        raters["panel (majority)"] = prefs["panel"]
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


def dimension_heatmap(report: Json) -> PlotSpec:
    name, title = "dimension_heatmap", "Mean score per dimension and condition"
    effects = report.get("effects") or {}
    dims = get(effects, "scores", "overall", "dimensions")
    if computed(get(effects, "scores")) and isinstance(dims, Mapping) and dims:
        control, treatment = str(effects.get("control_arm")), str(effects.get("treatment_arm"))
        rows = [d for d in dims if isinstance(dims[d], Mapping) and "control_mean" in dims[d]]
        values = [
            [value_of(dims[d], "control_mean"), value_of(dims[d], "treatment_mean")] for d in rows
        ]
        if rows:
            return _heatmap_spec(
                name,
                title,
                rows,
                [control, treatment],
                values=values,
                colorbar="mean score (over items)",
            )
    leniency = get(report, "bias", "leniency", "judges")
    if isinstance(leniency, Mapping) and leniency:
        return _leniency_heatmap(leniency, name, title)
    reason = why(get(effects, "scores"), "") or why(effects, "no per-dimension scores")
    return not_applicable(name, title, f"no per-dimension scores ({reason})")


def _leniency_heatmap(judges: Json, name: str, title: str) -> PlotSpec:
    dims = list(dict.fromkeys(d for e in judges.values() for d in (e.get("dimensions") or {})))
    if not dims:
        return not_applicable(name, title, "the records carry no per-dimension scores")
    values = [[value_of(get(judges[j], "dimensions", d), "mean") for j in judges] for d in dims]
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


def calibration(report: Json) -> PlotSpec:
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


def _human_panel(report: Json) -> BarPanel | None:
    """The first kind of human comparison the report holds: gold accuracy, preference κ,
    score κ / ICC, criterion TPR / TNR."""
    for build in (_accuracy_panel, _preference_kappa_panel, _score_kappa_panel, _criterion_panel):
        panel = build(report)
        if panel is not None:
            return panel
    return None


def _accuracy_panel(report: Json) -> BarPanel | None:
    accuracy = get(report, "accuracy_vs_gold", "judges")
    if (
        not computed(report.get("accuracy_vs_gold"))
        or not isinstance(accuracy, Mapping)
        or not accuracy
    ):
        return None
    orders = sorted({o for e in accuracy.values() for o in (e.get("orders") or {})})
    series = [
        interval_series(f"order {o}", [get(e, "orders", o) for e in accuracy.values()])
        for o in orders
    ]
    series.append(
        interval_series("consolidated", [e.get("consolidated") for e in accuracy.values()])
    )
    return BarPanel(
        "Accuracy against the gold label",
        "accuracy",
        list(accuracy),
        series,
        reference=0.5,
        reference_label="coin flip (0.5)",
        ylim=(0.0, 1.0),
    )


def _preference_kappa_panel(report: Json) -> BarPanel | None:
    prefs = get(report, "human_calibration", "preferences", "judges")
    if not isinstance(prefs, Mapping) or not prefs:
        return None
    series = [interval_series("pooled κ", [e.get("pooled") for e in prefs.values()])]
    return BarPanel(
        "Cohen's κ with human preferences",
        "Cohen's κ",
        list(prefs),
        series,
        reference=0.4,
        reference_label="moderate (0.4)",
        ylim=(-0.2, 1.0),
    )


def _score_kappa_panel(report: Json) -> BarPanel | None:
    judges = get(report, "human_calibration", "scores", "judges")
    if not isinstance(judges, Mapping) or not judges:
        return None
    entries = list(judges.values())
    series = [
        interval_series(
            "Cohen's κ (total, rounded)", [get(e, "dimensions", TOTAL) for e in entries]
        ),
        interval_series(
            "quadratic κ (total)",
            [get(e, "dimensions", TOTAL, "weighted_quadratic") for e in entries],
        ),
        interval_series("ICC(2,1) (total)", [e.get("total_icc") for e in entries]),
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


def _criterion_panel(report: Json) -> BarPanel | None:
    criterion = get(report, "human_calibration", "criterion", "judges")
    if not isinstance(criterion, Mapping) or not criterion:
        return None
    names = [n for n, e in criterion.items() if isinstance(get(e, "tpr_tnr"), Mapping)]
    if not names:
        return None
    series = [
        interval_series(k.upper(), [get(criterion[n], "tpr_tnr", k) for n in names], key="estimate")
        for k in ("tpr", "tnr")
    ]
    return BarPanel("Criterion verdicts vs human Pass/Fail", "rate", names, series, ylim=(0.0, 1.0))


_CONFIDENCE_TITLES = {
    "preferences": ("Stated confidence vs being right", "share right"),
    "scores": ("Stated confidence vs score error", "share within one point of the reference"),
}


def _confidence_panel(report: Json) -> LinePanel | None:
    """A reliability diagram: share right per stated confidence level, per judge."""
    for kind, (title, ylabel) in _CONFIDENCE_TITLES.items():
        block = get(report, "reliability", "confidence_calibration", kind)
        if not computed(block) or not isinstance(get(block, "judges"), Mapping):
            continue
        series = [s for s in (_bin_series(j, e) for j, e in block["judges"].items()) if s]
        if series:
            levels = {float(v): str(k) for k, v in (block.get("confidence_levels") or {}).items()}
            return LinePanel(
                f"{title} ({kind})",
                "stated confidence",
                ylabel,
                series,
                xticks=levels or None,
                ylim=(0.0, 1.05),
            )
    return None


def _bin_series(judge: str, entry: Json) -> LineSeries | None:
    """One judge's bins; None when the bins do not carry distinct confidence levels."""
    bins = [b for b in entry.get("bins") or [] if value_of(b) is not None]
    levels = [value_of(b, "stated_confidence") for b in bins]
    if len(bins) < 2 or None in levels or len(set(levels)) != len(levels):
        return None
    return LineSeries(
        str(judge),
        [float(x or 0.0) for x in levels],
        [value_of(b) or 0.0 for b in bins],
        [value_of(b, "ci_low") for b in bins],
        [value_of(b, "ci_high") for b in bins],
    )
