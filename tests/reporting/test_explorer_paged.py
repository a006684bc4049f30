"""Reports over many items (issue 19): the explorer paged into side files, the failure appendix
capped with every failure in a side file; small reports as before.

The thresholds are lowered here (``PAGED_OVER``, ``PAGE_ITEMS``, ``MAX_FAILURES``) so that a
few hundred synthetic items take the paths a million records take.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jurybox.analysis import AnalysisOptions
from jurybox.app import build_report
from jurybox.records import Status
from jurybox.reporting import write_reports
from jurybox.reporting.explorer import build_explorer, paged
from jurybox.reporting.explorer.payload import Payload, decode_payload
from jurybox.reporting.render import failures
from jurybox.reporting.render.failures import failed_records

from .cdp import Chromium
from .synthetic import World, pairwise_world

PAGE_CALL = re.compile(r'\AjbItemsPage\((?P<page>\d+),"(?P<body>[A-Za-z0-9+/=]*)"\);\n\Z')
DATA_BLOCK = re.compile(
    r'<script type="application/json" id="jb-data" data-encoding="(?P<enc>[^"]+)">'
    r"(?P<text>.*?)</script>",
    re.DOTALL,
)
N_ITEMS = 130
PAGE = 40


@pytest.fixture(scope="module")
def world() -> World:
    """130 items, every 17th record failed (unparsed, its raw text kept)."""
    base = pairwise_world(n_items=N_ITEMS, seed=7)
    records = [
        replace(r, status=Status.UNPARSED, raw_response=f"<no verdict> {i}", error="no JSON")
        if i % 17 == 5
        else r
        for i, r in enumerate(base.records)
    ]
    return World(base.items, records, base.human)


def _write(world: World, out: Path) -> Path:
    report, frame = build_report(
        world.records, human=world.human, items=world.items, options=AnalysisOptions()
    )
    return write_reports(
        report, frame, out, plots=False, records=world.records, items=world.items
    ).html


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paged, "PAGED_OVER", 100)
    monkeypatch.setattr(paged, "PAGE_ITEMS", PAGE)
    monkeypatch.setattr(failures, "MAX_FAILURES", 3)


def _pages(folder: Path) -> list[tuple[int, list[dict[str, Any]]]]:
    """Every side file's page number and rows, parsed as the page's script reads them."""
    found = []
    for path in sorted((folder / paged.PAGES_DIR).iterdir()):
        call = PAGE_CALL.match(path.read_text(encoding="ascii"))
        assert call is not None, path
        rows = json.loads(gzip.decompress(base64.b64decode(call["body"])))
        assert path.name == f"page-{int(call['page']):04d}.js"
        found.append((int(call["page"]), rows))
    return found


def _index(page: str) -> Any:
    block = DATA_BLOCK.search(page)
    assert block is not None
    return decode_payload(Payload(block["text"], block["enc"], 0))


def test_every_item_is_in_exactly_one_page(
    world: World, tmp_path: Path, small_limits: None
) -> None:
    page = _write(world, tmp_path).read_text(encoding="utf-8")
    pages = _pages(tmp_path)
    assert [n for n, _ in pages] == [1, 2, 3, 4]  # 130 items, 40 a page
    rows = [row for _, page_rows in pages for row in page_rows]
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)) == N_ITEMS
    assert set(ids) == {item.id for item in world.items}
    # The rows are exactly those an embedded explorer would hold, in the same order.
    _, frame = build_report(
        world.records, human=world.human, items=world.items, options=AnalysisOptions()
    )
    assert rows == build_explorer(frame, world.records, world.items).to_json()["items"]
    # report.html embeds the index of the same items, in the same order, and names the files.
    index = _index(page)
    assert index["paged"] == {"dir": "report_items", "size": PAGE, "pages": 4}
    assert [row["id"] for row in index["items"]] == ids
    for full, short in zip(rows, index["items"], strict=True):
        assert short["f"] == full["f"] and short["d"] == full["d"] and short["g"] == full["g"]
        assert short["s"] == [" / ".join(v[1] for v in vs) for vs in full["v"]]
        assert short["n"] == sum(v[4] != "ok" for vs in full["v"] for v in vs)
        assert "r" not in short and "v" not in short
    assert "report_items/page-0001.js" in page and "report_items/page-0004.js" in page
    assert f"{N_ITEMS} items: too many to hold in this page" in page
    assert _policy(page).endswith("'strict-dynamic'")
    assert not list(tmp_path.glob(".*"))  # no temporary file or folder left behind


def test_failures_past_the_cap_are_all_in_the_side_file(
    world: World, tmp_path: Path, small_limits: None
) -> None:
    page = _write(world, tmp_path).read_text(encoding="utf-8")
    expected = failed_records(world.records)
    assert len(expected) > 3, "the synthetic world must have failures"
    lines = (tmp_path / "failed_records.jsonl").read_text(encoding="utf-8").splitlines()
    written = [json.loads(line) for line in lines]
    assert [(w["line"], w["key"]) for w in written] == [(f.line, f.key) for f in expected]
    assert [w["status"] for w in written] == [f.status for f in expected]
    assert page.count('class="failure"') == 3
    assert f"lists all {len(expected)}, one JSON object per line" in page
    assert '<a href="failed_records.jsonl">' in page


def test_a_small_report_stays_self_contained_and_clears_old_side_files(
    world: World, tmp_path: Path, small_limits: None
) -> None:
    _write(world, tmp_path)
    assert (tmp_path / "report_items").is_dir() and (tmp_path / "failed_records.jsonl").exists()
    few = World(world.items[:50], [r for r in world.records if r.query_id in _ids(world, 50)], {})
    page = _write(few, tmp_path).read_text(encoding="utf-8")
    assert not (tmp_path / "report_items").exists()  # a page of the old report would mislead
    assert "'strict-dynamic'" not in _policy(page) and "data-paged" not in page
    index = _index(page)
    assert "paged" not in index and len(index["items"]) == 50
    assert all("v" in row and "r" in row for row in index["items"])
    if len(failed_records(few.records)) <= 3:
        assert not (tmp_path / "failed_records.jsonl").exists()


def test_an_error_mid_way_leaves_the_old_report_whole(
    world: World, tmp_path: Path, small_limits: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(world, tmp_path)
    before = {p.name: p.read_bytes() for p in (tmp_path / "report_items").iterdir()}
    html_before = (tmp_path / "report.html").read_bytes()

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr(paged, "_write_page", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        _write(world, tmp_path)
    after = {p.name: p.read_bytes() for p in (tmp_path / "report_items").iterdir()}
    assert after == before and (tmp_path / "report.html").read_bytes() == html_before
    assert not list(tmp_path.glob(".*"))


def _policy(page: str) -> str:
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert found is not None
    return found[1]


def _ids(world: World, n: int) -> set[str]:
    return {item.id for item in world.items[:n]}


@pytest.mark.browser
def test_a_paged_report_opens_any_item_from_its_file(
    browser: Chromium, world: World, tmp_path: Path, small_limits: None
) -> None:
    html_path = _write(world, tmp_path)
    url = html_path.resolve().as_uri()
    session, page = browser.open_page(url, width=1366, height=900)
    assert page.errors() == [], page.errors()
    browser.wait_for(session, "document.getElementById('items').dataset.ready === '1'")
    status = browser.evaluate(session, "document.querySelector('[data-status]').textContent")
    assert f"{N_ITEMS} items in all, their texts in 4 files in report_items" in status
    item = world.items[-1]  # on the last page
    browser.evaluate(session, f"location.hash = '#items?item={item.id}'")
    detail = "document.querySelector('[data-detail]')"
    browser.wait_for(session, f"{detail}.dataset.detailState === 'shown'")
    shown = json.loads(
        browser.evaluate(
            session,
            f"JSON.stringify({{item: {detail}.dataset.detailItem,"
            f" responses: Array.from({detail}.querySelectorAll('[data-response]'))"
            "   .map(d => [d.dataset.response, d.querySelector('pre').textContent]),"
            f" judgments: {detail}.querySelectorAll('tr[data-judgment]').length}})",
        )
    )
    assert shown["item"] == item.id
    assert dict(shown["responses"]) == item.responses
    judged = [r for r in world.records if r.query_id == item.id]
    assert shown["judgments"] == len(judged)
    seen = browser.collect(session)
    assert seen.errors() == [], seen.errors()
    asked = {u.split("#")[0] for u in seen.requests} - {url}
    assert asked == {(tmp_path / "report_items" / "page-0004.js").resolve().as_uri()}


TRICKY = 'Ünïcode "quoted" \\ back\tslash\nnew line \x01 control </script> & ' * 4


def test_the_pages_and_the_index_are_the_bytes_json_dumps_writes(
    world: World, tmp_path: Path, small_limits: None
) -> None:
    """Each page's JSON and the index are the text ``json.dumps`` writes of the embedded
    explorer's rows (the pager writes them as text, part by part): escapes, non-ASCII text,
    questions cut for the index, items only the records name (no text) included."""
    items = [
        replace(item, question=TRICKY * (i % 3), responses={"control": TRICKY, "x\n": "é"})
        if i % 4 == 1
        else item
        for i, item in enumerate(world.items)
        if i % 9 != 4  # items judged but not in the dataset: rows with their ids only
    ]
    tricky = World(items, world.records, world.human)
    page = _write(tricky, tmp_path).read_text(encoding="utf-8")
    _, frame = build_report(
        world.records, human=world.human, items=items, options=AnalysisOptions()
    )
    expected = build_explorer(frame, world.records, items).to_json()
    rows = expected["items"]
    dumps = functools.partial(json.dumps, ensure_ascii=False, separators=(",", ":"))
    for number, path in enumerate(sorted((tmp_path / paged.PAGES_DIR).iterdir()), start=1):
        call = PAGE_CALL.match(path.read_text(encoding="ascii"))
        assert call is not None
        text = gzip.decompress(base64.b64decode(call["body"])).decode("utf-8")
        assert text == dumps(rows[(number - 1) * PAGE : number * PAGE])
    index = _index(page)
    assert len(index["items"]) == len(rows) > len(items)
    block = DATA_BLOCK.search(page)
    assert block is not None
    text = block["text"]
    if block["enc"] != "json":
        text = gzip.decompress(base64.b64decode(text)).decode("utf-8")
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(escape, char)  # no such escape in the data: all from the page's
    assert text == dumps(index)
    long = [row for row in index["items"] if row["q"].endswith("…")]
    assert long and all(len(row["q"]) == paged.QUESTION_CHARS + 1 for row in long)
