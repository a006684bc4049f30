from __future__ import annotations

import io
from pathlib import Path

import matplotlib.image
import pytest

from jurybox.analysis import analyze_records
from jurybox.analysis.model.human import CriterionJudge
from jurybox.reporting import PLOT_NAMES
from jurybox.reporting.plots import build_plot_specs
from jurybox.reporting.plots.draw import render
from jurybox.reporting.plots.specs import BarPanel, PlotSpec

from .conftest import Built
from .synthetic import criterion_records

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_png(path: Path) -> None:
    """A valid PNG of sensible size: signature, decodes, >= 400x300 px, < 1 MB."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    assert len(data) < 1_000_000, path
    pixels = matplotlib.image.imread(io.BytesIO(data), format="png")
    height, width = pixels.shape[:2]
    assert width >= 400 and height >= 300, (path, width, height)
    assert pixels.std() > 0.01, f"{path} is blank"


def test_every_plot_that_applies_is_written_and_is_a_valid_png(built: Built) -> None:
    assert built.paths.plots_dir is not None
    drawn = [s.name for s in build_plot_specs(built.report, built.frame) if s.drawn]
    assert [p.stem for p in built.paths.plots] == drawn
    assert set(drawn) <= set(PLOT_NAMES) and len(drawn) >= 5
    for path in built.paths.plots:
        check_png(path)


def test_rubric_data_draws_every_plot_from_its_primary_data(rubric: Built) -> None:
    specs = {s.name: s for s in build_plot_specs(rubric.report, rubric.frame)}
    statuses = {name: spec.status for name, spec in specs.items()}
    # Rubric mode judges one response at a time: there is no position to prefer.
    assert statuses.pop("position_bias") == "not_applicable"
    assert set(statuses.values()) == {"drawn"}, statuses


def test_pairwise_data_uses_labelled_fallbacks(pairwise: Built) -> None:
    specs = {s.name: s for s in build_plot_specs(pairwise.report, pairwise.frame)}
    assert specs["position_bias"].status == "drawn"
    assert specs["agreement_matrix"].status == "drawn"
    assert specs["calibration"].status == "drawn"
    for name in ("verbosity_scatter", "vendor_bias", "treatment_effect"):
        assert specs[name].status == "fallback", name
        assert specs[name].note and specs[name].note.startswith("fallback:")
    heatmap = specs["dimension_heatmap"]
    assert heatmap.status == "not_applicable" and not heatmap.drawn
    assert heatmap.note and heatmap.note.startswith("not applicable:")
    assert heatmap.panels == ()


def test_plots_without_a_frame_still_render(pairwise: Built) -> None:
    for spec in build_plot_specs(pairwise.report, None):
        if spec.drawn:
            assert render(spec).png[:8] == PNG_SIGNATURE


def test_rendering_is_deterministic_and_leaks_no_pyplot_state(rubric: Built) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    spec: PlotSpec = build_plot_specs(rubric.report, rubric.frame)[2]
    first, second = render(spec), render(spec)
    assert first.png == second.png and first.svg == second.svg
    assert plt.get_fignums() == before == []


def test_markdown_and_html_name_each_plot_status(pairwise: Built) -> None:
    markdown = pairwise.paths.markdown.read_text(encoding="utf-8")
    html = pairwise.paths.html.read_text(encoding="utf-8")
    for spec in build_plot_specs(pairwise.report, pairwise.frame):
        for page in (markdown, html):
            assert (f"plots/{spec.name}.png" in page) is spec.drawn, spec.name
            assert (f"plots/{spec.name}.svg" in page) is spec.drawn, spec.name
            assert spec.title in page
    assert "not applicable: " in markdown and "not applicable: " in html
    assert "fallback: pairwise data has no scores" in markdown


@pytest.mark.parametrize("plots", [False])
def test_no_plots_when_not_requested(rubric: Built, tmp_path: Path, plots: bool) -> None:
    from jurybox.reporting import write_reports

    paths = write_reports(rubric.report, rubric.frame, tmp_path, plots=plots)
    assert paths.plots_dir is None and paths.plots == ()
    assert not (tmp_path / "plots").exists()
    assert "data:image/" not in paths.html.read_text(encoding="utf-8")


def test_criterion_calibration_draws_tpr_and_tnr() -> None:
    # Regression: the panel read an "estimate" key the report's proportions never have, so
    # every TPR/TNR bar was empty.
    records, human = criterion_records()
    report = analyze_records(records, human=human)
    spec = {s.name: s for s in build_plot_specs(report, None)}["calibration"]
    panel = spec.panels[0]
    assert isinstance(panel, BarPanel) and panel.title.startswith("Criterion verdicts")
    criterion = report.human_calibration.criterion
    assert criterion is not None and criterion.judges is not None
    good = criterion.judges["good|concise"]
    assert isinstance(good, CriterionJudge) and good.tpr_tnr.tpr is not None
    assert panel.series[0].label == "TPR"
    assert panel.series[0].values[0] == pytest.approx(good.tpr_tnr.tpr.value)
    assert all(v is not None for series in panel.series for v in series.values)
