"""What a plot shows, as plain data: built from the report and the tidy frame, drawn by
``plots.draw``.

Keeping the data apart from matplotlib lets the tables, the HTML and the tests see exactly what
each figure holds (and why a figure is a fallback or "not applicable") without drawing anything.

Policy (one rule for every plot): a plot is drawn from the data that exists. When its primary
data is absent but a meaningful substitute exists (e.g. pairwise data has no scores, so the
per-judge score distribution becomes the per-judge verdict distribution), the substitute is drawn
and the plot's status is ``fallback`` with a note saying so. When nothing applies, the file still
exists and holds a clearly labelled "not applicable: <reason>" panel (status ``not_applicable``).
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


@dataclass(frozen=True)
class BoxPanel:
    title: str
    ylabel: str
    groups: Mapping[str, Sequence[float]]


@dataclass(frozen=True)
class PairedPanel:
    """One line per item from ``conditions[0]`` to ``conditions[1]``, means drawn on top."""

    title: str
    ylabel: str
    conditions: tuple[str, str]
    pairs: Sequence[tuple[float, float]]
    means: tuple[Number, Number] = (None, None)


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


@dataclass(frozen=True)
class NotApplicablePanel:
    title: str
    reason: str


Panel = (
    BarPanel | HeatmapPanel | ScatterPanel | BoxPanel | PairedPanel | LinePanel | NotApplicablePanel
)


@dataclass(frozen=True)
class PlotSpec:
    """One PNG file: a title, one to three panels, a status and a note for the reader."""

    name: str
    title: str
    panels: Sequence[Panel]
    status: PlotStatus = "drawn"
    note: str | None = None
    caption: str = ""
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return f"{self.name}.png"


def not_applicable(name: str, title: str, reason: str, caption: str = "") -> PlotSpec:
    """A plot whose data is absent: one labelled panel, status ``not_applicable``."""
    return PlotSpec(
        name=name,
        title=title,
        panels=(NotApplicablePanel(title=title, reason=reason),),
        status="not_applicable",
        note=f"not applicable: {reason}",
        caption=caption,
    )


@dataclass(frozen=True)
class RenderedPlot:
    """A drawn figure: its spec, the PNG bytes and where the file was written (if it was)."""

    spec: PlotSpec
    png: bytes
    path: str | None = None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels, read from the PNG header."""
        if self.png[:8] != b"\x89PNG\r\n\x1a\n" or self.png[12:16] != b"IHDR":
            raise ValueError(f"{self.spec.filename} is not a PNG")
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")
