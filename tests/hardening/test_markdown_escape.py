"""Markdown report text is inert: no raw HTML, no Markdown links, no javascript: targets."""

from __future__ import annotations

import pytest

from jurybox.reporting.markdown_escape import escape_markdown, markdown_link, safe_link_target


def test_html_and_markdown_syntax_are_escaped() -> None:
    text = escape_markdown('<script>alert("x")</script> [click](javascript:alert(1)) | a')
    assert "<" not in text and ">" not in text and "&lt;script&gt;" in text
    assert "\\[click\\](" in text  # no link can form: its brackets are escaped
    assert "\\|" in text  # a table cell stays one cell
    assert escape_markdown("two\nlines") == "two lines"
    assert escape_markdown("plain words") == "plain words"
    assert escape_markdown("-0.25 (n = 12)") == "-0.25 (n = 12)"  # numbers stay readable
    assert escape_markdown("a_b *c*") == "a\\_b \\*c\\*"


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
    assert "(" not in markdown_link("judge", url)


def test_safe_link_targets_are_kept() -> None:
    assert safe_link_target("https://example.org/a?b=1") == "https://example.org/a?b=1"
    assert safe_link_target("plots/bias.png") == "plots/bias.png"
    assert safe_link_target("mailto:someone@example.org") == "mailto:someone@example.org"
    assert markdown_link("a_b", "plots/x (1).png") == "[a\\_b](plots/x%20%281%29.png)"
