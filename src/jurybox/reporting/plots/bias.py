"""Plot data for the bias and agreement figures (see ``plots``)."""

from __future__ import annotations

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.frame import judge_scores
from jurybox.analysis.model import Metric, Report, Skipped
from jurybox.analysis.model.bias import PositionJudge, SwapConsistency, Verbosity
from jurybox.analysis.model.effects import PreferenceWinRate
from jurybox.reporting.plots.common import interval_series, number, value_of, why
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

# --- position bias -------------------------------------------------------------------------


def position_bias(report: Report) -> PlotSpec:
    title = "Position bias by judge"
    node = report.bias.position
    if node is None or not node.computed:
        return not_applicable("position_bias", title, why(node, "no position-bias analysis"))
    judges = dict(node.judges or {})
    threshold = number(report.options.thresholds.warn_swap_consistency)
    return PlotSpec(
        "position_bias",
        title,
        (_swap_panel(judges, threshold), _first_position_panel(judges)),
        caption="Left: share of pairs with the same verdict when the responses trade "
        "places (labels: consistent/pairs). Right: share of decisive verdicts for the "
        "response shown first, with 95% intervals.",
    )


def _swap_panel(
    judges: dict[str, PositionJudge], threshold: float | None
) -> BarPanel | NotApplicablePanel:
    title = "Swap consistency (same verdict in both orders)"
    swaps = [entry.swap_consistency for entry in judges.values()]
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


def _first_position_panel(judges: dict[str, PositionJudge]) -> BarPanel:
    firsts = [entry.first_position_rate for entry in judges.values()]
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


def _swap_label(metric: SwapConsistency | Skipped) -> str:
    if isinstance(metric, Skipped) or metric.value is None:
        return "n/a"
    return f"{fmt_rate(metric.value)} ({fmt_count(metric.consistent, metric.n)})"


# --- verbosity -----------------------------------------------------------------------------


def verbosity(report: Report, frame: AnalysisFrame | None) -> PlotSpec:
    name, title = "verbosity_scatter", "Response length vs judgment"
    node = report.bias.verbosity
    if node is None or not node.computed:
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


def _verbosity_fallback(node: Verbosity, name: str, title: str) -> PlotSpec:
    judges = {
        j: e.preferences.longer_preferred
        for j, e in (node.judges or {}).items()
        if e.preferences is not None
    }
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
                annotations=[fmt_count(m.successes, m.n) for m in metrics],
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


def _judge_labels(report: Report) -> dict[str, str]:
    out = {}
    for judge in report.summary.judges:
        vendor = judge.vendor
        out[judge.name] = f"{judge.name}\n({vendor})" if vendor else judge.name
    return out


def vendor_bias(report: Report, frame: AnalysisFrame | None) -> PlotSpec:
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
    prefs = report.effects.preferences
    judges = dict(prefs.judges or {}) if prefs is not None and prefs.computed else {}
    if not judges:
        return not_applicable(name, title, "no scores and no pairwise verdicts to compare")
    return _vendor_fallback(report, judges, labels, name, title)


def _vendor_fallback(
    report: Report,
    judges: dict[str, PreferenceWinRate],
    labels: dict[str, str],
    name: str,
    title: str,
) -> PlotSpec:
    control = str(report.effects.control_arm)
    treatment = str(report.effects.treatment_arm)
    metrics = list(judges.values())
    panel = BarPanel(
        title="Consolidated verdicts per judge (vendor)",
        ylabel="items",
        categories=[labels.get(j, j) for j in judges],
        series=[
            BarSeries(f"{treatment} preferred", [m.wins for m in metrics]),
            BarSeries(f"{control} preferred", [m.losses for m in metrics]),
            BarSeries("tie or flip", [m.ties for m in metrics]),
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


def agreement_matrix(report: Report) -> PlotSpec:
    name, title = "agreement_matrix", "Pairwise agreement between judges"
    node = report.agreement
    if not node.computed:
        return not_applicable(name, title, why(node, "no agreement analysis"))
    block, data = node.preferences, "preferences"
    if block is None or not block.computed or not block.pairs:
        # The total is interval (no kappa on means): the first dimension with judge pairs.
        dims = (node.scores.dimensions if node.scores else None) or {}
        with_pairs = [d for d, b in dims.items() if d != TOTAL and b.computed and b.pairs]
        block, data = (dims[with_pairs[0]], f"{with_pairs[0]} scores") if with_pairs else (None, "")
    if block is None or not block.computed or not block.pairs:
        return not_applicable(name, title, "no judge pair rated the same units")
    judges = [str(j) for j in node.judges or []]
    kappa = _pair_matrix(judges, [(p.raters, p.cohen_kappa) for p in block.pairs])
    share = _pair_matrix(judges, [(p.raters, p.percent_agreement) for p in block.pairs])
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


def _pair_matrix(
    judges: list[str], pairs: list[tuple[list[str], Metric]]
) -> list[list[float | None]]:
    """A symmetric judges x judges matrix of one pair metric (None where no pair)."""
    index = {j: i for i, j in enumerate(judges)}
    matrix: list[list[float | None]] = [[None] * len(judges) for _ in judges]
    for raters, metric in pairs:
        if len(raters) == 2 and all(r in index for r in raters):
            a, b = index[raters[0]], index[raters[1]]
            matrix[a][b] = matrix[b][a] = value_of(metric)
    return matrix
