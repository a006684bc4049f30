"""report.html in headless Chromium, driven through the DevTools protocol over a pipe.

Checks what a reader would see: no console error, no JavaScript exception, no browser log
error (a blocked network load or a CSP violation would be one), every section present, every
image decoded at a sensible size, no horizontal scrolling on a 1366 px laptop screen. Saves a
full-page screenshot to test-artifacts/ for a person to look at.

Skips with a reason when Chromium is missing, except in CI (``CI=true``), where it fails:
scripts/test.sh installs the Debian ``chromium`` package when run as root.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib.image
import pytest

from .cdp import Chromium
from .conftest import Built
from .test_html import SECTION_IDS

pytestmark = pytest.mark.browser
PROJECT_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT_ROOT / "test-artifacts"
LAPTOP = (1366, 768)


CHECKS = """(async () => {
  const images = Array.from(document.images);
  const decoded = await Promise.all(images.map(i => i.decode().then(() => true, () => false)));
  return JSON.stringify({
    missing: %s.filter(id => !document.getElementById(id)),
    images: images.map((i, k) => ({ok: decoded[k] && i.complete, w: i.naturalWidth,
                                    h: i.naturalHeight, shown: i.getBoundingClientRect().width})),
    scripts: Array.from(document.scripts).map(s => s.id),
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    verdictTop: document.getElementById("verdict").getBoundingClientRect().top,
    verdictText: document.getElementById("verdict").innerText,
    failures: document.querySelectorAll("[id^=rec-]").length,
    title: document.title,
  });
})()"""


def _open(browser: Chromium, built: Built, name: str) -> dict:
    session, page = browser.open_page(
        built.paths.html.resolve().as_uri(), width=LAPTOP[0], height=LAPTOP[1]
    )
    assert page.errors() == [], page.errors()
    state = json.loads(browser.evaluate(session, CHECKS % json.dumps(list(SECTION_IDS))))
    shot = browser.screenshot(session, ARTIFACTS / f"report_{name}.png")
    pixels = matplotlib.image.imread(io.BytesIO(shot.read_bytes()), format="png")
    assert pixels.shape[1] == LAPTOP[0] and pixels.shape[0] > LAPTOP[1]
    return state


@pytest.mark.parametrize("name", ["rubric", "pairwise"])
def test_report_renders_cleanly_in_chromium(
    browser: Chromium, request: pytest.FixtureRequest, name: str
) -> None:
    built: Built = request.getfixturevalue(name)
    state = _open(browser, built, name)
    assert state["missing"] == []
    assert len(state["images"]) == len(built.paths.svgs) >= 5  # the plots that apply
    for image in state["images"]:
        assert image["ok"] and image["w"] >= 400 and image["h"] >= 300, image
        assert 0 < image["shown"] <= LAPTOP[0], image
    assert state["scripts"] == ["jb-data", "jb-explorer"]  # hostile judge text stayed text
    assert state["overflow"] <= 0, "the page scrolls sideways on a laptop screen"
    assert state["verdictTop"] < 200
    assert "CAN THESE JUDGES BE TRUSTED" in state["verdictText"].upper()
    expected_failures = 3 if name == "rubric" else 0
    assert state["failures"] == expected_failures
    assert state["title"].startswith("jurybox report")


def test_the_harness_sees_a_broken_page(browser: Chromium, tmp_path: Path, rubric: Built) -> None:
    """The checks above are only worth something if they fail on a broken page."""
    html = rubric.paths.html.read_text(encoding="utf-8")
    broken = html.replace(
        "<footer>",
        '<img src="data:image/png;base64,iVBORw0KGgoAAAAA" alt="corrupt">'
        '<img src="https://example.invalid/x.png" alt="remote"><footer>',
    )
    page_path = tmp_path / "broken.html"
    page_path.write_text(broken, encoding="utf-8")
    session, page = browser.open_page(page_path.as_uri(), width=LAPTOP[0], height=LAPTOP[1])
    assert any("Content Security Policy" in e for e in page.errors()), page.errors()
    state = json.loads(browser.evaluate(session, CHECKS % json.dumps(list(SECTION_IDS))))
    assert [i["ok"] for i in state["images"]].count(False) == 2
