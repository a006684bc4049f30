"""Plot data for the treatment-effect, dimension and calibration figures (see ``plot_data``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.effects import item_arm_scores
from jurybox.reporting._format import fmt_rate, fmt_score
from jurybox.reporting.plot_data_common import Json, value_of, why
from jurybox.reporting.plot_specs import (
    BarPanel,
    BarSeries,
    HeatmapPanel,
    LinePanel,
    LineSeries,
    PairedPanel,
    PlotSpec,
    not_applicable,
)
from jurybox.reporting.tables import computed, get

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
            BarSeries(
                "win rate",
                [value_of(m) for m in metrics],
                [value_of(m, "ci_low") for m in metrics],
                [value_of(m, "ci_high") for m in metrics],
                [fmt_rate(value_of(m)) for m in metrics],
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
    accuracy = get(report, "accuracy_vs_gold", "judges")
    if computed(report.get("accuracy_vs_gold")) and isinstance(accuracy, Mapping) and accuracy:
        orders = sorted({o for e in accuracy.values() for o in (e.get("orders") or {})})
        series = [
            _series(f"order {o}", [get(e, "orders", o) for e in accuracy.values()]) for o in orders
        ]
        series.append(_series("consolidated", [e.get("consolidated") for e in accuracy.values()]))
        return BarPanel(
            "Accuracy against the gold label",
            "accuracy",
            list(accuracy),
            series,
            reference=0.5,
            reference_label="coin flip (0.5)",
            ylim=(0.0, 1.0),
        )
    prefs = get(report, "human_calibration", "preferences", "judges")
    if isinstance(prefs, Mapping) and prefs:
        series = [_series("pooled κ", [e.get("pooled") for e in prefs.values()])]
        return BarPanel(
            "Cohen's κ with human preferences",
            "Cohen's κ",
            list(prefs),
            series,
            reference=0.4,
            reference_label="moderate (0.4)",
            ylim=(-0.2, 1.0),
        )
    criterion = get(report, "human_calibration", "criterion", "judges")
    if isinstance(criterion, Mapping) and criterion:
        entries = [e for e in criterion.values() if isinstance(e, Mapping)]
        series = [
            _series(k.upper(), [get(e, "tpr_tnr", k) for e in entries], key="estimate")
            for k in ("tpr", "tnr")
        ]
        return BarPanel(
            "Criterion verdicts vs human Pass/Fail",
            "rate",
            list(criterion),
            series,
            ylim=(0.0, 1.0),
        )
    return None


def _series(label: str, metrics: Sequence[Any], key: str = "value") -> BarSeries:
    return BarSeries(
        label,
        [value_of(m, key) for m in metrics],
        [value_of(m, "ci_low") for m in metrics],
        [value_of(m, "ci_high") for m in metrics],
    )


def _confidence_panel(report: Json) -> LinePanel | None:
    block = get(report, "reliability", "confidence_calibration", "preferences")
    if not computed(block) or not isinstance(get(block, "judges"), Mapping):
        return None
    levels = {float(v): str(k) for k, v in (block.get("confidence_levels") or {}).items()}
    series = []
    for judge, entry in block["judges"].items():
        bins = [b for b in entry.get("bins") or [] if value_of(b) is not None]
        if bins:
            series.append(
                LineSeries(
                    str(judge),
                    [float(b["confidence"]) for b in bins],
                    [value_of(b) or 0.0 for b in bins],
                    [value_of(b, "ci_low") for b in bins],
                    [value_of(b, "ci_high") for b in bins],
                )
            )
    if not series:
        return None
    target = "right vs human" if block.get("target") == "correct_vs_human" else "order-consistent"
    return LinePanel(
        "Stated confidence vs being right",
        "stated confidence",
        f"share {target}",
        series,
        xticks=levels or None,
        ylim=(0.0, 1.05),
    )
