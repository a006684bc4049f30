"""Disk full and unwritable output: a clear one-line error and no corrupted file.

Disk full is simulated without privileges by ``RLIMIT_FSIZE`` in the CLI subprocess (Python
ignores SIGXFSZ, so a write past the limit writes what fits and then fails with EFBIG, exactly
like a disk that fills up mid-record), and, where the test may mount (root with CAP_SYS_ADMIN),
by a 32 KiB tmpfs (real ENOSPC for every file of the run). An unwritable output directory is a
path under a regular file (root ignores permission bits, so ``chmod 0o500`` proves nothing).

What must hold: a non-zero exit; stderr is one line (no traceback); judgments.jsonl stays
readable (every complete line valid JSON) and a later ``--resume`` completes it with one record
per unit; manifest.json is the previous valid one or absent. Stricter still: the error names the
judgments file, and the writer truncates a short write back to the last complete record, so the
file ends with a newline (strictly valid JSON Lines).
"""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from wire_server import ThreadedWireServer, WireConfig

from jurybox.io.judgments import read_records

from .conftest import BENCH_DIR  # noqa: F401 - puts bench/ on sys.path
from .helpers import (
    CLI,
    check_manifest,
    count_lines,
    error_lines,
    planned_keys,
    run_cli,
    run_config,
    split_jsonl,
    write_config,
    write_items,
)


@dataclass
class DiskFull:
    """What a run that hit a full disk left behind."""

    config: Path
    dataset: Path
    run_dir: Path
    returncode: int
    stderr: str
    manifest_before: dict[str, Any] | None
    judgments_bytes: bytes


def _start_then_kill(config: Path, judgments: Path, records: int) -> None:
    """Start a run and SIGKILL it once ``records`` records are written (a run to resume)."""
    process = subprocess.Popen([*CLI, "run", str(config)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60.0
    while count_lines(judgments) < records:
        assert process.poll() is None, "the run ended before it was killed"
        assert time.monotonic() < deadline, "no progress in 60 s"
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(30)


@pytest.fixture(scope="module")
def disk_full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DiskFull]:
    """A killed run, resumed with room for ~3 more records: the resume hits EFBIG mid-write."""
    tmp = tmp_path_factory.mktemp("disk_full")
    with ThreadedWireServer(WireConfig(latency_s=0.05, seed=2)) as server:
        dataset = write_items(tmp / "items.jsonl", 60)
        run_dir = tmp / "run"
        judgments = run_dir / "judgments.jsonl"
        config = write_config(
            tmp / "run.yaml",
            run_config(
                dataset, run_dir, server.url, judge={"concurrency": 2}, pipeline={"cache": False}
            ),
        )
        _start_then_kill(config, judgments, records=10)
        manifest_before = check_manifest(run_dir / "manifest.json")
        limit = judgments.stat().st_size + 3000  # > manifest.json, < the rest of the run

        def file_size_limit() -> None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        full = run_cli(["run", str(config), "--resume", str(run_dir)], preexec_fn=file_size_limit)
        yield DiskFull(
            config,
            dataset,
            run_dir,
            full.returncode,
            full.stderr,
            manifest_before,
            judgments.read_bytes(),
        )


@pytest.mark.timeout(180)
def test_disk_full_exits_non_zero_with_one_line(disk_full: DiskFull) -> None:
    assert disk_full.returncode != 0
    lines = error_lines(disk_full.stderr)
    assert len(lines) == 1, disk_full.stderr[-2000:]
    assert lines[0].startswith("error:")


def test_disk_full_error_names_the_judgments_file(disk_full: DiskFull) -> None:
    assert str(disk_full.run_dir / "judgments.jsonl") in disk_full.stderr


def test_disk_full_leaves_readable_files_and_resume_completes(disk_full: DiskFull) -> None:
    run_dir = disk_full.run_dir
    rows, torn = split_jsonl(run_dir / "judgments.jsonl")  # every complete line is JSON
    assert b"\n" not in torn
    assert len(list(read_records(run_dir))) == len(rows)
    manifest = check_manifest(run_dir / "manifest.json")
    assert manifest is not None and disk_full.manifest_before is not None
    assert manifest["run_id"] == disk_full.manifest_before["run_id"]
    # The module fixture's server is still up: resume with the very same config.
    done = run_cli(["run", str(disk_full.config), "--resume", str(run_dir)])
    assert done.returncode == 0, done.stderr[-2000:]
    rows, torn = split_jsonl(run_dir / "judgments.jsonl")
    keys = [row["key"] for row in rows]
    assert torn == b"" and len(keys) == len(set(keys))
    assert set(keys) == set(planned_keys(disk_full.config))


def test_disk_full_leaves_strictly_valid_jsonl(disk_full: DiskFull) -> None:
    assert disk_full.judgments_bytes.endswith(b"\n")


@pytest.mark.timeout(120)
def test_output_dir_under_a_regular_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a regular file\n")
    out = blocker / "run"
    dataset = write_items(tmp_path / "items.jsonl", 3)
    config = write_config(tmp_path / "run.yaml", run_config(dataset, out, "http://127.0.0.1:9/v1"))
    result = run_cli(["run", str(config)])
    assert result.returncode != 0
    lines = error_lines(result.stderr)
    assert len(lines) == 1 and str(out) in lines[0], result.stderr[-2000:]
    assert blocker.read_text() == "a regular file\n"


def _mount_tmpfs(target: Path, size: str) -> bool:
    if shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


@pytest.mark.timeout(120)
def test_real_enospc_on_a_tiny_tmpfs(tmp_path: Path, wire_server: Any) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if not _mount_tmpfs(mount, "32k"):
        pytest.skip("cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
    try:
        server = wire_server(latency_s=0.01, seed=4)
        dataset = write_items(tmp_path / "items.jsonl", 60)
        run_dir = mount / "run"
        config = write_config(
            tmp_path / "run.yaml",
            run_config(
                dataset, run_dir, server.url, judge={"concurrency": 4}, pipeline={"cache": False}
            ),
        )
        result = run_cli(["run", str(config)])
        assert result.returncode != 0
        assert len(error_lines(result.stderr)) == 1, result.stderr[-2000:]
        rows, torn = split_jsonl(run_dir / "judgments.jsonl")
        assert rows and b"\n" not in torn
        check_manifest(run_dir / "manifest.json")
    finally:
        subprocess.run(["umount", str(mount)], check=False)
