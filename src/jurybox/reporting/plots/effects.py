"""Plot data for the treatment-effect, dimension and calibration figures (see ``plots``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

import pandas as pd

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.effects import item_arm_scores
from jurybox.analysis.model import Report
from jurybox.analysis.model.bias import JudgeMean, LeniencyJudge
from jurybox.analysis.model.effects import PairedTests
from jurybox.analysis.model.human import CriterionJudge
from jurybox.analysis.model.reliability import (
    ConfidenceBin,
    PreferenceCalibrationSection,
    ScoreCalibrationSection,
)
from jurybox.reporting.plots.common import (
    ScoreScale,
    interval_series,
    number,
    score_scale,
    top_judges,
    value_of,
    why,
)
from jurybox.reporting.plots.dense import MAX_MARKS, sample_index, shown_note
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

T = TypeVar("T")
MAX_ITEM_LINES = MAX_MARKS // 2  # a paired plot draws two marks per item

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
            pairs, sampled = _item_pairs(wide[[control, treatment]].dropna())
            means = (number(total.control_mean), number(total.treatment_mean))
            scale = score_scale(report, frame)
            panel = PairedPanel(
                f"Total score per item: {control} vs {treatment}",
                "total score (mean over judges)",
                (control, treatment),
                pairs,
                means,
                ylim=scale.limits if scale else None,
            )
            axis = f" The score axis spans {scale.source}." if scale else ""
            return PlotSpec(
                name,
                title,
                (panel,),
                caption="Grey lines: one item each (its "
                f"mean total score under each arm); orange: the means.{axis}"
                + (f" {sampled}" if sampled else ""),
                sampled=sampled,
            )
    return _effect_fallback(report, control, treatment, name, title)


def _item_pairs(both: pd.DataFrame) -> tuple[list[tuple[float, float]], str | None]:
    """Each item's (control, treatment) pair, or past ``MAX_ITEM_LINES`` items a seeded sample
    of them; and what is sampled (None: nothing). The means drawn are the report's, of all."""
    every = both.to_numpy(dtype=float)
    pick = sample_index(len(every), MAX_ITEM_LINES)
    if pick is None:
        return [(a, b) for a, b in every.tolist()], None
    shown = [(a, b) for a, b in every[pick].tolist()]
    orange = "the orange means: every item"
    return shown, shown_note(len(shown), len(every), "items", MAX_ITEM_LINES, orange)


def _effect_fallback(
    report: Report, control: str, treatment: str, name: str, title: str
) -> PlotSpec:
    effects = report.effects
    prefs = effects.preferences
    if prefs is None or not prefs.computed:
        reason = why(effects.scores, "no scores") + "; " + why(prefs, "no preferences")
        return not_applicable(name, title, reason)
    every = {str(j): m for j, m in (prefs.judges or {}).items()}
    kept, left_out = top_judges(report, every)
    raters = {j: every[j] for j in kept}
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
        ylim=(0.0, 1.0),
    )
    return PlotSpec(
        name,
        title,
        (panel,),
        left_out=left_out,
        status="fallback",
        note="fallback: pairwise data has no paired scores, so the plot shows win rates per judge",
        caption="Win rate of the treatment arm per judge and for the panel's majority, "
        "with 95% intervals.",
    )


# --- dimension heatmap ---------------------------------------------------------------------


def dimension_heatmap(report: Report, frame: AnalysisFrame | None = None) -> PlotSpec:
    name, title = "dimension_heatmap", "Mean score per dimension and condition"
    scale = score_scale(report, frame)
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
                scale=scale,
            )
    leniency = report.bias.leniency.judges if report.bias.leniency else None
    if leniency:
        kept, left_out = top_judges(report, leniency)
        spec = _leniency_heatmap({j: leniency[j] for j in kept}, name, title, scale)
        return replace(spec, left_out=left_out)
    reason = why(scores, "") or why(effects, "no per-dimension scores")
    return not_applicable(name, title, f"no per-dimension scores ({reason})")


def _leniency_heatmap(
    judges: dict[str, LeniencyJudge], name: str, title: str, scale: ScoreScale | None
) -> PlotSpec:
    dims = list(dict.fromkeys(d for e in judges.values() for d in e.dimensions))
    if not dims:
        return not_applicable(name, title, "the records carry no per-dimension scores")
    values = [[_mean(judges[j].dimensions.get(d)) for j in judges] for d in dims]
    spec = _heatmap_spec(
        name, title, dims, list(judges), values=values, colorbar="mean score per judge", scale=scale
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
    scale: ScoreScale | None,
) -> PlotSpec:
    cells = [[fmt_score(v) for v in row] for row in values]
    labels = ["total (overall)" if r == TOTAL else r for r in rows]
    low, high = scale.limits if scale else (None, None)
    panel = HeatmapPanel(title, labels, columns, values, cells, colorbar, low, high)
    span = f" Colours span {scale.source}." if scale else ""
    return PlotSpec(name, title, (panel,), caption=f"Cell: mean score (2 decimals).{span}")


# --- calibration ---------------------------------------------------------------------------


def calibration(report: Report) -> PlotSpec:
    """Judges against human labels (top) and a reliability diagram of stated confidence
    (bottom); each part only when its data exists, and the caption names only what is drawn."""
    name, title = "calibration", "Calibration against humans and stated confidence"
    shown, left_out = top_judges(report, [j.name for j in report.summary.judges])
    kept = set(shown)
    parts = [p for p in (_human_panel(report, kept), _confidence_panel(report, kept)) if p]
    if not parts:
        return not_applicable(
            name, title, "no human labels and no judgment with a stated confidence"
        )
    panels = [panel for panel, _ in parts]
    first = parts[0][1]
    caption = first[:1].upper() + first[1:]
    if len(parts) == 2:
        caption = f"Top: {first} Bottom: {parts[1][1]}"
    return PlotSpec(name, title, panels, caption=caption, left_out=left_out)


Part = tuple[BarPanel | LinePanel, str]


def _human_panel(report: Report, kept: set[str]) -> Part | None:
    """The first kind of human comparison the report holds: gold accuracy, preference κ,
    score κ / ICC, criterion TPR / TNR."""
    for build in (_accuracy_panel, _preference_kappa_panel, _score_kappa_panel, _criterion_panel):
        part = build(report, kept)
        if part is not None:
            return part
    return None


def _only(entries: dict[str, T], kept: set[str]) -> dict[str, T]:
    """The entries of the judges a capped figure shows (all of them when none is named)."""
    chosen = {name: entry for name, entry in entries.items() if name in kept}
    return chosen or entries


def _accuracy_panel(report: Report, kept: set[str]) -> Part | None:
    every = report.accuracy_vs_gold.judges
    if not report.accuracy_vs_gold.computed or not every:
        return None
    accuracy = _only(dict(every), kept)
    orders = sorted({o for e in accuracy.values() for o in e.orders})
    series = [
        interval_series(f"order {o}", [e.orders.get(o) for e in accuracy.values()]) for o in orders
    ]
    series.append(interval_series("consolidated", [e.consolidated for e in accuracy.values()]))
    panel = BarPanel(
        "Accuracy against the gold label",
        "accuracy",
        list(accuracy),
        series,
        reference=0.5,
        reference_label="coin flip (0.5)",
        ylim=(0.0, 1.0),
    )
    return panel, (
        "each judge's accuracy against the gold label, per presentation order and "
        "consolidated over both, with 95% intervals (axis 0 to 1)."
    )


def _preference_kappa_panel(report: Report, kept: set[str]) -> Part | None:
    node = report.human_calibration.preferences
    every = node.judges if node else None
    if not every:
        return None
    prefs = _only(dict(every), kept)
    series = [interval_series("pooled κ", [e.pooled for e in prefs.values()])]
    panel = BarPanel(
        "Cohen's κ with human preferences",
        "Cohen's κ",
        list(prefs),
        series,
        reference=0.4,
        reference_label="moderate (0.4)",
        ylim=KAPPA_RANGE,
    )
    return panel, (
        "Cohen's κ of each judge with the human preferences, with 95% intervals (axis −1 to 1)."
    )


def _score_kappa_panel(report: Report, kept: set[str]) -> Part | None:
    node = report.human_calibration.scores
    every = node.judges if node else None
    if not every:
        return None
    judges = _only(dict(every), kept)
    entries = list(judges.values())
    totals = [e.dimensions.get(TOTAL) for e in entries]
    series = [
        interval_series("Cohen's κ (total, rounded)", totals),
        interval_series(
            "quadratic κ (total)", [t.weighted_quadratic if t else None for t in totals]
        ),
        interval_series("ICC(2,1) (total)", [e.total_icc for e in entries]),
    ]
    panel = BarPanel(
        "Judge vs human total scores",
        "agreement",
        list(judges),
        series,
        reference=0.4,
        reference_label="κ moderate (0.4)",
        ylim=KAPPA_RANGE,
    )
    return panel, (
        "agreement of each judge's total scores with the human scores (Cohen's κ, quadratic κ, "
        "ICC), with 95% intervals (axis −1 to 1)."
    )


def _criterion_panel(report: Report, kept: set[str]) -> Part | None:
    node = report.human_calibration.criterion
    every = {
        name: entry.tpr_tnr
        for name, entry in ((node.judges if node else None) or {}).items()
        if isinstance(entry, CriterionJudge)
    }
    if not every:
        return None
    criterion = _only(every, kept)
    names = list(criterion)
    series = [
        interval_series("TPR", [criterion[n].tpr for n in names]),
        interval_series("TNR", [criterion[n].tnr for n in names]),
    ]
    panel = BarPanel(
        "Criterion verdicts vs human Pass/Fail", "rate", names, series, ylim=(0.0, 1.0)
    )
    return panel, (
        "share of human Pass items each judge passed (TPR) and of human Fail items it failed "
        "(TNR), with 95% intervals (axis 0 to 1)."
    )


KAPPA_RANGE = (-1.0, 1.0)


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


def _confidence_panel(report: Report, kept: set[str]) -> Part | None:
    """A reliability diagram: share right per stated confidence level, per judge."""
    for kind, block in _confidence_blocks(report):
        title, ylabel = _CONFIDENCE_TITLES[kind]
        if block is None or not block.computed or block.judges is None:
            continue
        judges = _only(dict(block.judges), kept)
        series = [s for s in (_bin_series(j, e.bins) for j, e in judges.items()) if s]
        if series:
            stated = (
                block.confidence_levels if isinstance(block, PreferenceCalibrationSection) else None
            )
            levels = {float(v): str(k) for k, v in (stated or {}).items()}
            panel = LinePanel(
                f"{title} ({kind})",
                "stated confidence",
                ylabel,
                series,
                xticks=levels or None,
                ylim=(0.0, 1.0),
            )
            return panel, (
                f"{ylabel} at each stated confidence level, per judge, with 95% bands "
                "(axis 0 to 1)."
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
