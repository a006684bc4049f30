"""Issue 15's plot rules: SVG beside PNG, legible at 400 px, axes fixed to the instrument's range,
many judges capped with small multiples and a note, no placeholder for a plot that does not
apply, and ``analyze --plots`` / ``--no-plots`` choosing what is drawn."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.text import Text

from jurybox.analysis import AnalysisOptions, analyze_records
from jurybox.analysis.model import Report
from jurybox.app import build_report
from jurybox.cli import main
from jurybox.records import JudgeRecord
from jurybox.reporting import PLOT_NAMES, write_reports
from jurybox.reporting.plots import build_plot_specs
from jurybox.reporting.plots.common import MAX_JUDGES, judge_order
from jurybox.reporting.plots.draw import DENSE_MARKS, WIDTH_IN, build_figure, render
from jurybox.reporting.plots.specs import PairedPanel, PlotSpec, ScatterPanel

from .conftest import Built
from .synthetic import (
    ARMS,
    HOSTILE,
    _pair_record,
    _rubric_record,
    criterion_records,
    pairwise_world,
    rubric_world,
    write_jsonl,
)

LEGIBLE_PX = 9.0  # the smallest text, in pixels, when a figure is shown 400 px wide
SVG_NS = "{http://www.w3.org/2000/svg}"


def _specs(built: Built) -> dict[str, PlotSpec]:
    return {spec.name: spec for spec in build_plot_specs(built.report, built.frame)}


def _texts(figure: Figure) -> list[Text]:
    return [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _axes_of(spec: PlotSpec) -> list:  # type: ignore[type-arg]
    return [
        ax for ax in build_figure(spec).axes if ax.get_visible() and ax.get_label() != "<colorbar>"
    ]


# --- files: SVG beside PNG, no placeholder ---------------------------------------------------


def test_each_drawn_plot_is_a_valid_svg_beside_its_png(built: Built) -> None:
    drawn = [s.name for s in _specs(built).values() if s.drawn]
    assert [p.stem for p in built.paths.plots] == drawn
    assert [p.stem for p in built.paths.svgs] == drawn
    for path in built.paths.svgs:
        root = ET.fromstring(path.read_bytes())  # well-formed XML
        assert root.tag == f"{SVG_NS}svg", path
        assert root.find(f".//{SVG_NS}text") is not None, f"{path}: text was not kept as text"
        assert path.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_plot_that_does_not_apply_writes_no_file_and_one_line(pairwise: Built) -> None:
    heatmap = _specs(pairwise)["dimension_heatmap"]
    assert heatmap.status == "not_applicable" and heatmap.panels == ()
    assert heatmap.note and heatmap.note.startswith("not applicable:")
    assert pairwise.paths.plots_dir is not None
    assert not list(pairwise.paths.plots_dir.glob("dimension_heatmap.*"))
    with pytest.raises(ValueError, match="does not apply"):
        build_figure(heatmap)
    html = pairwise.paths.html.read_text(encoding="utf-8")
    markdown = pairwise.paths.markdown.read_text(encoding="utf-8")
    line = f"Plot not drawn, {heatmap.title}: not applicable:"
    assert line in html and line in markdown
    assert "plots/dimension_heatmap.png" not in html + markdown
    assert 'id="plot-dimension_heatmap"' not in html


def test_a_rerun_removes_the_files_of_a_plot_that_no_longer_applies(
    pairwise: Built, tmp_path: Path
) -> None:
    stale = tmp_path / "plots" / "dimension_heatmap.png"
    stale.parent.mkdir()
    stale.write_bytes(b"old")
    write_reports(pairwise.report, pairwise.frame, tmp_path)
    assert not stale.exists()


def test_the_page_embeds_svg_under_the_strict_policy(rubric: Built) -> None:
    html = rubric.paths.html.read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert policy.group(1).startswith("default-src 'none'; img-src data:;")
    # The only script allowed is the item explorer's, by its hash: never inline or by URL.
    scripts = re.findall(r"script-src ([^;]+)", policy.group(1))
    assert scripts and all(re.fullmatch(r"'sha256-[A-Za-z0-9+/=]+'", s) for s in scripts[0].split())
    uris = re.findall(r'<img src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(uris) == len(rubric.paths.svgs)
    for encoded in uris:
        svg = base64.b64decode(encoded)
        assert ET.fromstring(svg).tag == f"{SVG_NS}svg"
        assert b"<script" not in svg
    assert "data:image/png" not in html  # the PNG files are for documents, the page uses SVG


def test_hostile_judge_names_stay_text_inside_the_svg(tmp_path: Path) -> None:
    world = rubric_world()
    name = "judge-openai"
    records = [
        replace(r, judge_name=HOSTILE, key=r.key.replace(name, "hostile"))
        if r.judge_name == name
        else r
        for r in world.records
    ]
    report, frame = build_report(
        records, human=world.human, items=world.items, options=AnalysisOptions()
    )
    for spec in build_plot_specs(report, frame):
        if spec.drawn:
            svg = render(spec).svg
            root = ET.fromstring(svg.encode("utf-8"))
            assert root.find(f".//{SVG_NS}script") is None
            assert "<script>" not in svg


# --- legible at 400 px -------------------------------------------------------------------------


def test_every_figure_is_one_panel_wide_and_legible_at_400_px(built: Built) -> None:
    for spec in _specs(built).values():
        if not spec.drawn:
            continue
        figure = build_figure(spec)
        width_in = figure.get_figwidth()
        assert width_in == WIDTH_IN, spec.name
        for text in _texts(figure):
            shown_px = text.get_fontsize() / 72 * 400 / width_in
            assert shown_px >= LEGIBLE_PX, (spec.name, text.get_text(), shown_px)


# --- scales fixed to the instrument --------------------------------------------------------------


@pytest.fixture(scope="module")
def rubric_1_10() -> tuple[Report, object]:
    world = rubric_world()
    options = AnalysisOptions(score_scale=(1, 10))
    return build_report(world.records, human=world.human, items=world.items, options=options)


def test_score_axes_span_the_rubric_scale(rubric_1_10: tuple[Report, object]) -> None:
    report, frame = rubric_1_10
    specs = {s.name: s for s in build_plot_specs(report, frame)}  # type: ignore[arg-type]
    images = [a for ax in _axes_of(specs["dimension_heatmap"]) for a in ax.images]
    assert len(images) == 1 and isinstance(images[0], AxesImage)
    assert images[0].get_clim() == (1.0, 10.0)  # not the span of the means (about 4.7-6.2)
    assert "the rubric's scale 1–10" in specs["dimension_heatmap"].caption
    for name in ("vendor_bias", "treatment_effect", "verbosity_scatter"):
        (ax,) = _axes_of(specs[name])
        assert ax.get_ylim() == (1.0, 10.0), name


def test_without_a_declared_scale_the_observed_whole_span_is_used(rubric: Built) -> None:
    scores = rubric.frame.scores["score"].dropna()
    span = (float(np.floor(scores.min())), float(np.ceil(scores.max())))
    (ax,) = _axes_of(_specs(rubric)["vendor_bias"])
    assert ax.get_ylim() == span
    assert "no declared scale" in _specs(rubric)["vendor_bias"].caption


def test_proportions_span_0_to_1_and_kappa_minus_1_to_1(pairwise: Built) -> None:
    specs = _specs(pairwise)
    for ax in _axes_of(specs["position_bias"]):
        assert ax.get_ylim() == (0.0, 1.0)
    for ax in _axes_of(specs["calibration"]):  # accuracy, then share right per confidence
        assert ax.get_ylim() == (0.0, 1.0)
    kappa, share = (ax.images[0].get_clim() for ax in _axes_of(specs["agreement_matrix"]))
    assert kappa == (-1.0, 1.0) and share == (0.0, 1.0)


def test_calibration_caption_names_only_the_panels_drawn(pairwise: Built) -> None:
    both = _specs(pairwise)["calibration"]
    assert [type(p).__name__ for p in both.panels] == ["BarPanel", "LinePanel"]
    assert both.caption.startswith("Top: each judge's accuracy against the gold label")
    assert " Bottom: share right at each stated confidence level" in both.caption
    records, human = criterion_records()
    report = analyze_records(records, human=human)
    only = {s.name: s for s in build_plot_specs(report, None)}["calibration"]
    assert len(only.panels) == 1  # criterion verdicts state no confidence
    assert only.caption.startswith("Share of human Pass items")
    assert "Top:" not in only.caption and "Bottom" not in only.caption
    assert "Right" not in only.caption  # the old caption described a panel that was not there


# --- many judges ----------------------------------------------------------------------------------


def _renamed(record: JudgeRecord, judge: str) -> JudgeRecord:
    return replace(
        record,
        judge_name=judge,
        judge_model=f"{judge}-model",
        key=record.key.replace(record.judge_name, judge),
    )


N_MANY = 65


def many_judges_rubric(n_judges: int = N_MANY, n_items: int = 4) -> list[JudgeRecord]:
    rng = np.random.default_rng(3)
    records = []
    for i in range(n_items):
        base = rng.uniform(4, 7)
        for k in range(n_judges):
            for arm, quality in zip(ARMS, (base, base + 1.0), strict=True):
                record = _rubric_record(f"q{i:02d}", "judge-openai", arm, quality + k / 40, rng)
                records.append(_renamed(record, f"judge-{k:02d}"))
    return records


def many_judges_pairwise(n_judges: int = N_MANY, n_items: int = 4) -> list[JudgeRecord]:
    rng = np.random.default_rng(5)
    records = []
    for i in range(n_items):
        for k in range(n_judges):
            for first in ARMS:
                winner = first if rng.random() < k / n_judges else ARMS[i % 2]
                record = _pair_record(f"q{i:02d}", "judge-openai", first, winner, "high")
                records.append(_renamed(record, f"judge-{k:02d}"))
    return records


@pytest.fixture(scope="module")
def many_rubric(tmp_path_factory: pytest.TempPathFactory) -> Built:
    world = rubric_world(n_items=4)
    records = many_judges_rubric()
    report, frame = build_report(records, human=None, items=world.items, options=AnalysisOptions())
    paths = write_reports(report, frame, tmp_path_factory.mktemp("many_rubric"))
    return Built(world, report, frame, paths)


@pytest.fixture(scope="module")
def many_pairwise(tmp_path_factory: pytest.TempPathFactory) -> Built:
    world = pairwise_world(n_items=4)
    records = many_judges_pairwise()
    report, frame = build_report(records, human=None, items=world.items, options=AnalysisOptions())
    paths = write_reports(report, frame, tmp_path_factory.mktemp("many_pairwise"))
    return Built(world, report, frame, paths)


LEFT_OUT = f"Showing {MAX_JUDGES} of {N_MANY} judges"


@pytest.mark.slow  # 65 judges: minutes of analysis (2,080 judge pairs) on a loaded machine
@pytest.mark.timeout(1500)
def test_65_rubric_judges_give_capped_small_multiples_with_a_note(many_rubric: Built) -> None:
    specs = _specs(many_rubric)
    scatter = specs["verbosity_scatter"]
    assert scatter.columns == 2 and len(scatter.panels) == MAX_JUDGES
    assert all(isinstance(p, ScatterPanel) and len(p.groups) == 1 for p in scatter.panels)
    assert scatter.left_out is not None and scatter.left_out.startswith(LEFT_OUT)
    assert f"{N_MANY - MAX_JUDGES} left out" in scatter.left_out
    shown = [p.title for p in scatter.panels]
    assert shown == judge_order(many_rubric.report)[:MAX_JUDGES]
    box = specs["vendor_bias"].panels[0]
    assert len(box.groups) == MAX_JUDGES  # type: ignore[union-attr]
    html = many_rubric.paths.html.read_text(encoding="utf-8")
    assert html.count(LEFT_OUT) >= 2


@pytest.mark.slow  # 65 judges: minutes of analysis (2,080 judge pairs) on a loaded machine
@pytest.mark.timeout(1500)
def test_65_pairwise_judges_cap_every_per_judge_figure(many_pairwise: Built) -> None:
    specs = _specs(many_pairwise)
    for name in ("position_bias", "agreement_matrix", "vendor_bias", "treatment_effect"):
        spec = specs[name]
        assert spec.drawn and spec.left_out and spec.left_out.startswith(LEFT_OUT), name
        for panel in spec.panels:
            shown = getattr(panel, "categories", None) or getattr(panel, "rows", None)
            assert shown is not None and len(shown) <= MAX_JUDGES + 1, (name, len(shown))
    # least trusted first: the most position-biased judges are the ones drawn
    swap = specs["position_bias"].panels[0]
    order = judge_order(many_pairwise.report)
    assert list(swap.categories) == order[:MAX_JUDGES]  # type: ignore[union-attr]


@pytest.mark.slow  # 65 judges: minutes of analysis (2,080 judge pairs) on a loaded machine
@pytest.mark.timeout(1500)
def test_judge_order_puts_the_least_trusted_first(many_pairwise: Built) -> None:
    levels = many_pairwise.report.verdict.judges
    rank = ("not_trusted", "use_with_caution", "insufficient_evidence", "trusted")
    ordered = [rank.index(levels[j].level) for j in judge_order(many_pairwise.report)]
    assert ordered == sorted(ordered)


# --- choosing plot families ----------------------------------------------------------------


def _analyze(tmp_path: Path, *flags: str) -> tuple[Result, Path]:
    world = rubric_world()
    judgments = tmp_path / "judgments.jsonl"
    write_jsonl(world.records, judgments)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["analyze", str(judgments), "--out", str(out), *flags])
    return result, out


def test_analyze_plots_draws_only_the_named_families(tmp_path: Path) -> None:
    result, out = _analyze(tmp_path, "--plots", "vendor_bias, agreement_matrix")
    assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (out / "plots").iterdir())
    assert files == [
        "agreement_matrix.png",
        "agreement_matrix.svg",
        "vendor_bias.png",
        "vendor_bias.svg",
    ]


def test_analyze_plots_rejects_an_unknown_name_before_writing(tmp_path: Path) -> None:
    result, out = _analyze(tmp_path, "--plots", "vendor_bias,pie_chart")
    assert result.exit_code == 2
    assert "unknown plot pie_chart" in result.output and PLOT_NAMES[0] in result.output
    assert not out.exists()


def test_no_plots_writes_no_image(tmp_path: Path) -> None:
    result, out = _analyze(tmp_path, "--no-plots")
    assert result.exit_code == 0, result.output
    assert not (out / "plots").exists()
    assert not [p for p in out.rglob("*") if p.suffix in (".png", ".svg")]
    assert "data:image/" not in (out / "report.html").read_text(encoding="utf-8")


def test_analyze_reads_the_rubric_scale_from_the_run_manifest(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(rubric_world().records, run / "judgments.jsonl")
    manifest = {"config": {"task": {"mode": "rubric", "rubric": "general"}}}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "out"
    args = ["analyze", str(run), "--out", str(out), "--plots", "dimension_heatmap"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "analysis_report.json").read_text(encoding="utf-8"))
    assert report["options"]["score_scale"] == [1, 10]  # the built-in general rubric's scale
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Colours span the rubric&#39;s scale 1–10." in html


@pytest.mark.parametrize("items", [40, 5_000], ids=["few", "many"])
def test_every_item_is_drawn_and_many_marks_are_an_image_in_the_svg(items: int) -> None:
    """A paired plot draws one line per item whatever the count; above DENSE_MARKS the marks go
    into the SVG as one image (thousands of vector paths took minutes), below it as vectors."""
    rng = np.random.default_rng(1)
    pairs = [(float(a), float(b)) for a, b in rng.integers(1, 6, size=(items, 2))]
    panel = PairedPanel("Scores", "score", ("control", "treatment"), pairs, means=(3.0, 3.1))
    spec = PlotSpec("paired", "Paired", [panel])
    (axes,) = build_figure(spec).axes
    (lines,) = [c for c in axes.collections if isinstance(c, LineCollection)]
    assert len(lines.get_segments()) == items
    assert [tuple(s[:, 1]) for s in lines.get_segments()] == pairs
    svg = render(spec).svg
    dense = 2 * items > DENSE_MARKS
    assert ("<image" in svg) == dense
    assert svg.count("<path") < 200 if dense else svg.count("<path") > items


def _old_save(spec: PlotSpec) -> tuple[bytes, str]:
    """``render``'s saving as it was before issue #19: the SVG saved with the placeholder
    ("none") layout engine, which made savefig draw every dense layer once more to discard it."""
    import io

    import matplotlib

    from jurybox.reporting.plots import draw

    with matplotlib.rc_context(draw.STYLE):
        figure = build_figure(spec)
        png, svg = io.BytesIO(), io.BytesIO()
        figure.savefig(png, format="png", dpi=draw.DPI, facecolor="white")
        figure.set_layout_engine("none")
        figure.savefig(svg, format="svg", facecolor="white", metadata={"Date": None})
    return png.getvalue(), svg.getvalue().decode("utf-8")


def _scatter_and_paired(items: int) -> list[PlotSpec]:
    rng = np.random.default_rng(2)
    xs = [float(v) for v in rng.uniform(10, 500, size=items)]
    ys = [float(v) for v in rng.integers(1, 6, size=items)]
    groups = {"judge a": (xs, ys), "judge b": (ys, xs)}
    scatter = ScatterPanel("Length", "length", "score", groups, ylim=(0.5, 5.5))
    pairs = [(float(a), float(b)) for a, b in rng.integers(1, 6, size=(items, 2))]
    paired = PairedPanel("Scores", "score", ("control", "treatment"), pairs, means=(3.0, 3.1))
    return [PlotSpec("scatter", "Scatter", [scatter]), PlotSpec("paired", "P", [paired])]


@pytest.mark.parametrize("items", [40, 3_000], ids=["few", "many"])
def test_saving_without_a_layout_engine_writes_the_same_bytes(items: int) -> None:
    for spec in _scatter_and_paired(items):
        new = render(spec)
        assert (new.png, new.svg) == _old_save(spec)


def test_scatter_draws_the_same_offsets_as_from_the_lists() -> None:
    """The scatter is given arrays (from lists matplotlib builds its mask value by value): the
    marks are placed exactly where ``ax.scatter(list, list)`` placed them."""
    spec = _scatter_and_paired(3_000)[0]
    (panel,) = spec.panels
    assert isinstance(panel, ScatterPanel)
    (axes,) = build_figure(spec).axes
    old_axes = Figure().subplots()
    for collection, (xs, ys) in zip(axes.collections, panel.groups.values(), strict=True):
        old = old_axes.scatter(list(xs), list(ys))
        assert np.array_equal(collection.get_offsets(), old.get_offsets())
        assert not np.ma.is_masked(collection.get_offsets())
