"""Figures of many points: what a panel draws past ``MAX_MARKS`` marks.

Drawing every one of a million points cost tens of seconds (Agg rasterises each mark twice, for
the PNG and for the image inside the SVG) and shows no more than a few thousand would: a cloud of
a million dots is a solid blot. So past ``MAX_MARKS`` marks on one panel, a panel draws a seeded
uniform sample of exactly ``MAX_MARKS`` of them (the same data always gives the same sample),
while everything the panel summarises is computed on all of them: a box plot's quartiles,
whiskers and outliers, a scatter's trend line, a paired plot's means. The figure says how many
marks it shows of how many. At or below ``MAX_MARKS`` every mark is drawn, exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from jurybox.reporting.plots.specs import BoxStats

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.intp]

MAX_MARKS = 5_000  # points, dots or item-ends on one panel; past it a seeded sample is drawn
MAX_FLIERS = 500  # distinct outlier values drawn per box past MAX_MARKS (extremes always kept)
TREND_BINS = 20  # a sampled scatter's trend: the mean per twentieth of x, over every point
SEED = 0
WHISKER_IQR = 1.5  # matplotlib's default reach of a whisker, in interquartile ranges


def sample_index(n: int, limit: int = MAX_MARKS) -> Indices | None:
    """Sorted positions of a seeded uniform sample of ``limit`` of ``n`` rows (without
    replacement, so the rows keep their order); None when ``n <= limit``: draw them all."""
    if n <= limit:
        return None
    chosen = np.random.default_rng(SEED).choice(n, size=limit, replace=False)
    return np.sort(chosen)


def split_sample(sizes: Sequence[int], limit: int = MAX_MARKS) -> list[Indices] | None:
    """One seeded sample of ``limit`` rows over groups laid end to end, as each group's own
    sorted positions (a group's share follows its size); None when every row fits."""
    index = sample_index(sum(sizes), limit)
    if index is None:
        return None
    ends = np.cumsum(np.asarray(sizes, dtype=np.intp))
    starts = ends - np.asarray(sizes, dtype=np.intp)
    cuts = np.searchsorted(index, ends)
    return [
        index[low:high] - start
        for low, high, start in zip(np.r_[0, cuts[:-1]], cuts, starts, strict=True)
    ]


def box_stats(values: Floats, *, distinct_fliers: bool = True) -> BoxStats:
    """Quartiles, whisker ends and outliers of every value, as ``matplotlib.cbook.boxplot_stats``
    computes them (linear percentiles, whiskers at the most extreme values within 1.5 IQR).

    With ``distinct_fliers`` each outlier value is kept once (a stack of equal marks draws as
    one), and past ``MAX_FLIERS`` distinct ones a seeded sample of them plus both extremes."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        nan = float("nan")
        return BoxStats(nan, nan, nan, nan, nan, (), 0)
    q1, median, q3 = (float(q) for q in np.percentile(x, [25, 50, 75]))
    iqr = q3 - q1
    below = x[x <= q3 + WHISKER_IQR * iqr]
    above = x[x >= q1 - WHISKER_IQR * iqr]
    high = q3 if below.size == 0 or below.max() < q3 else float(below.max())
    low = q1 if above.size == 0 or above.min() > q1 else float(above.min())
    fliers = np.concatenate([x[x < low], x[x > high]])
    if distinct_fliers:
        fliers = _few_fliers(np.unique(fliers))
    return BoxStats(median, q1, q3, low, high, tuple(fliers.tolist()), int(x.size))


def _few_fliers(distinct: Floats) -> Floats:
    """At most ``MAX_FLIERS`` of the sorted distinct outliers: both extremes and a seeded sample
    of the rest, in order."""
    inner = sample_index(distinct.size - 2, MAX_FLIERS - 2)
    if inner is None:
        return distinct
    return np.concatenate([distinct[:1], distinct[1:-1][inner], distinct[-1:]])


def trend(x: Floats, y: Floats, bins: int = TREND_BINS) -> tuple[list[float], list[float]]:
    """The mean of ``x`` and of ``y`` in each of ``bins`` equal-count slices of the points
    ordered by ``x`` (points missing either left out): a line through every point's trend that
    a sample cannot bias."""
    given = ~(np.isnan(x) | np.isnan(y))
    if not given.all():
        x, y = x[given], y[given]
    order = np.argsort(x, kind="stable")
    n = order.size
    bins = min(bins, n)
    if bins == 0:
        return [], []
    starts = (np.arange(bins) * n) // bins
    counts = np.diff(np.r_[starts, n])
    means_x = np.add.reduceat(x[order], starts) / counts
    means_y = np.add.reduceat(y[order], starts) / counts
    return means_x.tolist(), means_y.tolist()


def shown_note(
    shown: int, total: int, unit: str, limit: int, summary: str, *, per_panel: bool = False
) -> str:
    """The figure's statement of what it samples, e.g. "Drawn: a seeded random sample of 5,000
    of the 909,090 points (all are drawn up to 5,000). Lines: every point."."""
    each = " per panel" if per_panel else ""
    return (
        f"Drawn: a seeded random sample of {shown:,} of the {total:,} {unit} (all are drawn "
        f"up to {limit:,}{each}). {summary[:1].upper()}{summary[1:]}."
    )
