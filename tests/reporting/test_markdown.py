from __future__ import annotations

import re

from jurybox.analysis.model.effects import PairedTests
from jurybox.reporting import render_markdown
from jurybox.reporting.view.format import ROUNDING_NOTE, fmt_p, fmt_rate, fmt_score

from .conftest import Built, swap_consistency

SECTION_TITLES = (
    "Verdict: can these judges be trusted for this comparison?",
    "Records and failures",
    "Agreement between judges",
    "Bias diagnostics",
    "Treatment effects",
    "Reliability",
    "Human calibration",
    "Accuracy against gold labels",
    "Panels of judges",
    "Plots",
)


def test_every_section_and_the_rounding_rule_are_stated(built: Built) -> None:
    text = built.paths.markdown.read_text(encoding="utf-8")
    assert ROUNDING_NOTE in text
    for title in SECTION_TITLES:
        assert f"## {title}" in text, title


def test_tables_are_well_formed(built: Built) -> None:
    text = built.paths.markdown.read_text(encoding="utf-8")
    blocks = re.findall(r"((?:^\|.*\|\n)+)", text, flags=re.MULTILINE)
    assert len(blocks) >= 8
    for block in blocks:
        rows = [r for r in block.splitlines() if r]
        widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
        assert len(widths) == 1, block  # every row has the header's column count
        assert re.fullmatch(r"\|(?:(?::---|---:)\|)+", rows[1]), rows[1]


def test_rubric_tables_hold_the_report_figures(rubric: Built) -> None:
    text = rubric.paths.markdown.read_text(encoding="utf-8")
    report = rubric.report
    assert report.effects.scores is not None and report.effects.scores.overall is not None
    total = report.effects.scores.overall.dimensions["total"]
    assert isinstance(total, PairedTests)
    row = next(line for line in text.splitlines() if line.startswith("| all items | total"))
    assert fmt_score(total.control_mean) in row
    assert fmt_score(total.treatment_mean) in row
    assert fmt_p(total.wilcoxon.p_value) in row
    assert "Treatment effects per dimension and subgroup" in text
    assert "| category: math | accuracy" in text
    assert report.agreement.scores is not None and report.agreement.scores.dimensions
    alpha = report.agreement.scores.dimensions["total"].krippendorff_alpha
    assert alpha is not None and fmt_rate(alpha.value) in text
    retest = report.reliability.test_retest
    assert retest is not None and retest.judges
    icc = retest.judges["judge-openai"]
    assert f"judge: judge-openai (total) | {fmt_rate(icc.value)}" in text
    assert "ok 48, unparsed 1, provider_error 1" in text  # judge-claude, by status
    assert "<0.001" in text  # the treatment effect planted in the synthetic data is large


def test_pairwise_tables_hold_counts_next_to_rates(pairwise: Built) -> None:
    text = pairwise.paths.markdown.read_text(encoding="utf-8")
    swap = swap_consistency(pairwise.report, "judge-claude")
    expected = f"{fmt_rate(swap.value)} ({swap.consistent}/{swap.n})"
    assert f"| judge-claude | {expected} |" in text
    judges = pairwise.report.accuracy_vs_gold.judges
    assert judges is not None
    accuracy = judges["judge-openai"].pooled
    assert f"{fmt_rate(accuracy.value)} ({accuracy.correct}/{accuracy.n})" in text


def test_pipes_and_newlines_in_names_cannot_break_a_table(rubric: Built) -> None:
    summary = rubric.report.summary
    judge = summary.judges[0].model_copy(update={"model": "evil|model\nname"})
    report = rubric.report.model_copy(
        update={"summary": summary.model_copy(update={"judges": [judge]})}
    )
    text = render_markdown(report)
    assert "evil\\|model name" in text
