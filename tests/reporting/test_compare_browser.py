"""compare.html in headless Chromium: every link resolves to a file that exists (each run's
own report.html, relative to where the page was written), an item link opens that item in the
run's explorer, and neither page logs an error or asks for anything beyond itself."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml
from click.testing import CliRunner
from rich.console import Console

from jurybox.app.run import run_from_config
from jurybox.cli import main

from .cdp import Chromium
from .test_explorer_browser import READY

pytestmark = pytest.mark.browser
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LAPTOP = (1366, 900)
LINKS = """JSON.stringify(Array.from(document.querySelectorAll('a[href]')).map(a => ({
  raw: a.getAttribute('href'), url: a.href})))"""


def _run(folder: Path, name: str, **task: object) -> Path:
    config = yaml.safe_load((EXAMPLES / "pairwise.yaml").read_text(encoding="utf-8"))
    config["task"].update(task)
    config["paths"].update(
        dataset=str(EXAMPLES / "items.jsonl"),
        human_labels=str(EXAMPLES / "human_labels.jsonl"),
        output_dir=name,
    )
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    run_from_config(path, console=Console(quiet=True), limit=12)
    run_dir = folder / name
    _cli("analyze", str(run_dir), "--out", str(run_dir / "report"), "--no-plots")
    return run_dir


def _cli(*argv: str) -> None:
    result = CliRunner().invoke(main, list(argv), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _open(browser: Chromium, url: str) -> str:
    session, page = browser.open_page(url, width=LAPTOP[0], height=LAPTOP[1])
    assert page.errors() == [], page.errors()
    return session


def _clean(browser: Chromium, session: str, url: str) -> None:
    seen = browser.collect(session)
    assert seen.errors() == [], seen.errors()
    page = url.split("#", 1)[0]
    elsewhere = [u for u in seen.requests if u.split("#", 1)[0] != page]
    assert elsewhere == [], f"the page asked for {elsewhere}"


def test_every_compare_link_opens_an_existing_file(browser: Chromium, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    plain = _run(runs, "prompt v1")
    ruled = _run(runs, "prompt v2", instructions="Prefer the answer that is right.")
    out = tmp_path / "compare out" / "v1 vs v2"
    _cli("compare", str(plain), str(ruled), "--out", str(out))
    page = out / "compare.html"
    url = page.resolve().as_uri()

    session = _open(browser, url)
    assert browser.evaluate(session, "document.getElementById('answer1') !== null")
    links = json.loads(browser.evaluate(session, LINKS))
    _clean(browser, session, url)
    files, items = set(), []
    for link in links:
        if link["raw"].startswith("#"):  # the page's own anchors
            target = link["raw"][1:]
            assert browser.evaluate(session, f"!!document.getElementById({json.dumps(target)})")
            continue
        parsed = urlparse(link["url"])
        assert parsed.scheme == "file", link
        path = Path(unquote(parsed.path))
        assert path.is_file(), f"{link['raw']} does not resolve to a file ({path})"
        files.add(path)
        if parsed.fragment.startswith("items?item="):
            items.append(link["url"])
    assert files == {plain / "report" / "report.html", ruled / "report" / "report.html"}
    assert items, "the changed units link to their items"

    item_url = next(u for u in items if "prompt%20v2" in u)
    session = _open(browser, item_url)
    browser.wait_for(session, READY)
    opened = "document.querySelector('[data-detail]').dataset.detailItem"
    assert browser.evaluate(session, opened) == unquote(item_url.rsplit("item=", 1)[1])
    _clean(browser, session, item_url)
