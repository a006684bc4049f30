"""Plot data for the bias and agreement figures (see ``plots``)."""

from __future__ import annotations

from collections.abc import Mapping

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.frame import judge_scores
from jurybox.reporting.plots.common import Json, interval_series, value_of, why
from jurybox.reporting.plots.specs import (
    BarPanel,
    BarSeries,
    BoxPanel,
    HeatmapPanel,
    NotApplicablePanel,
    PlotSpec,
    ScatterPanel,
    not_applicable,
)
from jurybox.reporting.view.format import fmt_count, fmt_rate
from jurybox.reporting.view.tables import computed, get

# --- position bias -------------------------------------------------------------------------


def position_bias(report: Json) -> PlotSpec:
    title = "Position bias by judge"
    node = get(report, "bias", "position")
    if not computed(node) or node is None:
        return not_applicable("position_bias", title, why(node, "no position-bias analysis"))
    judges: dict[str, Json] = dict(node.get("judges") or {})
    threshold = value_of(get(report, "options", "thresholds"), "swap_consistency_min")
    return PlotSpec(
        "position_bias",
        title,
        (_swap_panel(judges, threshold), _first_position_panel(judges)),
        caption="Left: share of pairs with the same verdict when the responses trade "
        "places (labels: consistent/pairs). Right: share of decisive verdicts for the "
        "response shown first, with 95% intervals.",
    )


def _swap_panel(judges: dict[str, Json], threshold: float | None) -> BarPanel | NotApplicablePanel:
    title = "Swap consistency (same verdict in both orders)"
    swaps = [entry.get("swap_consistency") or {} for entry in judges.values()]
    if all(value_of(s) is None for s in swaps):
        return NotApplicablePanel(title, why(swaps[0] if swaps else None, "no swapped pair"))
    series = BarSeries(
        "swap consistency",
        [value_of(s) for s in swaps],
        annotations=[_swap_label(s) for s in swaps],
    )
    return BarPanel(
        title=title,
        ylabel="share of pairs",
        categories=list(judges),
        series=[series],
        reference=threshold,
        reference_label=None if threshold is None else f"trust threshold {fmt_rate(threshold)}",
        ylim=(0.0, 1.08),
    )


def _first_position_panel(judges: dict[str, Json]) -> BarPanel:
    firsts = [entry.get("first_position_rate") or {} for entry in judges.values()]
    series = interval_series("first-position rate", firsts)
    return BarPanel(
        title="First-position rate (decisive verdicts)",
        ylabel="share choosing the response shown first",
        categories=list(judges),
        series=[series],
        reference=0.5,
        reference_label="no position bias (0.5)",
        ylim=(0.0, 1.0),
    )


def _swap_label(metric: Json) -> str:
    if value_of(metric) is None:
        return "n/a"
    return f"{fmt_rate(metric['value'])} ({fmt_count(metric.get('consistent'), metric.get('n'))})"


# --- verbosity -----------------------------------------------------------------------------


def verbosity(report: Json, frame: AnalysisFrame | None) -> PlotSpec:
    name, title = "verbosity_scatter", "Response length vs judgment"
    node = get(report, "bias", "verbosity")
    if not computed(node) or node is None:
        return not_applicable(name, title, why(node, "no verbosity analysis"))
    if frame is not None and not frame.scores.empty and not frame.items.empty:
        scores = judge_scores(frame).merge(
            frame.items[["query_id", "arm", "length"]], on=["query_id", "arm"]
        )
        if not scores.empty:
            groups = {
                str(j): (list(g["length"].astype(float)), list(g["score"].astype(float)))
                for j, g in scores.groupby("judge")
            }
            panel = ScatterPanel(
                "Length vs total score (one point per judge x response)",
                "response length (characters)",
                "total score",
                groups,
            )
            return PlotSpec(
                name,
                title,
                (panel,),
                caption="Each point is one judge's mean total "
                "score of one response against that response's length.",
            )
    return _verbosity_fallback(node, name, title)


def _verbosity_fallback(node: Json, name: str, title: str) -> PlotSpec:
    judges = {j: get(e, "preferences", "longer_preferred") for j, e in node["judges"].items()}
    judges = {j: m for j, m in judges.items() if isinstance(m, Mapping)}
    if not judges:
        return not_applicable(name, title, "no score or preference matches a response length")
    metrics = list(judges.values())
    panel = BarPanel(
        title="Share of decisive verdicts won by the longer response",
        ylabel="share won by the longer response",
        categories=list(judges),
        series=[
            interval_series(
                "longer wins",
                metrics,
                annotations=[fmt_count(m.get("successes"), m.get("n")) for m in metrics],
            )
        ],
        reference=0.5,
        reference_label="no length preference (0.5)",
        ylim=(0.0, 1.08),
    )
    return PlotSpec(
        name,
        title,
        (panel,),
        status="fallback",
        note="fallback: pairwise data has no scores, so the plot shows how often the "
        "longer response wins instead of a length-vs-score scatter",
        caption="Share of decisive consolidated verdicts won by the longer response, "
        "with 95% intervals (labels: wins/decisive).",
    )


# --- vendor bias ---------------------------------------------------------------------------


def _judge_labels(report: Json) -> dict[str, str]:
    out = {}
    for judge in get(report, "summary", "judges") or []:
        vendor = judge.get("vendor")
        out[str(judge.get("name"))] = (
            f"{judge.get('name')}\n({vendor})" if vendor else judge["name"]
        )
    return out


def vendor_bias(report: Json, frame: AnalysisFrame | None) -> PlotSpec:
    name, title = "vendor_bias", "Score distribution per judge"
    labels = _judge_labels(report)
    if frame is not None and not frame.scores.empty:
        scores = judge_scores(frame)
        groups = {
            labels.get(str(j), str(j)): list(g["score"].astype(float))
            for j, g in scores.groupby("judge")
        }
        panel = BoxPanel("Total score per response, by judge (vendor)", "total score", groups)
        return PlotSpec(
            name,
            title,
            (panel,),
            caption="Box: quartiles of each judge's total "
            "scores; dots: the responses. A judge whose box sits apart from the others "
            "is more lenient or severe.",
        )
    prefs = get(report, "effects", "preferences")
    judges = dict(get(prefs, "judges") or {}) if computed(prefs) else {}
    if not judges:
        return not_applicable(name, title, "no scores and no pairwise verdicts to compare")
    return _vendor_fallback(report, judges, labels, name, title)


def _vendor_fallback(
    report: Json, judges: dict[str, Json], labels: dict[str, str], name: str, title: str
) -> PlotSpec:
    control = str(get(report, "effects", "control_arm"))
    treatment = str(get(report, "effects", "treatment_arm"))
    metrics = list(judges.values())
    panel = BarPanel(
        title="Consolidated verdicts per judge (vendor)",
        ylabel="items",
        categories=[labels.get(j, j) for j in judges],
        series=[
            BarSeries(f"{treatment} preferred", [m.get("wins") for m in metrics]),
            BarSeries(f"{control} preferred", [m.get("losses") for m in metrics]),
            BarSeries("tie or flip", [m.get("ties") for m in metrics]),
        ],
        stacked=True,
    )
    return PlotSpec(
        name,
        title,
        (panel,),
        status="fallback",
        note="fallback: pairwise data has no scores, so the plot shows each judge's "
        "verdict counts instead of score distributions",
        caption="Consolidated verdicts per judge: a verdict that flips with the order "
        "counts as a tie.",
    )


# --- agreement matrix ----------------------------------------------------------------------


def agreement_matrix(report: Json) -> PlotSpec:
    name, title = "agreement_matrix", "Pairwise agreement between judges"
    node = report.get("agreement")
    if not computed(node) or node is None:
        return not_applicable(name, title, why(node, "no agreement analysis"))
    block, data = node.get("preferences"), "preferences"
    if not computed(block) or not get(block, "pairs"):
        block, data = get(node, "scores", "dimensions", TOTAL), "total scores"
    if not computed(block) or not get(block, "pairs"):
        return not_applicable(name, title, "no judge pair rated the same units")
    judges = [str(j) for j in node.get("judges") or []]
    kappa = _pair_matrix(judges, block["pairs"], "cohen_kappa")
    share = _pair_matrix(judges, block["pairs"], "percent_agreement")
    panels = (
        _judge_heatmap(f"Cohen's κ on {data}", judges, kappa, "Cohen's κ", (-1.0, 1.0, "RdBu")),
        _judge_heatmap(
            f"Percent agreement on {data}", judges, share, "share of units", (0.0, 1.0, "viridis")
        ),
    )
    caption = f"Each cell compares two judges on the {data} they both gave (diagonal left blank)."
    return PlotSpec(name, title, panels, caption=caption)


def _judge_heatmap(
    title: str,
    judges: list[str],
    matrix: list[list[float | None]],
    colorbar: str,
    scale: tuple[float, float, str],
) -> HeatmapPanel:
    cells = [[fmt_rate(v) for v in row] for row in matrix]
    low, high, cmap = scale
    return HeatmapPanel(title, judges, judges, matrix, cells, colorbar, low, high, cmap)


def _pair_matrix(judges: list[str], pairs: list[Json], key: str) -> list[list[float | None]]:
    index = {j: i for i, j in enumerate(judges)}
    matrix: list[list[float | None]] = [[None] * len(judges) for _ in judges]
    for pair in pairs:
        raters = [str(r) for r in pair.get("raters") or pair.get("judges") or []]
        if len(raters) == 2 and all(r in index for r in raters):
            a, b = index[raters[0]], index[raters[1]]
            matrix[a][b] = matrix[b][a] = value_of(pair.get(key))
    return matrix
