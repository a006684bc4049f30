"""Markdown report text is inert: no raw HTML, no Markdown links, no javascript: targets."""

from __future__ import annotations

import re

import pytest

from jurybox.reporting.view.markdown_escape import escape_markdown, safe_link_target


def test_html_and_markdown_syntax_are_escaped() -> None:
    text = escape_markdown('<script>alert("x")</script> [click](javascript:alert(1)) | a')
    assert "<" not in text and "&lt;script>" in text and "&lt;/script>" in text
    assert "[click\\](" in text  # no link can form: the label's close is escaped
    assert "\\|" in text  # a table cell stays one cell
    assert "<" not in escape_markdown("<javascript:alert(1)>")  # no autolink either
    assert escape_markdown("[x]: javascript:alert(1)") == "[x\\]: javascript:alert(1)"
    assert escape_markdown("&#106;avascript") == "&amp;#106;avascript"
    assert escape_markdown("two\nlines") == "two lines"
    assert escape_markdown("plain words") == "plain words"
    # Our own figures stay readable in the raw file.
    for figure in ("-0.25 (n = 12)", "<0.001", "2.45 [1.63, 3.25]", "a_b *c* > d"):
        assert escape_markdown(figure) == figure


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\u200bscript:alert(1)",
        "javascript&colon;alert(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:msgbox",
    ],
)
def test_dangerous_link_targets_are_refused(url: str) -> None:
    assert safe_link_target(url) is None


def test_safe_link_targets_are_kept() -> None:
    assert safe_link_target("https://example.org/a?b=1") == "https://example.org/a?b=1"
    assert safe_link_target("plots/bias.png") == "plots/bias.png"
    assert safe_link_target("mailto:someone@example.org") == "mailto:someone@example.org"
    assert safe_link_target("plots/x (1).png") == "plots/x%20%281%29.png"


def test_summary_tables_keep_hostile_judge_names_and_sources_inert() -> None:
    """End to end: a judge named with HTML and a javascript: link, and a hostile source path,
    reach summary_tables.md only as inert text."""
    from dataclasses import replace

    from jurybox.analysis import AnalysisOptions, analyze_records
    from jurybox.reporting import render_markdown
    from reporting.synthetic import pairwise_world

    world = pairwise_world(n_items=12)
    hostile = "<img src=x onerror=alert(1)>[x](javascript:alert(1))"
    records = [
        replace(r, judge_name=hostile) if r.judge_name == world.records[0].judge_name else r
        for r in world.records
    ]
    report = analyze_records(
        records, human=world.human, items=world.items, options=AnalysisOptions()
    )
    text = render_markdown(report, source="<script>x</script>.jsonl")

    assert "<img" not in text and "<script" not in text
    assert re.search(r"(?<!\\)\]\(javascript:", text) is None  # every such "](" is escaped
    assert "&lt;img src=x onerror=alert(1)>[x\\](javascript:alert(1))" in text
