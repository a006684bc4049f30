"""Plot data for the bias and agreement figures (see ``plots``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from jurybox.analysis import TOTAL, AnalysisFrame
from jurybox.analysis.frame import judge_scores
from jurybox.analysis.model import Metric, Report, Skipped
from jurybox.analysis.model.bias import PositionJudge, SwapConsistency, Verbosity
from jurybox.analysis.model.effects import PreferenceWinRate
from jurybox.reporting.plots.common import (
    interval_series,
    number,
    score_scale,
    top_judges,
    value_of,
    why,
)
from jurybox.reporting.plots.dense import (
    MAX_MARKS,
    Floats,
    Indices,
    box_stats,
    shown_note,
    split_sample,
    trend,
)
from jurybox.reporting.plots.specs import (
    BarPanel,
    BarSeries,
    BoxPanel,
    HeatmapPanel,
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
    all_judges = dict(node.judges or {})
    kept, left_out = top_judges(report, all_judges)
    judges = {name: all_judges[name] for name in kept}
    threshold = number(report.options.thresholds.warn_swap_consistency)
    first = _first_position_panel(judges)
    first_caption = (
        "share of decisive verdicts for the response shown first, with 95% intervals "
        "(0.5: no position bias)."
    )
    swap = _swap_panel(judges, threshold)
    if swap is None:
        return PlotSpec(
            "position_bias",
            title,
            (first,),
            caption=first_caption[:1].upper() + first_caption[1:],
            note="no swap-consistency panel: "
            + why(
                next(iter(all_judges.values())).swap_consistency if all_judges else None,
                "no pair was judged in both orders",
            ),
            left_out=left_out,
        )
    return PlotSpec(
        "position_bias",
        title,
        (swap, first),
        caption="Top: share of pairs with the same verdict when the responses trade "
        "places (labels: consistent/pairs). Bottom: " + first_caption,
        left_out=left_out,
    )


def _swap_panel(judges: dict[str, PositionJudge], threshold: float | None) -> BarPanel | None:
    title = "Swap consistency (same verdict in both orders)"
    swaps = [entry.swap_consistency for entry in judges.values()]
    if all(value_of(s) is None for s in swaps):
        return None
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
        ylim=(0.0, 1.0),
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
        scores = _with_lengths(judge_scores(frame), frame.items)
        if not scores.empty:
            groups = {
                str(j): (g["length"].to_numpy(dtype=float), g["score"].to_numpy(dtype=float))
                for j, g in scores.groupby("judge")
            }
            return _verbosity_scatter(report, frame, groups, name, title)
    return _verbosity_fallback(report, node, name, title)


def _with_lengths(scores: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """``scores.merge(items[["query_id", "arm", "length"]], on=["query_id", "arm"])``: the scores
    of responses with a length, in the scores' order, the length beside each. Looked up in a
    query x arm table instead of joined: the join factorised every key's string again (1.2 s at
    a million records); a dataset listing an item twice keeps the join's duplicated rows."""
    query, query_of_item, queries = _codes(scores["query_id"], items["query_id"])
    arm, arm_of_item, arms = _codes(scores["arm"], items["arm"])
    known = (query_of_item >= 0) & (arm_of_item >= 0)
    cells = query_of_item[known] * arms + arm_of_item[known]
    if cells.size and np.bincount(cells).max() > 1:
        keys = ["query_id", "arm"]
        return scores.merge(items[[*keys, "length"]], on=keys)
    table = np.full(queries * arms + 1, np.nan)  # the last cell: a key no item has
    table[cells] = items["length"].to_numpy(dtype=float)[known]
    found_cell = np.where((query < 0) | (arm < 0), queries * arms, query * arms + arm)
    lengths = table[found_cell]
    found = ~np.isnan(lengths)
    joined: pd.DataFrame = scores[found].assign(length=lengths[found])
    return joined.reset_index(drop=True)


def _codes(column: pd.Series, values: pd.Series) -> tuple[Indices, Indices, int]:
    """The category code of each of ``column``'s values and of each of ``values`` in the same
    categories (-1: not among them), and how many categories there are."""
    categorical = (
        column if isinstance(column.dtype, pd.CategoricalDtype) else column.astype("category")
    )
    categories = categorical.cat.categories
    codes = categorical.cat.codes.to_numpy().astype(np.intp)
    value_codes, distinct = pd.factorize(values)  # each distinct string looked up once
    found = categories.get_indexer(pd.Index(distinct)).astype(np.intp)
    of_values = np.where(value_codes < 0, -1, found[value_codes])
    return codes, of_values, len(categories)


SMALL_MULTIPLES_FROM = 4  # more judges than this: one small panel each instead of one crowded


def _verbosity_scatter(
    report: Report,
    frame: AnalysisFrame,
    groups: dict[str, tuple[Floats, Floats]],
    name: str,
    title: str,
) -> PlotSpec:
    scale = score_scale(report, frame)
    ylim = scale.limits if scale else None
    kept, left_out = top_judges(report, groups)
    xlabel, ylabel = "response length (characters)", "total score"
    if len(kept) > SMALL_MULTIPLES_FROM:
        panels: tuple[ScatterPanel, ...] = tuple(
            _scatter_panel(judge, "length (chars)", ylabel, {judge: groups[judge]}, ylim)
            for judge in kept
        )
        columns = 2
    else:
        panels = (
            _scatter_panel(
                "Length vs total score (one point per judge x response)",
                xlabel,
                ylabel,
                {judge: groups[judge] for judge in kept},
                ylim,
            ),
        )
        columns = 1
    axis = f" The score axis spans {scale.source}." if scale else ""
    sampled = _scatter_note(panels, sum(groups[j][0].size for j in kept))
    return PlotSpec(
        name,
        title,
        panels,
        caption="Each point is one judge's mean total score of one response against that "
        f"response's length{' (one panel per judge)' if columns > 1 else ''}.{axis}"
        + (f" {sampled}" if sampled else ""),
        columns=columns,
        left_out=left_out,
        sampled=sampled,
    )


def _scatter_panel(
    title: str,
    xlabel: str,
    ylabel: str,
    groups: dict[str, tuple[Floats, Floats]],
    ylim: tuple[float, float] | None,
) -> ScatterPanel:
    """Every point, or past ``MAX_MARKS`` a seeded sample of them and each group's trend line
    computed on all its points."""
    picks = split_sample([xs.size for xs, _ in groups.values()])
    if picks is None:
        every = {j: (xs.tolist(), ys.tolist()) for j, (xs, ys) in groups.items()}
        return ScatterPanel(title, xlabel, ylabel, every, ylim=ylim)
    shown = {
        j: (xs[pick].tolist(), ys[pick].tolist())
        for (j, (xs, ys)), pick in zip(groups.items(), picks, strict=True)
    }
    trends = {j: trend(xs, ys) for j, (xs, ys) in groups.items()}
    return ScatterPanel(title, xlabel, ylabel, shown, ylim=ylim, trends=trends)


def _scatter_note(panels: tuple[ScatterPanel, ...], total: int) -> str | None:
    """What a sampled scatter draws, or None when every point is drawn."""
    if not any(panel.trends for panel in panels):
        return None
    shown = sum(len(xs) for panel in panels for xs, _ in panel.groups.values())
    lines = "lines: the mean score per twentieth of the lengths, over every point"
    return shown_note(shown, total, "points", MAX_MARKS, lines, per_panel=len(panels) > 1)


def _verbosity_fallback(report: Report, node: Verbosity, name: str, title: str) -> PlotSpec:
    every = {
        j: e.preferences.longer_preferred
        for j, e in (node.judges or {}).items()
        if e.preferences is not None
    }
    if not every:
        return not_applicable(name, title, "no score or preference matches a response length")
    kept, left_out = top_judges(report, every)
    judges = {j: every[j] for j in kept}
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
        ylim=(0.0, 1.0),
    )
    return PlotSpec(
        name,
        title,
        (panel,),
        left_out=left_out,
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
        by_judge = {
            str(j): g["score"].to_numpy(dtype=float)
            for j, g in judge_scores(frame).groupby("judge")
        }
        kept, left_out = top_judges(report, by_judge)
        scale = score_scale(report, frame)
        panel, sampled = _box_panel(
            {labels.get(j, j): by_judge[j] for j in kept}, scale.limits if scale else None
        )
        axis = f" The score axis spans {scale.source}." if scale else ""
        return PlotSpec(
            name,
            title,
            (panel,),
            caption="Box: quartiles of each judge's total "
            "scores; dots: the responses. A judge whose box sits apart from the others "
            f"is more lenient or severe.{axis}" + (f" {sampled}" if sampled else ""),
            left_out=left_out,
            sampled=sampled,
        )
    prefs = report.effects.preferences
    every = dict(prefs.judges or {}) if prefs is not None and prefs.computed else {}
    if not every:
        why = "no pairwise verdicts to compare"
        pairwise = "pairwise" in report.summary.modes
        if pairwise and not report.effects.computed and report.effects.reason:
            why = f"no win rates: {report.effects.reason}"  # e.g. a benchmark's arms
        return not_applicable(name, title, f"no scores and {why}")
    kept, left_out = top_judges(report, every)
    spec = _vendor_fallback(report, {j: every[j] for j in kept}, labels, name, title)
    return replace(spec, left_out=left_out)


def _box_panel(
    values: dict[str, Floats], ylim: tuple[float, float] | None
) -> tuple[BoxPanel, str | None]:
    """Boxes with every response as a dot, or past ``MAX_MARKS`` dots a seeded sample of them
    over boxes computed on every value; and what is sampled (None: nothing)."""
    title, ylabel = "Total score per response, by judge (vendor)", "total score"
    picks = split_sample([v.size for v in values.values()])
    if picks is None:
        every = {label: v.tolist() for label, v in values.items()}
        return BoxPanel(title, ylabel, every, ylim=ylim), None
    shown = {
        label: v[pick].tolist() for (label, v), pick in zip(values.items(), picks, strict=True)
    }
    boxes = {label: box_stats(v) for label, v in values.items()}
    note = shown_note(
        sum(len(v) for v in shown.values()),
        sum(v.size for v in values.values()),
        "responses",
        MAX_MARKS,
        "boxes, whiskers and outliers: every response",
    )
    return BoxPanel(title, ylabel, shown, ylim=ylim, boxes=boxes), note


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
        "counts as a tie. The axis spans every item a judge judged.",
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
    judges, left_out = top_judges(report, [str(j) for j in node.judges or []])
    kappa = _pair_matrix(judges, [(p.raters, p.cohen_kappa) for p in block.pairs])
    share = _pair_matrix(judges, [(p.raters, p.percent_agreement) for p in block.pairs])
    panels = (
        _judge_heatmap(f"Cohen's κ on {data}", judges, kappa, "Cohen's κ", (-1.0, 1.0, "RdBu")),
        _judge_heatmap(
            f"Percent agreement on {data}", judges, share, "share of units", (0.0, 1.0, "viridis")
        ),
    )
    caption = (
        f"Each cell compares two judges on the {data} they both gave (diagonal left blank). "
        "κ is drawn on its full range −1 to 1, agreement on 0 to 1."
    )
    return PlotSpec(name, title, panels, caption=caption, left_out=left_out)


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
