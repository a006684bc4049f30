"""The notebook API: jurybox.run / analyze / load, loaded lazily (#15)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import jurybox
from jurybox.errors import InputError
from shared_paths import PROJECT_ROOT

HEAVY = ("pandas", "scipy", "statsmodels", "matplotlib")


def test_import_jurybox_stays_light_until_the_api_is_used() -> None:
    probe = (
        "import sys, jurybox\n"
        "heavy = {m.split('.')[0] for m in sys.modules} & set(sys.argv[1:])\n"
        "print(sorted(heavy)); jurybox.load; print(callable(jurybox.run))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", probe, *HEAVY],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines() == ["[]", "True"], done.stderr


def test_run_analyze_load_in_a_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    summary = jurybox.run("examples/pairwise.yaml", limit=5, quiet=True)
    assert summary.output_dir == Path("examples/results/pairwise")
    assert summary.units_run == summary.units_total > 0

    report = jurybox.analyze(summary.output_dir, plots=False, quiet=True)
    assert set(report.verdict.judges) == {"first_pick", "long_pick", "coin"}
    assert (summary.output_dir / "report" / "report.html").is_file()  # the default --out
    assert report.summary.human_labels.preferences > 0  # the manifest's labels were used

    frame = jurybox.load(summary.output_dir)
    assert isinstance(frame, pd.DataFrame)
    assert len(frame) == summary.units_total
    first = frame.iloc[0]
    assert first["question"] and first["response.control"] and first["response.treatment"]
    resumed = jurybox.run("examples/pairwise.yaml", limit=5, resume=summary.output_dir, quiet=True)
    assert resumed.provider_calls == 0


def test_unknown_attributes_still_fail() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = jurybox.nothing  # type: ignore[attr-defined]
    assert {"run", "analyze", "load"} <= set(dir(jurybox))


def test_api_errors_name_the_api_arguments_not_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as missing:
        jurybox.run("examples/pairwise.yaml", resume="nowhere", quiet=True)
    assert "resume='nowhere': no such run folder" in str(missing.value)
    assert missing.value.field == "resume" and "--" not in str(missing.value)
    summary = jurybox.run("examples/pairwise.yaml", limit=3, quiet=True)
    with pytest.raises(InputError) as again:  # a second fresh run into the same folder
        jurybox.run("examples/pairwise.yaml", limit=3, quiet=True)
    said = str(again.value)
    assert f"jurybox.run('examples/pairwise.yaml', resume='{summary.output_dir}')" in said
    assert "output_dir" in said and "--" not in said
    with pytest.raises(InputError) as shrink:
        jurybox.run("examples/pairwise.yaml", limit=2, resume=summary.output_dir, quiet=True)
    assert "limit=2 contradicts the run's recorded limit 3" in str(shrink.value)
    assert shrink.value.field == "limit"
    (summary.output_dir / "manifest.json").unlink()
    with pytest.raises(InputError, match=r"pass force=True to resume anyway"):
        jurybox.run("examples/pairwise.yaml", resume=summary.output_dir, quiet=True)
    resumed = jurybox.run(
        "examples/pairwise.yaml", limit=3, resume=summary.output_dir, force=True, quiet=True
    )
    assert resumed.provider_calls == 0


def test_what_the_api_returns_shows_itself_in_a_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    summary = jurybox.run("examples/pairwise.yaml", limit=4, quiet=True)
    html = summary._repr_html_()  # type: ignore[attr-defined]
    assert "examples/results/pairwise" in html and "provider calls" in html
    assert summary.cost in html and "unpriced" in summary.cost  # the one cost wording
    assert "<script" not in html
    dry = jurybox.run("examples/pairwise.yaml", limit=4, dry_run=True, quiet=True)
    assert "estimated cost" in dry._repr_html_()  # type: ignore[attr-defined]
    report = jurybox.analyze(summary.output_dir, plots=False, quiet=True)
    shown = report._repr_html_()  # type: ignore[attr-defined]
    assert report.verdict.line in shown and shown.count("<tr>") == 1 + len(report.verdict.judges)
    for name, verdict in report.verdict.judges.items():
        assert name in shown and verdict.reason.split(" (")[0] in shown
    assert "<script" not in shown


def test_until_errors_and_resume_commands_in_api_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(PROJECT_ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    summary = jurybox.run("examples/pairwise.yaml", limit=6, until="decided", quiet=True)
    assert summary.schedule is not None and summary.schedule["until"] == "decided"
    with pytest.raises(InputError) as again:  # the resume command carries --until: one call
        jurybox.run("examples/pairwise.yaml", limit=6, until="decided", quiet=True)
    said = str(again.value)
    assert f"jurybox.run('examples/pairwise.yaml', resume='{summary.output_dir}')" in said
    assert "--" not in said
    with pytest.raises(InputError) as other:
        jurybox.run("examples/pairwise.yaml", resume=summary.output_dir, until="win_rate±0.1")
    assert other.value.field == "until"
    assert "until='win_rate±0.1' contradicts the run's recorded until decided" in str(other.value)
