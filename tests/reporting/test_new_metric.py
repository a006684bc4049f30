"""Adding a statistic to the report: one field on its family model, one row in its section."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jurybox.analysis.model import Report
from jurybox.analysis.model.agreement import Agreement
from jurybox.analysis.model.metrics import ProportionMetric
from jurybox.reporting import render_html, render_markdown
from jurybox.reporting.sections.agreement import AGREEMENT

from .conftest import Built


class ToyAgreement(Agreement):
    """The agreement family with one more statistic (the only model change)."""

    toy_share: ProportionMetric | None = None


@pytest.fixture
def toy_row() -> Iterator[None]:
    """The only section change: one declared row, removed again after the test."""
    row = AGREEMENT.row(
        "Toy share of agreeing judges",
        lambda node: node.toy_share if isinstance(node, ToyAgreement) else None,
    )
    yield
    AGREEMENT.rows.remove(row)


def _with_toy(report: Report, toy: ProportionMetric) -> Report:
    agreement = ToyAgreement.model_validate({**report.agreement.model_dump(), "toy_share": toy})
    return report.model_copy(update={"agreement": agreement})


@pytest.mark.usefixtures("toy_row")
def test_a_new_metric_is_shown_in_its_section(rubric: Built) -> None:
    toy = ProportionMetric(
        value=0.42424, n=33, method="toy", reason=None, ci_low=0.25, ci_high=0.6126
    )
    report = _with_toy(Report.model_validate(rubric.report), toy)
    html = render_html(report)
    section = html.split('id="agreement"', 1)[1].split("<section", 1)[0]
    assert "Toy share of agreeing judges" in section
    assert "0.424 [0.250, 0.613]" in section  # rounded by the view, with its interval
    assert "Toy share of agreeing judges | 0.424 [0.250, 0.613]" in render_markdown(report)


@pytest.mark.usefixtures("toy_row")
def test_a_missing_new_metric_is_a_dash_with_its_reason(rubric: Built) -> None:
    toy = ProportionMetric(value=None, n=0, method="toy", reason="no toy data")
    report = _with_toy(Report.model_validate(rubric.report), toy)
    markdown = render_markdown(report)
    assert "| Toy share of agreeing judges | — |" in markdown
    assert "- — no toy data" in markdown


def test_without_a_declared_row_the_section_is_unchanged(rubric: Built) -> None:
    report = Report.model_validate(rubric.report)
    assert render_markdown(report) == render_markdown(rubric.report)
    assert "More figures" not in render_markdown(report)
