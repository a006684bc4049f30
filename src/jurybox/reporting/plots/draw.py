"""Drawing: the only jurybox module that imports matplotlib.

Every figure is a fresh ``matplotlib.figure.Figure`` rendered by the Agg canvas (no pyplot, so no
global state leaks between plots, and no display is needed). What each figure shows is decided
in ``plots.specs`` / ``plots``; this module only draws it.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from jurybox.reporting.plots.specs import (
    BarPanel,
    BarSeries,
    BoxPanel,
    HeatmapPanel,
    LinePanel,
    NotApplicablePanel,
    PairedPanel,
    Panel,
    PlotSpec,
    ScatterPanel,
)

DPI = 100
PANEL_WIDTH_IN = 6.4
HEIGHT_IN = 4.8
PALETTE = ("#3b6ea5", "#e07b39", "#5a9e5a", "#b5485d", "#7a5ea8", "#8c6d31", "#2a9d8f", "#777777")


def render_png(spec: PlotSpec) -> bytes:
    """Draw ``spec`` and return the PNG bytes (about 640-1900 x 480 px)."""
    with matplotlib.rc_context(
        {
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "font.size": 10,
            "axes.titlesize": 11,
        }
    ):
        width = max(PANEL_WIDTH_IN * len(spec.panels), 8.0)
        figure = Figure(figsize=(width, HEIGHT_IN), dpi=DPI, layout="constrained")
        FigureCanvasAgg(figure)
        axes = figure.subplots(1, len(spec.panels), squeeze=False)[0]
        for ax, panel in zip(axes, spec.panels, strict=True):
            _draw_panel(ax, panel)
        if len(spec.panels) > 1 or spec.status == "fallback":
            figure.suptitle(spec.title + _status_suffix(spec), fontsize=12, fontweight="bold")
        if spec.status == "fallback" and spec.note:
            wrapped = "\n".join(textwrap.wrap(spec.note[:1].upper() + spec.note[1:], 110))
            figure.supxlabel(wrapped, fontsize=9, style="italic", color="#8a5a00")
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=DPI, facecolor="white")
    return buffer.getvalue()


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
    elif isinstance(panel, LinePanel):
        _draw_lines(ax, panel)
    else:
        _draw_not_applicable(ax, panel)


def _wrap(label: str, width: int = 14) -> str:
    """Wrap a tick label, keeping the line breaks it already has."""
    lines = [part for line in label.split("\n") for part in textwrap.wrap(line, width) or [""]]
    return "\n".join(lines) or label


def _as_float(values: Sequence[float | None] | None, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, np.nan)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _draw_bars(ax: Axes, panel: BarPanel) -> None:
    n_cat, n_series = len(panel.categories), max(len(panel.series), 1)
    positions = np.arange(n_cat, dtype=float)
    width = 0.8 if panel.stacked else 0.8 / n_series
    bottom = np.zeros(n_cat)
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    for index, series in enumerate(panel.series):
        values = _as_float(series.values, n_cat)
        offset = 0.0 if panel.stacked else (index - (n_series - 1) / 2) * width
        heights = np.nan_to_num(values)
        bars = ax.bar(
            positions + offset,
            heights,
            width,
            bottom=bottom if panel.stacked else 0,
            label=series.label,
            color=PALETTE[index % len(PALETTE)],
            alpha=0.9,
        )
        _error_bars(ax, positions + offset, values, series)
        if series.annotations and panel.stacked:
            ax.bar_label(bars, labels=list(series.annotations), fontsize=8, label_type="center")
        elif series.annotations:
            _annotate_tops(ax, positions + offset, values, series)
        if panel.stacked:
            bottom = bottom + heights
    if panel.reference is not None:
        ax.axhline(
            panel.reference,
            color="#444444",
            linestyle="--",
            linewidth=1,
            label=panel.reference_label,
        )
    ax.set_xticks(positions, [_wrap(c) for c in panel.categories])
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)
    if panel.stacked and bottom.size and bottom.max() > 0:
        ax.set_ylim(0, bottom.max() * 1.2)  # headroom: the legend sits above the bars
        ax.legend(fontsize=8, loc="upper center", ncol=len(panel.series))
    elif len(panel.series) > 1 or panel.reference_label:
        ax.legend(fontsize=8, loc="best")


def _error_bars(ax: Axes, x: np.ndarray, values: np.ndarray, series: BarSeries) -> None:
    if series.low is None or series.high is None:
        return
    lows, highs = _as_float(series.low, len(x)), _as_float(series.high, len(x))
    keep = ~(np.isnan(lows) | np.isnan(highs) | np.isnan(values))
    if keep.any():
        err = np.vstack([values[keep] - lows[keep], highs[keep] - values[keep]])
        ax.errorbar(
            x[keep],
            values[keep],
            yerr=np.clip(err, 0, None),
            fmt="none",
            ecolor="#222222",
            capsize=4,
            linewidth=1,
        )


def _annotate_tops(ax: Axes, x: np.ndarray, values: np.ndarray, series: BarSeries) -> None:
    """Write each bar's label just above its bar or its interval, whichever is higher."""
    highs = _as_float(series.high, len(x))
    tops = np.fmax(np.nan_to_num(values), np.nan_to_num(highs))
    span = ax.get_ylim()[1] - ax.get_ylim()[0]
    for xi, top, text in zip(x, tops, series.annotations or (), strict=False):
        ax.text(xi, top + 0.015 * span, text, ha="center", va="bottom", fontsize=8)


def _draw_heatmap(ax: Axes, panel: HeatmapPanel) -> None:
    data = np.array([_as_float(row, len(panel.columns)) for row in panel.values], dtype=float)
    masked = np.ma.masked_invalid(data)
    cmap = matplotlib.colormaps[panel.cmap].with_extremes(bad="#eeeeee")
    image = ax.imshow(masked, cmap=cmap, vmin=panel.vmin, vmax=panel.vmax, aspect="auto")
    ax.set_xticks(range(len(panel.columns)), [_wrap(c, 12) for c in panel.columns])
    ax.set_yticks(range(len(panel.rows)), list(panel.rows))
    ax.grid(False)
    for r, row in enumerate(panel.cells):
        for c, text in enumerate(row):
            dark = False
            if np.isfinite(data[r, c]):
                red, green, blue, _ = image.cmap(image.norm(data[r, c]))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
            ax.text(
                c, r, text, ha="center", va="center", fontsize=9, color="white" if dark else "black"
            )
    ax.figure.colorbar(image, ax=ax, label=panel.colorbar_label, shrink=0.85)
    ax.set_title(panel.title)


def _draw_scatter(ax: Axes, panel: ScatterPanel) -> None:
    for index, (label, (xs, ys)) in enumerate(panel.groups.items()):
        ax.scatter(
            xs,
            ys,
            s=16,
            alpha=0.55,
            label=label,
            color=PALETTE[index % len(PALETTE)],
            edgecolors="none",
        )
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)
    if panel.yticks:
        ax.set_yticks(list(panel.yticks), list(panel.yticks.values()))
    if len(panel.groups) > 1:
        ax.legend(fontsize=8, loc="best", markerscale=1.5)


def _draw_box(ax: Axes, panel: BoxPanel) -> None:
    labels = list(panel.groups)
    data = [np.asarray(panel.groups[k], dtype=float) for k in labels]
    boxes = ax.boxplot(data, patch_artist=True, widths=0.55, medianprops={"color": "black"})
    for index, patch in enumerate(boxes["boxes"]):
        patch.set_facecolor(PALETTE[index % len(PALETTE)])
        patch.set_alpha(0.6)
    rng = np.random.default_rng(0)  # fixed jitter: the same data draws the same picture
    for index, values in enumerate(data, start=1):
        jitter = rng.uniform(-0.12, 0.12, size=values.size)
        ax.scatter(index + jitter, values, s=8, color="#333333", alpha=0.35, edgecolors="none")
    ax.set_xticks(range(1, len(labels) + 1), [_wrap(k) for k in labels])
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)


def _draw_paired(ax: Axes, panel: PairedPanel) -> None:
    for first, second in panel.pairs:
        ax.plot(
            [0, 1],
            [first, second],
            color="#7f7f7f",
            alpha=0.35,
            linewidth=0.8,
            marker="o",
            markersize=3,
        )
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
        ax.legend(fontsize=8, loc="best")
    ax.set_xticks([0, 1], list(panel.conditions))
    ax.set_xlim(-0.3, 1.3)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)


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
    if panel.ylim is not None:
        ax.set_ylim(*panel.ylim)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.set_title(panel.title)
    if len(panel.series) > 1:
        ax.legend(fontsize=8, loc="best")


def _draw_not_applicable(ax: Axes, panel: NotApplicablePanel) -> None:
    ax.set_axis_off()
    ax.add_patch(
        FancyBboxPatch(
            (0.04, 0.12),
            0.92,
            0.76,
            boxstyle="round,pad=0.02",
            transform=ax.transAxes,
            facecolor="#fbf4ee",
            edgecolor="#d9b9a0",
        )
    )
    ax.text(
        0.5,
        0.62,
        panel.title,
        ha="center",
        va="center",
        fontsize=13,
        fontweight="bold",
        transform=ax.transAxes,
    )
    ax.text(
        0.5,
        0.42,
        "\n".join(textwrap.wrap(f"Not applicable: {panel.reason}", 60)),
        ha="center",
        va="center",
        fontsize=11,
        color="#8a3b12",
        transform=ax.transAxes,
    )
