from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from jurybox.errors import ConfigError, DatasetError
from jurybox.io import atomic
from jurybox.pipeline.manifest import (
    check_resumable,
    config_snapshot,
    package_versions,
    totals,
    write_manifest,
)
from jurybox.records import Status

from .helpers import fake_judge, make_config, record

DATA, OUT = Path("data.jsonl"), Path("out")


def test_versions_name_python_and_installed_packages() -> None:
    versions = package_versions()
    assert versions["python"].count(".") == 2
    assert "jurybox" in versions and "pydantic" in versions and "openai" in versions


def test_write_is_atomic_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    write_manifest(path, {"run_id": "one"})
    inode = os.stat(path).st_ino
    write_manifest(path, {"run_id": "two"})
    assert json.loads(path.read_text())["run_id"] == "two"
    assert os.stat(path).st_ino != inode  # replaced, not rewritten in place
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_resume_accepts_scheduling_changes_only() -> None:
    config = make_config(DATA, OUT)
    manifest = {"config": config_snapshot(config), "dataset": {"hash": "h", "path": "d"}}
    rescheduled = make_config(
        DATA,
        Path("elsewhere"),
        judges={"j1": {**fake_judge(), "concurrency": 2, "rpm": 5, "timeout_s": 9}},
        pipeline={"concurrency": 3, "max_retries": 1, "cache": False},
    )
    check_resumable(manifest, rescheduled, "h")
    other_seed = make_config(DATA, OUT, pipeline={"random_seed": 1})
    with pytest.raises(ConfigError, match="pipeline"):
        check_resumable(manifest, other_seed, "h")
    other_judge = make_config(DATA, OUT, judges={"j1": {"provider": "fake", "model": "other"}})
    with pytest.raises(ConfigError, match="judges"):
        check_resumable(manifest, other_judge, "h")
    with pytest.raises(DatasetError, match="dataset changed"):
        check_resumable(manifest, config, "other-hash")


def test_totals_count_statuses_tokens_cost_and_cache_share() -> None:
    records = [
        record("a", input_tokens=100, output_tokens=10, cost_usd=0.5),
        record("b", input_tokens=300, output_tokens=10, cost_usd=0.0, cache_hit=True),
        record("c", status=Status.UNPARSED, input_tokens=100, output_tokens=5, cost_usd=0.25),
        record("d", status=Status.PROVIDER_ERROR),
    ]
    result = totals(records)
    assert result["records"] == 4
    assert result["status_counts"]["ok"] == 2 and result["status_counts"]["provider_error"] == 1
    assert result["parse_failures"] == 1
    assert result["input_tokens"] == 500 and result["output_tokens"] == 25
    assert result["cost_usd"] == pytest.approx(0.75)
    assert result["cache_input_share"] == pytest.approx(0.6)
    assert result["local_judge_used"] is False
    assert totals([record("x", local_judge=True)])["local_judge_used"] is True
    assert totals([])["cost_usd"] is None and totals([])["cache_input_share"] is None


def test_failed_write_keeps_the_old_manifest_and_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "manifest.json"
    write_manifest(path, {"run_id": "one"})

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left") as failed:
        write_manifest(path, {"run_id": "two", "big": "x" * 10_000})
    assert failed.value.filename == str(path)
    assert json.loads(path.read_text())["run_id"] == "one"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]  # no manifest.json.tmp


def test_unwritable_directory_names_the_manifest(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OSError) as failed:
        write_manifest(blocker / "manifest.json", {"run_id": "one"})
    assert failed.value.filename == str(blocker / "manifest.json")


def test_a_run_started_before_a_task_setting_existed_resumes_without_it() -> None:
    """A manifest written before ``task.examples`` (issue 37) has no such key: resuming it with
    a config that leaves them out is no change; giving some is."""
    config = make_config(DATA, OUT)
    snapshot = config_snapshot(config)
    del snapshot["task"]["examples"]
    manifest = {"config": snapshot, "dataset": {"hash": "h", "path": "d"}}
    check_resumable(manifest, config, "h")
    example = {"question": "Q?", "response_a": "a", "response_b": "b", "verdict": "A"}
    with_examples = make_config(DATA, OUT, task={"mode": "pairwise", "examples": [example]})
    with pytest.raises(ConfigError, match="task"):
        check_resumable(manifest, with_examples, "h")
