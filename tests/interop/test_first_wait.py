"""Until the first answer, the progress line says what it waits for (#15: the local model loads
for ~40 s while the bar sat at 0/N with no message)."""

from __future__ import annotations

import io

from rich.console import Console

from jurybox.pipeline.progress import RunProgress
from jurybox.records import JudgeRecord, Status


def _record() -> JudgeRecord:
    return JudgeRecord(
        key="i|j|single|r0",
        run_id="r",
        query_id="i",
        judge_name="j",
        judge_model="m",
        judge_vendor="fake",
        mode="rubric",
        presentation_order="single",
        positions={"A": "x"},
        status=Status.OK,
        parse_success=True,
        raw_response="{}",
        timestamp="2026-01-01T00:00:00Z",
    )


def test_the_wait_is_said_then_replaced_by_the_counts() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=160)
    wait = "loading the local model smollm2.gguf (first call)"
    with RunProgress(console, 3, first_wait=wait) as progress:
        progress._progress.refresh()
        assert wait in screen.getvalue()
        progress.advance(_record())
        progress._progress.refresh()
        last = screen.getvalue().rsplit("\r", 1)[-1]
    assert wait not in last
    assert "parse failures 0" in last
    assert "1/3" in last


def test_nothing_is_drawn_off_a_terminal() -> None:
    screen = io.StringIO()
    with RunProgress(Console(file=screen), 2, first_wait="loading") as progress:
        progress.advance(_record())
    assert screen.getvalue() == ""
