"""Drawing: the only jurybox module that imports matplotlib.

Every figure is a fresh ``matplotlib.figure.Figure`` rendered by the Agg canvas (no pyplot, so no
global state leaks between plots, and no display is needed). What each figure shows is decided
in ``plots.specs`` / ``plots``; this module only draws it.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from typing import Any, Literal

import matplotlib
import numpy as np
from matplotlib import patheffects
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

from jurybox.reporting.plots.specs import (
    BarPanel,
    BarSeries,
    BoxPanel,
    BoxStats,
    HeatmapPanel,
    LinePanel,
    PairedPanel,
    Panel,
    PlotSpec,
    RenderedPlot,
    ScatterPanel,
)

WIDTH_IN = 6.0  # one panel wide: at 400 px the smallest text (10 pt) is still ~9 px
PANEL_HEIGHT_IN = 3.4
SMALL_HEIGHT_IN = 2.5  # one row of small multiples
DPI = 120  # PNG: 720 px wide
FONT_PT = 11
SMALL_FONT_PT = 10  # the smallest text any figure draws
PALETTE = ("#3b6ea5", "#e07b39", "#5a9e5a", "#b5485d", "#7a5ea8", "#8c6d31", "#2a9d8f", "#777777")
MAX_CELL_COLUMNS = 8
MANY_CATEGORIES = 6  # more bars than this: horizontal bars, so the labels stay readable
STYLE: dict[RcKeyType, Any] = {
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": FONT_PT,
    "axes.titlesize": FONT_PT + 1,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": SMALL_FONT_PT,
    "ytick.labelsize": SMALL_FONT_PT,
    "legend.fontsize": SMALL_FONT_PT,
    "figure.titlesize": FONT_PT + 2,
    "svg.fonttype": "none",  # text stays text: small files, selectable, escaped by matplotlib
    "svg.hashsalt": "jurybox",  # stable ids: the same data writes the same SVG
}


def render(spec: PlotSpec) -> RenderedPlot:
    """Draw ``spec`` once and save it as PNG (720 px wide) and as SVG."""
    with matplotlib.rc_context(STYLE):
        figure = build_figure(spec)
        png, svg = io.BytesIO(), io.BytesIO()
        figure.savefig(png, format="png", dpi=DPI, facecolor="white")
        # The layout is solved (in figure fractions): the SVG reuses it instead of solving again.
        # No engine at all, not "none": with any engine set, savefig first draws the whole figure
        # once more to throw it away, and that pass still rasterizes every dense layer (issue #19).
        figure.set_layout_engine(None)
        figure.savefig(svg, format="svg", facecolor="white", metadata={"Date": None})
    return RenderedPlot(spec, png.getvalue(), svg.getvalue().decode("utf-8"))


def build_figure(spec: PlotSpec) -> Figure:
    """The drawn figure of a plot that applies (the axes stay readable for tests)."""
    if not spec.drawn:
        raise ValueError(f"plot {spec.name} does not apply: {spec.note}")
    with matplotlib.rc_context(STYLE):
        columns = max(1, min(spec.columns, len(spec.panels)))
        rows = -(-len(spec.panels) // columns)
        heights = [
            _row_height(spec.panels[r * columns : (r + 1) * columns], columns) for r in range(rows)
        ]
        figure = Figure(figsize=(WIDTH_IN, sum(heights) + 0.4), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        grid = figure.subplots(rows, columns, squeeze=False, gridspec_kw={"height_ratios": heights})
        cells = list(grid.flat)
        for ax, panel in zip(cells, spec.panels, strict=False):
            _draw_panel(ax, panel)
        for ax in cells[len(spec.panels) :]:
            ax.set_visible(False)
        if len(spec.panels) > 1 or spec.status == "fallback":
            figure.suptitle(spec.title + _status_suffix(spec), fontweight="bold")
        fallback = spec.note if spec.status == "fallback" else None
        footer = [n for n in (fallback, spec.left_out, spec.sampled) if n]
        if footer:
            text = " ".join(n[:1].upper() + n[1:] for n in footer)
            figure.supxlabel(
                "\n".join(textwrap.wrap(text, 80)),
                fontsize=SMALL_FONT_PT,
                style="italic",
                color="#8a5a00",
            )
    return figure


def _row_height(panels: Sequence[Panel], columns: int) -> float:
    """Inches for one row: taller for long heatmaps and many horizontal bars."""
    if columns > 1:
        return SMALL_HEIGHT_IN
    panel = panels[0]
    if isinstance(panel, HeatmapPanel):
        return max(PANEL_HEIGHT_IN, 0.32 * len(panel.rows) + 1.6)
    if isinstance(panel, BarPanel) and _horizontal(panel):
        bars = len(panel.categories) * (1 if panel.stacked else max(len(panel.series), 1))
        return max(PANEL_HEIGHT_IN, 0.22 * bars + 0.35 * len(panel.categories) + 1.2)
    if isinstance(panel, BoxPanel) and len(panel.groups) > MANY_CATEGORIES:
        return max(PANEL_HEIGHT_IN, 0.4 * len(panel.groups) + 1.2)
    return PANEL_HEIGHT_IN


def _status_suffix(spec: PlotSpec) -> str:
    return " (fallback view)" if spec.status == "fallback" else ""


def _draw_panel(ax: Axes, panel: Panel) -> None:
    if isinstance(panel, BarPanel):
        _draw_bars(ax, panel)
    elif isinstance(panel, HeatmapPanel):
        _draw_heatmap(ax, panel)
    elif isinstance(panel, ScatterPanel):
        _draw_scatter(ax, panel)
    elif isinstance(panel, BoxPanel):
        _draw_box(ax, panel)
    elif isinstance(panel, PairedPanel):
        _draw_paired(ax, panel)
    else:
        _draw_lines(ax, panel)


MAX_LABEL_CHARS = 28


def _short(label: str) -> str:
    """A name cut to ``MAX_LABEL_CHARS`` per line: a long judge name must not squeeze the axes
    to nothing (the tables give it whole)."""
    return "\n".join(
        line if len(line) <= MAX_LABEL_CHARS else line[: MAX_LABEL_CHARS - 1] + "…"
        for line in label.split("\n")
    )


def _wrap(label: str, width: int = 14) -> str:
    """Wrap a tick label, keeping the line breaks it already has."""
    label = _short(label)
    lines = [part for line in label.split("\n") for part in textwrap.wrap(line, width) or [""]]
    return "\n".join(lines[:3]) or label


def _as_float(values: Sequence[float | None] | None, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, np.nan)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _horizontal(panel: BarPanel) -> bool:
    return panel.horizontal or len(panel.categories) > MANY_CATEGORIES


def _draw_bars(ax: Axes, panel: BarPanel) -> None:
    """Grouped (or stacked) bars; horizontal when there are many categories. A single series'
    annotations join its category labels, so no text is placed over the bars."""
    horizontal = _horizontal(panel)
    n_cat, n_series = len(panel.categories), max(len(panel.series), 1)
    # Horizontal bars read top-down: the first category at the top.
    positions = np.arange(n_cat, dtype=float)[::-1] if horizontal else np.arange(n_cat, dtype=float)
    width = 0.8 if panel.stacked else 0.8 / n_series
    base = np.zeros(n_cat)
    for index, series in enumerate(panel.series):
        values = _as_float(series.values, n_cat)
        offset = 0.0 if panel.stacked else (index - (n_series - 1) / 2) * width
        sign = -1.0 if horizontal else 1.0  # the first series on top / on the left
        where = positions + sign * offset
        heights = np.nan_to_num(values)
        start = base if panel.stacked else 0
        color = PALETTE[index % len(PALETTE)]
        if horizontal:
            bars = ax.barh(where, heights, width, left=start, label=series.label, color=color)
        else:
            bars = ax.bar(where, heights, width, bottom=start, label=series.label, color=color)
        _error_bars(ax, where, values, series, horizontal)
        if series.annotations and panel.stacked:
            labels = list(series.annotations)
            ax.bar_label(bars, labels=labels, fontsize=SMALL_FONT_PT, label_type="center")
        if panel.stacked:
            base = base + heights
    _reference_line(ax, panel, horizontal)
    _category_axis(ax, panel, positions, horizontal)
    if panel.ylim is not None:
        (ax.set_xlim if horizontal else ax.set_ylim)(*panel.ylim)
    elif panel.stacked and base.size and base.max() > 0:
        (ax.set_xlim if horizontal else ax.set_ylim)(0, base.max())
    (ax.set_xlabel if horizontal else ax.set_ylabel)(panel.ylabel)
    ax.set_title(panel.title)
    if len(panel.series) > 1 or panel.reference_label:
        ax.legend(loc="best", framealpha=0.85)


def _reference_line(ax: Axes, panel: BarPanel, horizontal: bool) -> None:
    if panel.reference is None:
        return
    style = {"color": "#444444", "linestyle": "--", "linewidth": 1, "label": panel.reference_label}
    if horizontal:
        ax.axvline(panel.reference, **style)  # type: ignore[arg-type]
    else:
        ax.axhline(panel.reference, **style)  # type: ignore[arg-type]


def _category_axis(ax: Axes, panel: BarPanel, positions: np.ndarray, horizontal: bool) -> None:
    labels = list(panel.categories)
    single = panel.series[0] if len(panel.series) == 1 and not panel.stacked else None
    if single is not None and single.annotations:
        joiner = "  " if horizontal else "\n"
        labels = [f"{c}{joiner}{a}" for c, a in zip(labels, single.annotations, strict=False)]
    if horizontal:
        ax.set_yticks(positions, [_short(label.replace("\n", " ")) for label in labels])
        ax.grid(False, axis="y")
    else:
        ax.set_xticks(positions, [_wrap(label) for label in labels])
        ax.grid(False, axis="x")


def _error_bars(
    ax: Axes, x: np.ndarray, values: np.ndarray, series: BarSeries, horizontal: bool
) -> None:
    if series.low is None or series.high is None:
        return
    lows, highs = _as_float(series.low, len(x)), _as_float(series.high, len(x))
    keep = ~(np.isnan(lows) | np.isnan(highs) | np.isnan(values))
    if not keep.any():
        return
    err = np.clip(np.vstack([values[keep] - lows[keep], highs[keep] - values[keep]]), 0, None)
    if horizontal:
        ax.errorbar(
            values[keep], x[keep], xerr=err, fmt="none", ecolor="#222222", capsize=3, linewidth=1
        )
    else:
        ax.errorbar(
            x[keep], values[keep], yerr=err, fmt="none", ecolor="#222222", capsize=3, linewidth=1
        )


def _draw_heatmap(ax: Axes, panel: HeatmapPanel) -> None:
    data = np.array([_as_float(row, len(panel.columns)) for row in panel.values], dtype=float)
    masked = np.ma.masked_invalid(data)
    cmap = matplotlib.colormaps[panel.cmap].with_extremes(bad="#eeeeee")
    image = ax.imshow(masked, cmap=cmap, vmin=panel.vmin, vmax=panel.vmax, aspect="auto")
    ax.set_xticks(range(len(panel.columns)), [_wrap(c, 12) for c in panel.columns])
    if len(panel.columns) > 4:
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_yticks(range(len(panel.rows)), [_short(r) for r in panel.rows])
    ax.grid(False)
    # Past MAX_CELL_COLUMNS the numbers would overlap at 400 px: colours only (tables hold them).
    cells = panel.cells if len(panel.columns) <= MAX_CELL_COLUMNS else ()
    for r, row in enumerate(cells):
        for c, text in enumerate(row):
            dark = False
            if np.isfinite(data[r, c]):
                red, green, blue, _ = image.cmap(image.norm(data[r, c]))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            ax.text(
                c,
                r,
                text,
                ha="center",
                va="center",
                fontsize=SMALL_FONT_PT,
                color="white" if dark else "black",
            )
    ax.figure.colorbar(image, ax=ax, label=panel.colorbar_label, shrink=0.85)
    ax.set_title(panel.title)


def _draw_scatter(ax: Axes, panel: ScatterPanel) -> None:
    marks = sum(len(xs) for xs, _ in panel.groups.values())
    for index, (label, (xs, ys)) in enumerate(panel.groups.items()):
        # Arrays, not the spec's lists: from a list matplotlib builds the mask value by value.
        ax.scatter(
            np.asarray(xs, dtype=float),
            np.asarray(ys, dtype=float),
            s=16,
            alpha=0.55,
            label=_short(label),
            color=PALETTE[index % len(PALETTE)],
            edgecolors="none",
            rasterized=_dense(marks),
        )
    _draw_trends(ax, panel)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(_short(panel.title))  # a small multiple is titled with its judge's name
    if panel.yticks:
        ax.set_yticks(list(panel.yticks), list(panel.yticks.values()))
    if len(panel.groups) > 1:
        ax.legend(loc=_legend_place(marks), markerscale=1.5, framealpha=0.85)
    _limits(ax, None, panel.ylim)


def _draw_trends(ax: Axes, panel: ScatterPanel) -> None:
    """A sampled scatter's trend lines, over every cloud, each with a white edge so that it
    stays visible over points of its own colour."""
    halo = [patheffects.withStroke(linewidth=4.4, foreground="white")]
    for index, label in enumerate(panel.groups):
        if panel.trends and label in panel.trends:
            xs, ys = panel.trends[label]
            color = PALETTE[index % len(PALETTE)]
            ax.plot(xs, ys, color=color, linewidth=2.2, path_effects=halo)


def _box_orientation(horizontal: bool) -> dict[str, Any]:
    """``orientation=`` from matplotlib 3.10 (``vert=`` is deprecated there), ``vert=`` before."""
    major, minor = (int(part) for part in matplotlib.__version__.split(".")[:2])
    if (major, minor) >= (3, 10):
        return {"orientation": "horizontal" if horizontal else "vertical"}
    return {"vert": not horizontal}


def _draw_box(ax: Axes, panel: BoxPanel) -> None:
    """Boxes with the points jittered over them; horizontal when there are many groups."""
    labels = list(panel.groups)
    horizontal = len(labels) > MANY_CATEGORIES
    data = [np.asarray(panel.groups[k], dtype=float) for k in labels]
    where = np.arange(len(labels), 0, -1) if horizontal else np.arange(1, len(labels) + 1)
    style: dict[str, Any] = {
        "positions": where,
        **_box_orientation(horizontal),
        "patch_artist": True,
        "widths": 0.55,
        "medianprops": {"color": "black"},
    }
    if panel.boxes is None:
        boxes = ax.boxplot(data, **style)
    else:
        # Boxes computed on every value (the dots are a sample): the same artists ax.boxplot
        # draws from the values themselves, which with patch_artist sets a solid box outline.
        stats = [_bxp_stats(panel.boxes[k]) for k in labels]
        boxes = ax.bxp(stats, boxprops={"linestyle": "solid"}, **style)
    for index, patch in enumerate(boxes["boxes"]):
        patch.set_facecolor(PALETTE[index % len(PALETTE)])
        patch.set_alpha(0.6)
    rng = np.random.default_rng(0)  # fixed jitter: the same data draws the same picture
    dense = _dense(sum(values.size for values in data))
    for place, values in zip(where, data, strict=True):
        jitter = place + rng.uniform(-0.12, 0.12, size=values.size)
        x, y = (values, jitter) if horizontal else (jitter, values)
        ax.scatter(x, y, s=8, color="#333333", alpha=0.35, edgecolors="none", rasterized=dense)
    if horizontal:
        ax.set_yticks(where, [_short(k.replace("\n", " ")) for k in labels])
        ax.set_xlabel(panel.ylabel)
        _limits(ax, panel.ylim, None)
    else:
        ax.set_xticks(where, [_wrap(k) for k in labels])
        ax.set_ylabel(panel.ylabel)
        _limits(ax, None, panel.ylim)
    ax.set_title(panel.title)


def _bxp_stats(box: BoxStats) -> dict[str, Any]:
    """A box in the form ``Axes.bxp`` draws (``matplotlib.cbook.boxplot_stats``'s keys)."""
    return {
        "med": box.median,
        "q1": box.q1,
        "q3": box.q3,
        "whislo": box.whislo,
        "whishi": box.whishi,
        "fliers": np.asarray(box.fliers, dtype=float),
    }


# Above this many marks on one axes, its per-item marks are drawn as an image inside an SVG
# (every mark a vector path made a 100,000-record report's SVGs take minutes and megabytes) and
# a legend goes to a fixed corner (matplotlib's "best" place tests every mark). Every mark is
# still drawn; a PNG is the same either way.
DENSE_MARKS = 2_000


def _dense(marks: int) -> bool:
    return marks > DENSE_MARKS


def _legend_place(marks: int) -> Literal["upper right", "best"]:
    return "upper right" if marks > DENSE_MARKS else "best"


def _draw_paired(ax: Axes, panel: PairedPanel) -> None:
    # One collection for every item's line and one for their ends: a plot() per item made a
    # 15,000-item report spend ~17 s building artists (issue #19).
    pairs = np.asarray(panel.pairs, dtype=float).reshape(-1, 2)
    ends = np.array([0.0, 1.0])
    segments = np.stack([np.broadcast_to(ends, pairs.shape), pairs], axis=-1)
    dense, grey = _dense(2 * len(pairs)), "#7f7f7f"
    lines = LineCollection(list(segments), linewidths=0.8, colors=grey, alpha=0.35)
    lines.set_rasterized(dense)
    ax.add_collection(lines)
    xs = np.tile(ends, len(pairs))
    ax.scatter(xs, pairs.ravel(), s=9, color=grey, alpha=0.35, edgecolors="none", rasterized=dense)
    left, right = panel.means
    if left is not None and right is not None:
        ax.plot(
            [0, 1],
            [left, right],
            color=PALETTE[1],
            linewidth=3,
            marker="o",
            markersize=8,
            label="mean",
        )
        ax.legend(loc=_legend_place(2 * len(pairs)), framealpha=0.85)
    ax.set_xticks([0, 1], list(panel.conditions))
    ax.set_xlim(-0.3, 1.3)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)
    _limits(ax, None, panel.ylim)


def _draw_lines(ax: Axes, panel: LinePanel) -> None:
    for index, series in enumerate(panel.series):
        color = PALETTE[index % len(PALETTE)]
        x = np.asarray(series.x, dtype=float)
        y = _as_float(series.y, len(x))
        ax.plot(x, y, marker="o", color=color, label=series.label, linewidth=1.6)
        if series.low is not None and series.high is not None:
            low, high = _as_float(series.low, len(x)), _as_float(series.high, len(x))
            ax.fill_between(x, low, high, color=color, alpha=0.15, linewidth=0)
    if panel.xticks:
        ax.set_xticks(list(panel.xticks), list(panel.xticks.values()))
    _limits(ax, panel.xlim, panel.ylim)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)
    if len(panel.series) > 1:
        ax.legend(loc="best", framealpha=0.85)


def _limits(ax: Axes, xlim: tuple[float, float] | None, ylim: tuple[float, float] | None) -> None:
    """Fix the axes to the instrument's range; points on the edge are drawn whole."""
    if xlim is not None:
        ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if xlim is not None or ylim is not None:
        for artist in (*ax.collections, *ax.lines):
            artist.set_clip_on(False)
