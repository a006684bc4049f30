from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

from jurybox.reporting import render_html
from jurybox.reporting.render.html import EXCERPT_CHARS
from jurybox.reporting.view.format import fmt_rate

from .conftest import Built, swap_consistency
from .synthetic import HOSTILE

SECTION_IDS = (
    "verdict",
    "checks",
    "records",
    "agreement",
    "bias",
    "effects",
    "reliability",
    "human_calibration",
    "accuracy",
    "panels",
    "plots",
    "items",
    "failures",
)


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.images: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.append(tag)
        if values.get("id"):
            self.ids.append(str(values["id"]))
        if tag == "a" and values.get("href"):
            self.hrefs.append(str(values["href"]))
        if tag == "img":
            self.images.append(str(values.get("src")))


def _parse(text: str) -> _Collector:
    collector = _Collector()
    collector.feed(text)
    return collector


def test_self_contained_no_script_but_the_explorer_no_network(built: Built) -> None:
    text = built.paths.html.read_text(encoding="utf-8")
    page = _parse(text)
    assert page.tags.count("script") == 2 and {"jb-data", "jb-explorer"} <= set(page.ids)
    assert "link" not in page.tags
    assert "Content-Security-Policy" in text
    assert all(src.startswith("data:image/svg+xml;base64,") for src in page.images)
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", text)


def test_every_section_is_present_and_every_link_resolves(built: Built) -> None:
    page = _parse(built.paths.html.read_text(encoding="utf-8"))
    for section in SECTION_IDS:
        assert section in page.ids, section
    anchors = set(page.ids)
    # "#items?judge=..&filter=.." opens the explorer: its anchor is "items".
    internal = [h[1:].split("?")[0] for h in page.hrefs if h.startswith("#")]
    assert internal and all(target in anchors for target in internal), internal


def test_images_are_embedded_svgs(built: Built) -> None:
    page = _parse(built.paths.html.read_text(encoding="utf-8"))
    assert len(page.images) == len(built.paths.svgs) >= 5  # one per plot that applies
    embedded = {base64.b64decode(src.split(",", 1)[1]) for src in page.images}
    assert embedded == {path.read_bytes() for path in built.paths.svgs}


def test_untrusted_text_is_escaped(rubric: Built) -> None:
    text = rubric.paths.html.read_text(encoding="utf-8")
    assert HOSTILE not in text
    assert "<script>" not in text
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in text
    assert "Question 0 <b>" not in text


def test_failures_are_counted_and_linked_to_their_raw_text(rubric: Built) -> None:
    text = rubric.paths.html.read_text(encoding="utf-8")
    page = _parse(text)
    assert "#failures-judge-claude" in page.hrefs and "#failures-judge-openai" in page.hrefs
    failures = [i for i in page.ids if i.startswith("rec-")]
    assert len(failures) == 3
    assert "HTTP 500 after 5 tries" in text
    assert "no raw text recorded" in text
    # The long raw text is cut to an excerpt, with the full text behind <details>.
    assert "The judge rambled. " * (EXCERPT_CHARS // 19) in text
    assert "<details>" in text and "Show the full text" in text


def test_headline_figures_match_the_report(pairwise: Built) -> None:
    text = pairwise.paths.html.read_text(encoding="utf-8")
    swap = swap_consistency(pairwise.report, "judge-claude")
    assert f"{fmt_rate(swap.value)} ({swap.consistent}/{swap.n})" in text
    level = pairwise.report.verdict.level
    assert f"level-{level}" in text


def test_rendering_a_minimal_report_does_not_need_plots_or_records(rubric: Built) -> None:
    text = render_html(rubric.report)
    assert "No failed record" in text or "failed records" in text.lower()
    assert "data:image/" not in text
