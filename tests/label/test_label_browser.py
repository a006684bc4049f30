"""``jurybox label`` in real headless Chromium, driven by the keyboard alone (issue 38).

60 items are labelled by pressing keys; the server (a ``jurybox label`` subprocess) is killed
with SIGKILL after 30 and started again: no label is lost and the page resumes at item 31. The
browser resolves no host but 127.0.0.1 (``--host-resolver-rules``), every request the page made
is checked to have gone there, and the page (its DOM and every answer of its API) never names
an arm, a judge or a model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurybox.io.datasets import load_human_labels
from reporting.cdp import Chromium, start_chromium

from .server import LabelServer
from .world import SECRET_NAMES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
Run = tuple[Path, dict[str, str]]
# Every host but 127.0.0.1 fails to resolve: a request anywhere else cannot leave the machine.
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",)
# The open item's position ('' while the page loads: the element may not exist yet).
POSITION = "((document.getElementById('item') || {dataset: {}}).dataset.position || '')"
LONGER = (
    "(() => { const t = [...document.querySelectorAll('#responses .text')]"
    ".map((e) => e.textContent.length); return t[0] > t[1] ? '1' : '2'; })()"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    chromium = start_chromium(extra_args=OFFLINE, timeout_s=30)
    try:
        yield chromium
    finally:
        chromium.close()


def _key(browser: Chromium, session: str, key: str) -> None:
    code = f"Digit{key}" if key.isdigit() else f"Key{key.upper()}"
    event = {"key": key, "text": key, "code": code, "windowsVirtualKeyCode": ord(key.upper())}
    for kind in ("keyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", {"type": kind, **event}, session=session)


def _label_until(browser: Chromium, session: str, last: int) -> None:
    """Press the key of the longer (better) response on each item up to position ``last``."""
    while True:
        position = int(browser.evaluate(session, POSITION))
        page = browser.evaluate(session, "document.documentElement.outerHTML")
        assert not [name for name in SECRET_NAMES if name in page], position
        assert browser.evaluate(session, "typeof window.pwned") == "undefined"  # text stays text
        question = browser.evaluate(session, "document.getElementById('question-text').textContent")
        assert "<script>window.pwned=1</script>" in question
        _key(browser, session, browser.evaluate(session, LONGER))
        if position == last:
            return
        browser.wait_for(session, f"{POSITION} === '{position + 1}'")


def _assert_blind_data(server: LabelServer) -> None:
    """The API answers the page reads name no arm, judge or model."""
    state = server.get("/api/state")
    answers = [json.dumps(state)] + [
        json.dumps(server.get(f"/api/item/{p}")) for p in range(1, state["total"] + 1)
    ]
    for name in SECRET_NAMES:
        assert not any(name in text for text in answers), name


def _only_loopback(browser: Chromium, session: str, *servers: LabelServer) -> None:
    """Every request the page made since it opened went to one of ``servers`` (127.0.0.1)."""
    report = browser.collect(session)
    assert report.requests, "the page made no request"
    origins = tuple(server.origin + "/" for server in servers)
    assert all(url.startswith(origins) for url in report.requests), report.requests
    assert not report.errors(), report.errors()  # no CSP violation, no script error


def test_sixty_items_by_keyboard_survive_a_kill(
    browser: Chromium, run60: Run, tmp_path: Path
) -> None:
    run_dir, truth = run60
    labels = run_dir / "labels.jsonl"
    with (tmp_path / "server.log").open("wb") as log:
        first = LabelServer(run_dir, log)
        try:
            session, _ = browser.open_page(first.url, width=1280, height=900)
            browser.send("Page.bringToFront", session=session)  # key events need the focus
            browser.wait_for(session, f"{POSITION} === '1'")
            _label_until(browser, session, 30)
            browser.wait_for(session, f"{POSITION} === '31'")  # idle: no request in flight
            _only_loopback(browser, session, first)
        finally:
            first.kill()
        assert len(labels.read_bytes().splitlines()) == 30  # each label on disk when given

        second = LabelServer(run_dir, log)
        try:
            browser.send("Page.navigate", {"url": second.url}, session=session)
            browser.wait_for(session, f"{POSITION} === '31'")
            done = browser.evaluate(session, "document.getElementById('progress').dataset.done")
            assert done == "30"
            _label_until(browser, session, 60)
            browser.wait_for(session, "document.body.dataset.state === 'done'")
            _assert_blind_data(second)
            _only_loopback(browser, session, first, second)
            # Only now, on request, the summary names the judges with their verdicts.
            browser.evaluate(session, "document.getElementById('summary-button').click()")
            browser.wait_for(session, "document.getElementById('summary').dataset.ready === '1'")
            shown = browser.evaluate(session, "document.getElementById('summary').innerText")
            assert "long_pick" in shown and "trusted" in shown, shown
            assert not browser.collect(session).errors()
        finally:
            second.kill()
    lines = [json.loads(line) for line in labels.read_bytes().splitlines()]
    assert len(lines) == 60 and len({line["query_id"] for line in lines}) == 60
    found = load_human_labels(labels)
    assert {q: label["preferred_arm"] for q, label in found.items()} == truth
    assert {line["annotator"] for line in lines} == {"ann"}
