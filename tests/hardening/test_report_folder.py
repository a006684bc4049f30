"""A report folder is written whole or not at all (issue 31 item 12).

``analyze`` writes into a new folder beside ``--out`` and swaps it in when complete: killed at
any moment (SIGKILL, no chance to clean up), ``--out`` holds the old report or the new one, each
byte for byte, never the new JSON beside the old ``report.html``. A folder that is not a report
folder (a run folder, a folder with anything else in it) is refused and left as it was.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jurybox.reporting import is_report_folder

from .helpers import fake_run, invoke, snapshot

EXIT_BAD_INPUT = 2
KILL_POINTS = 8  # kills spread over one analysis' duration
ANALYZE_TIMEOUT_S = 300


# The old report: no plots, a stricter accuracy threshold (so its JSON and pages differ too).
OLD = ("--no-plots", "--min-accuracy", "0.95")


def test_a_report_replaces_an_earlier_one_whole(tmp_path: Path) -> None:
    run = fake_run(tmp_path)
    out = tmp_path / "report"
    assert invoke("analyze", run, "--out", out).exit_code == 0
    assert (out / "plots").is_dir() and is_report_folder(out)
    assert invoke("analyze", run, "--out", out, *OLD).exit_code == 0
    assert not (out / "plots").exists()  # nothing of the earlier report is left behind
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".")) == []
    # Through a symlink the folder it names is replaced, and the link stays a link.
    link = tmp_path / "latest"
    link.symlink_to(out)
    assert invoke("analyze", run, "--out", link).exit_code == 0
    assert link.is_symlink() and (out / "plots").is_dir()


@pytest.mark.parametrize("foreign", ["notes.txt", "plots/mine.png", "report_items/x.js"])
def test_a_folder_with_anything_else_is_refused_and_untouched(tmp_path: Path, foreign: str) -> None:
    run = fake_run(tmp_path)
    out = tmp_path / "report"
    assert invoke("analyze", run, "--out", out).exit_code == 0
    (out / foreign).parent.mkdir(exist_ok=True)
    (out / foreign).write_text("mine", encoding="utf-8")
    for target in (out, run):  # an earlier report with a file added; the run folder itself
        before = snapshot(tmp_path)
        result = invoke("analyze", run, "--out", target)
        assert result.exit_code == EXIT_BAD_INPUT, result.output
        assert "not part of a jurybox report" in result.output
        assert snapshot(tmp_path) == before


def _start(run: Path, out: Path, *flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "jurybox", "analyze", str(run), "--out", str(out), *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _analyze(run: Path, out: Path, *flags: str) -> float:
    """Seconds one whole ``analyze`` takes, as a subprocess."""
    started = time.monotonic()
    assert _start(run, out, *flags).wait(ANALYZE_TIMEOUT_S) == 0
    return time.monotonic() - started


def _staged(out: Path) -> list[str]:
    return [p.name for p in out.parent.iterdir() if p.name.startswith(".report.")]


def _kill_while_staged(run: Path, out: Path, delay_s: float) -> bool:
    """Start ``analyze`` and kill it ``delay_s`` after its staging folder appears (True), or
    let it finish when none appeared (False). Polling, not a guessed time: on a busy machine
    an analysis' duration varies too much for a fraction of it to land inside the staging."""
    process = _start(run, out)
    while process.poll() is None and not _staged(out):
        time.sleep(0.002)
    seen = process.poll() is None
    time.sleep(delay_s)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(ANALYZE_TIMEOUT_S)
    return seen


@pytest.mark.slow
def test_a_killed_analyze_leaves_the_old_report_or_the_new_one(tmp_path: Path) -> None:
    run = fake_run(tmp_path, items=40)
    old, new = tmp_path / "old", tmp_path / "new"
    _analyze(run, old, *OLD)
    took = _analyze(run, new)
    old_files, new_files = snapshot(old), snapshot(new)
    assert set(old_files) < set(new_files)  # the new report has its plots too
    out = tmp_path / "work" / "report"
    out.parent.mkdir()
    (out.parent / "keep.txt").write_text("not jurybox's", encoding="utf-8")

    def fresh() -> None:
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(old, out)

    def check(label: object) -> str:
        found = snapshot(out)
        assert found in (old_files, new_files), (label, sorted(found))
        assert (out.parent / "keep.txt").read_text(encoding="utf-8") == "not jurybox's"
        return "new" if found == new_files else "old"

    for point in range(1, KILL_POINTS + 1):  # kills spread over the whole command
        fresh()
        process = _start(run, out)
        time.sleep(took * point / (KILL_POINTS + 1))
        os.kill(process.pid, signal.SIGKILL)
        process.wait(ANALYZE_TIMEOUT_S)
        check(point)
    staged_kills = 0
    for delay_s in (0.0, 0.01, 0.05, 0.2):  # kills while the new report is being written
        fresh()
        staged_kills += _kill_while_staged(run, out, delay_s)
        check(f"{delay_s} s after staging began")
    # Not vacuous: some kills came while the new report was being written beside the old one.
    assert staged_kills >= 2
    # What a killed analyze left beside the folder goes with the next one; foreign files stay.
    assert _start(run, out).wait(ANALYZE_TIMEOUT_S) == 0
    assert snapshot(out) == new_files
    assert sorted(p.name for p in out.parent.iterdir()) == ["keep.txt", "report"]
