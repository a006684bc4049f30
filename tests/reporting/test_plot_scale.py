"""Issue 19: figures of very many points. Past ``MAX_MARKS`` marks a panel draws a seeded sample
and says so, while its boxes, trend lines and means are computed on every value; at or below it
every mark is drawn as before (``bench/plot_scale.py --digests`` compares the bytes with another
tree)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib import cbook

from jurybox.analysis import TOTAL, AnalysisOptions
from jurybox.analysis.effects import item_arm_scores
from jurybox.analysis.frame import judge_scores
from jurybox.app import build_report
from jurybox.reporting.plots import build_plot_specs
from jurybox.reporting.plots.bias import _with_lengths
from jurybox.reporting.plots.dense import (
    MAX_FLIERS,
    MAX_MARKS,
    box_stats,
    sample_index,
    split_sample,
    trend,
)
from jurybox.reporting.plots.draw import render
from jurybox.reporting.plots.effects import MAX_ITEM_LINES
from jurybox.reporting.plots.specs import (
    BoxPanel,
    PairedPanel,
    PlotSpec,
    ScatterPanel,
)
from jurybox.reporting.render.markdown import plot_index

from .conftest import Built
from .synthetic import World, rubric_world

MANY_ITEMS = 2_600  # 10,400 scores (2 judges x 2 arms): past MAX_MARKS, and past 2,500 items


@pytest.fixture(scope="module")
def many() -> tuple[World, Any, Any]:
    world = rubric_world(MANY_ITEMS)
    report, frame = build_report(
        world.records, human=world.human, items=world.items, options=AnalysisOptions()
    )
    return world, report, frame


def _spec(specs: list[PlotSpec], name: str) -> PlotSpec:
    (spec,) = [s for s in specs if s.name == name]
    return spec


def _pairs(xs: Any, ys: Any) -> list[tuple[float, float]]:
    return sorted(zip((float(x) for x in xs), (float(y) for y in ys), strict=True))


def _is_sub_multiset(part: list[Any], whole: list[Any]) -> bool:
    """Every element of ``part`` is in ``whole``, at most as often."""
    return not Counter(part) - Counter(whole)


# --- sampling ---------------------------------------------------------------------------------


def test_at_or_below_the_limit_nothing_is_sampled() -> None:
    assert sample_index(MAX_MARKS) is None
    assert split_sample([MAX_MARKS - 1, 1]) is None


def test_a_sample_is_seeded_sorted_distinct_and_exactly_the_limit() -> None:
    first, again = sample_index(100_000), sample_index(100_000)
    assert first is not None and again is not None
    assert np.array_equal(first, again)
    assert first.size == MAX_MARKS == np.unique(first).size
    assert (np.diff(first) > 0).all() and first[0] >= 0 and first[-1] < 100_000


def test_split_sample_gives_each_group_its_share_of_one_sample() -> None:
    sizes = [9_000, 1_000, 0, 30_000]
    picks = split_sample(sizes)
    assert picks is not None
    whole = sample_index(sum(sizes))
    assert whole is not None
    starts = np.cumsum([0, *sizes[:-1]])
    assert np.array_equal(
        np.concatenate([p + s for p, s in zip(picks, starts, strict=True)]), whole
    )
    assert all(((p >= 0) & (p < n)).all() for p, n in zip(picks, sizes, strict=True))
    assert picks[2].size == 0 and sum(p.size for p in picks) == MAX_MARKS


# --- statistics on every value ----------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(1).normal(5, 2, 3_001),
        np.random.default_rng(2).integers(1, 11, 20_000).astype(float),
        np.r_[np.full(50, 4.0), [1.0, 9.0]],  # IQR 0: every other value an outlier
        np.array([7.0]),
    ],
    ids=["normal", "discrete", "iqr0", "one"],
)
def test_box_stats_are_matplotlibs_on_every_value(values: np.ndarray) -> None:
    (expected,) = cbook.boxplot_stats(values)
    every = box_stats(values, distinct_fliers=False)
    got = (every.q1, every.median, every.q3, every.whislo, every.whishi)
    assert got == tuple(float(expected[k]) for k in ("q1", "med", "q3", "whislo", "whishi"))
    assert list(every.fliers) == expected["fliers"].tolist() and every.n == values.size
    distinct = box_stats(values)
    assert list(distinct.fliers) == sorted(set(expected["fliers"].tolist()))


def test_past_max_fliers_the_extremes_stay() -> None:
    rng = np.random.default_rng(5)
    values = np.r_[rng.normal(0, 1, 100_000), np.linspace(100, 200, 5_000)]
    stats = box_stats(values)
    assert len(stats.fliers) == MAX_FLIERS
    assert (stats.fliers[0], stats.fliers[-1]) == (values.min(), 200.0)
    assert list(stats.fliers) == sorted(set(stats.fliers))


def test_trend_is_the_mean_of_each_equal_count_slice() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0, 100, 12_345), rng.normal(0, 1, 12_345)
    xs, ys = trend(x, y)
    order = np.argsort(x, kind="stable")
    slices = [order[k * x.size // 20 : (k + 1) * x.size // 20] for k in range(20)]
    assert xs == pytest.approx([x[s].mean() for s in slices], rel=1e-12)
    assert ys == pytest.approx([y[s].mean() for s in slices], rel=1e-12, abs=1e-12)
    sizes = [s.size for s in slices]
    assert np.average(ys, weights=sizes) == pytest.approx(y.mean(), abs=1e-12)  # every point


def test_boxes_from_statistics_draw_exactly_what_boxplot_draws() -> None:
    """Axes.bxp with stats computed on every value writes the same PNG and SVG bytes as
    Axes.boxplot given the values: the sampled path's boxes are the boxes of all the data."""
    rng = np.random.default_rng(4)
    for judges in (3, 8):  # vertical, then horizontal boxes
        groups = {
            f"judge-{k}\n(vendor)": [*rng.normal(5, 1.5, 400).tolist(), 0.5, 9.9]
            for k in range(judges)
        }
        plain = BoxPanel("Scores", "score", groups, ylim=(0.0, 10.0))
        boxes = {k: box_stats(np.asarray(v), distinct_fliers=False) for k, v in groups.items()}
        from_stats = BoxPanel("Scores", "score", groups, ylim=(0.0, 10.0), boxes=boxes)
        old, new = (render(PlotSpec("box", "Box", [p])) for p in (plain, from_stats))
        assert (new.png, new.svg) == (old.png, old.svg)


# --- the length lookup is the join -----------------------------------------------------------


def test_lengths_are_looked_up_as_the_join_gave_them(rubric: Built) -> None:
    scores = judge_scores(rubric.frame)
    items = rubric.frame.items
    keys = ["query_id", "arm", "length"]
    partial = items[
        (items["query_id"] != "q03") & ~((items["query_id"] == "q05") & (items["arm"] == "control"))
    ]
    unknown = pd.concat(
        [partial, pd.DataFrame({"query_id": ["zz"], "arm": ["other"], "length": [9]})]
    )
    twice = pd.concat([items, items.iloc[:3]])
    for table in (items, partial, unknown, twice, items.iloc[:0]):
        joined = scores.merge(table[keys], on=["query_id", "arm"])
        looked_up = _with_lengths(scores, table)
        assert len(looked_up) == len(joined) and (len(joined) > 0) == (not table.empty)
        for column in ("judge", "query_id", "arm", "score", "length"):
            left, right = looked_up[column].astype(str), joined[column].astype(str)
            if column == "length":
                left, right = looked_up[column].astype(float), joined[column].astype(float)
            assert left.tolist() == right.tolist(), column


# --- below the limit: every mark, as before -------------------------------------------------


def test_below_the_limit_every_mark_is_drawn_and_nothing_is_said(built: Built) -> None:
    specs = build_plot_specs(built.report, built.frame)
    assert all(s.sampled is None for s in specs)
    for spec in specs:
        for panel in spec.panels:
            assert not isinstance(panel, ScatterPanel) or panel.trends is None
            assert not isinstance(panel, BoxPanel) or panel.boxes is None
    vendor = _spec(specs, "vendor_bias")
    if vendor.status == "drawn":
        (panel,) = vendor.panels
        assert isinstance(panel, BoxPanel)
        assert sum(len(v) for v in panel.groups.values()) == len(judge_scores(built.frame))


# --- above the limit: a sample, said, over statistics of everything --------------------------


def test_the_scatter_draws_a_sample_and_its_lines_use_every_point(many: Any) -> None:
    _, report, frame = many
    spec = _spec(build_plot_specs(report, frame), "verbosity_scatter")
    (panel,) = spec.panels
    assert isinstance(panel, ScatterPanel) and panel.trends is not None
    every = _with_lengths(judge_scores(frame), frame.items)
    assert sum(len(xs) for xs, _ in panel.groups.values()) == MAX_MARKS < len(every)
    for judge, rows in every.groupby("judge", observed=True):
        xs, ys = panel.groups[str(judge)]
        assert _is_sub_multiset(_pairs(xs, ys), _pairs(rows["length"], rows["score"]))
        lengths, scores = rows["length"].to_numpy(float), rows["score"].to_numpy(float)
        assert panel.trends[str(judge)] == trend(lengths, scores)
        assert np.mean(panel.trends[str(judge)][1]) == pytest.approx(scores.mean(), abs=0.02)
    said = f"{MAX_MARKS:,} of the {len(every):,} points"
    assert spec.sampled is not None and said in spec.sampled and said in spec.caption


def test_the_boxes_use_every_response_and_the_dots_are_a_sample(many: Any) -> None:
    _, report, frame = many
    spec = _spec(build_plot_specs(report, frame), "vendor_bias")
    (panel,) = spec.panels
    assert isinstance(panel, BoxPanel) and panel.boxes is not None
    scores = judge_scores(frame)
    assert sum(len(v) for v in panel.groups.values()) == MAX_MARKS < len(scores)
    for judge, rows in scores.groupby("judge", observed=True):
        (label,) = [k for k in panel.boxes if k.startswith(f"{judge}\n")]
        values = rows["score"].to_numpy(float)
        (expected,) = cbook.boxplot_stats(values)
        box = panel.boxes[label]
        assert (box.q1, box.median, box.q3, box.whislo, box.whishi, box.n) == (
            expected["q1"],
            expected["med"],
            expected["q3"],
            expected["whislo"],
            expected["whishi"],
            values.size,
        )
        assert set(box.fliers) == set(expected["fliers"].tolist())
        assert _is_sub_multiset(sorted(panel.groups[label]), sorted(values.tolist()))
    assert spec.sampled and f"{MAX_MARKS:,} of the {len(scores):,} responses" in spec.sampled


def test_the_paired_plot_draws_a_sample_of_items_under_the_means_of_all(many: Any) -> None:
    _, report, frame = many
    spec = _spec(build_plot_specs(report, frame), "treatment_effect")
    (panel,) = spec.panels
    assert isinstance(panel, PairedPanel)
    every = item_arm_scores(frame, TOTAL)[["control", "treatment"]].dropna()
    assert len(panel.pairs) == MAX_ITEM_LINES < len(every) == MANY_ITEMS
    pairs = [tuple(p) for p in every.to_numpy(float).tolist()]
    assert _is_sub_multiset(sorted(panel.pairs), sorted(pairs))
    control, treatment = panel.means
    assert control == pytest.approx(every["control"].mean(), rel=1e-12)
    assert treatment == pytest.approx(every["treatment"].mean(), rel=1e-12)
    assert spec.sampled and f"{MAX_ITEM_LINES:,} of the {MANY_ITEMS:,} items" in spec.caption


def test_a_sampled_figure_says_so_inside_the_image_and_is_the_same_twice(many: Any) -> None:
    _, report, frame = many
    first, second = build_plot_specs(report, frame), build_plot_specs(report, frame)
    assert first == second
    for spec in first:
        if spec.sampled is None:
            continue
        drawn, again = render(spec), render(spec)
        assert (drawn.png, drawn.svg) == (again.png, again.svg)
        assert "seeded random sample" in drawn.svg  # the footer is text inside the SVG
        assert "<image" in drawn.svg  # the sampled marks are still one image, not paths


def test_the_markdown_tables_say_what_was_sampled(many: Any) -> None:
    """summary_tables.md has no image caption: its plot index says what a figure sampled."""
    _, report, frame = many
    specs = build_plot_specs(report, frame)
    index = "\n".join(plot_index(specs))
    sampled = [spec for spec in specs if spec.sampled]
    assert sampled
    for spec in sampled:
        assert spec.sampled is not None
        row = next(line for line in index.splitlines() if line.startswith(f"| {spec.title}"))
        said = spec.sampled.split(" (")[0]  # "Drawn: a seeded random sample of N of the M ..."
        assert "random sample of" in said and said in row
