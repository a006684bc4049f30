"""What a plot shows, as plain data: built from the report and the tidy frame, drawn by
``plots.draw``.

Keeping the data apart from matplotlib lets the tables, the HTML and the tests see exactly what
each figure holds (and why a figure is a fallback or "not applicable") without drawing anything.

Policy (one rule for every plot): a plot is drawn from the data that exists. When its primary
data is absent but a meaningful substitute exists (e.g. pairwise data has no scores, so the
per-judge score distribution becomes the per-judge verdict distribution), the substitute is drawn
and the plot's status is ``fallback`` with a note saying so. When nothing applies, the plot is not
drawn at all (status ``not_applicable``, no panels, no file): its section says why in one line.

Every axis that shows an instrument's value is fixed to that instrument's range (proportions 0-1,
Cohen's kappa -1..1, scores the rubric's scale), so two reports draw the same value at the same
height. With more than ``MAX_JUDGES`` judges a figure shows that many, chosen by a stated
criterion, and ``left_out`` says how many were left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

PlotStatus = Literal["drawn", "fallback", "not_applicable"]
Number = float | None


@dataclass(frozen=True)
class BarSeries:
    """One series of a grouped bar chart; ``low``/``high`` are interval ends (None: no bar)."""

    label: str
    values: Sequence[Number]
    low: Sequence[Number] | None = None
    high: Sequence[Number] | None = None
    annotations: Sequence[str] | None = None


@dataclass(frozen=True)
class BarPanel:
    title: str
    ylabel: str
    categories: Sequence[str]
    series: Sequence[BarSeries]
    reference: Number = None
    reference_label: str | None = None
    ylim: tuple[float, float] | None = None
    stacked: bool = False
    horizontal: bool = False


@dataclass(frozen=True)
class HeatmapPanel:
    title: str
    rows: Sequence[str]
    columns: Sequence[str]
    values: Sequence[Sequence[Number]]
    cells: Sequence[Sequence[str]]  # formatted text per cell (rounded by _format)
    colorbar_label: str
    vmin: Number = None
    vmax: Number = None
    cmap: str = "viridis"


@dataclass(frozen=True)
class ScatterPanel:
    title: str
    xlabel: str
    ylabel: str
    groups: Mapping[str, tuple[Sequence[float], Sequence[float]]]
    yticks: Mapping[float, str] | None = None
    ylim: tuple[float, float] | None = None
    # Past ``dense.MAX_MARKS`` points ``groups`` is a sample: per group, a line through the mean
    # (x, y) of each slice of *all* its points ordered by x. None: every point is drawn.
    trends: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None


@dataclass(frozen=True)
class BoxStats:
    """One box as ``matplotlib.cbook.boxplot_stats`` gives it, computed on all of a group's
    values (``n``); ``fliers`` are the outliers drawn (distinct values when sampled)."""

    median: float
    q1: float
    q3: float
    whislo: float
    whishi: float
    fliers: Sequence[float]
    n: int


@dataclass(frozen=True)
class BoxPanel:
    title: str
    ylabel: str
    groups: Mapping[str, Sequence[float]]
    ylim: tuple[float, float] | None = None
    # Past ``dense.MAX_MARKS`` dots ``groups`` is a sample and each box comes from here
    # (computed on every value); None: the boxes are computed from ``groups``, all of them.
    boxes: Mapping[str, BoxStats] | None = None


@dataclass(frozen=True)
class PairedPanel:
    """One line per item from ``conditions[0]`` to ``conditions[1]``, means drawn on top."""

    title: str
    ylabel: str
    conditions: tuple[str, str]
    pairs: Sequence[tuple[float, float]]
    means: tuple[Number, Number] = (None, None)
    ylim: tuple[float, float] | None = None


@dataclass(frozen=True)
class LineSeries:
    label: str
    x: Sequence[float]
    y: Sequence[float]
    low: Sequence[Number] | None = None
    high: Sequence[Number] | None = None


@dataclass(frozen=True)
class LinePanel:
    """Lines with optional interval bands (e.g. a reliability diagram)."""

    title: str
    xlabel: str
    ylabel: str
    series: Sequence[LineSeries]
    xticks: Mapping[float, str] | None = None
    ylim: tuple[float, float] | None = None
    xlim: tuple[float, float] | None = None


Panel = BarPanel | HeatmapPanel | ScatterPanel | BoxPanel | PairedPanel | LinePanel


@dataclass(frozen=True)
class PlotSpec:
    """One figure (``<name>.png`` and ``<name>.svg``): a title, its panels, a status and notes.

    Panels are stacked one under the other (the figure stays one panel wide, so it is legible
    on a phone); ``columns=2`` lays them out as small multiples, two per row. ``left_out`` says
    which judges a capped figure does not show; ``sampled`` how many of its points a figure of
    very many draws (``plots.dense``). Both are written under the figure.
    """

    name: str
    title: str
    panels: Sequence[Panel]
    status: PlotStatus = "drawn"
    note: str | None = None
    caption: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)
    columns: int = 1
    left_out: str | None = None
    sampled: str | None = None

    @property
    def filename(self) -> str:
        return f"{self.name}.png"

    @property
    def svg_filename(self) -> str:
        return f"{self.name}.svg"

    @property
    def drawn(self) -> bool:
        """False for a plot that does not apply: it has no panels and no file."""
        return self.status != "not_applicable" and bool(self.panels)


def not_applicable(name: str, title: str, reason: str, caption: str = "") -> PlotSpec:
    """A plot whose data is absent: no panel, no file, status ``not_applicable``."""
    return PlotSpec(
        name=name,
        title=title,
        panels=(),
        status="not_applicable",
        note=f"not applicable: {reason}",
        caption=caption,
    )


@dataclass(frozen=True)
class RenderedPlot:
    """A drawn figure: its spec, the PNG bytes and the SVG text of the same figure."""

    spec: PlotSpec
    png: bytes
    svg: str
    path: str | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels, read from the PNG header."""
        if self.png[:8] != b"\x89PNG\r\n\x1a\n" or self.png[12:16] != b"IHDR":
            raise ValueError(f"{self.spec.filename} is not a PNG")
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")
