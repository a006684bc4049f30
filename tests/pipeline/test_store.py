from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path

import pytest

from jurybox.errors import DatasetError
from jurybox.io import judgments as store
from jurybox.io.judgments import JsonlWriter, prepare_resume, read_records, repair_tail
from jurybox.records import Status

from .helpers import lines, record


def test_writer_appends_one_line_per_record_and_reader_streams_them(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(record("a"))
        writer.write(record("b", status=Status.UNPARSED, error="bad json"))
    with JsonlWriter(path) as writer:  # a second session appends
        writer.write(record("c"))
    assert [r.key for r in read_records(path)] == ["a", "b", "c"]
    assert [r.key for r in read_records(tmp_path)] == ["a", "b", "c"]  # a run folder works too
    assert next(iter(read_records(path))).status is Status.OK
    assert [row["status"] for row in lines(path)] == ["ok", "unparsed", "ok"]


def test_torn_last_line_is_skipped_by_readers_and_truncated_on_repair(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(record("a"))
        writer.write(record("b"))
    whole = path.read_bytes()
    torn = record("c").to_json().encode()[:37]
    path.write_bytes(whole + torn)
    assert [r.key for r in read_records(path)] == ["a", "b"]
    assert repair_tail(path) == len(torn)
    assert path.read_bytes() == whole
    assert repair_tail(path) == 0


def test_repair_of_a_file_with_only_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_bytes(b'{"key": "a", "sta')
    assert prepare_resume(path) == set()
    assert path.read_bytes() == b""


def test_prepare_resume_redoes_provider_errors_and_keeps_one_line_per_key(
    tmp_path: Path,
) -> None:
    path = tmp_path / "judgments.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(record("a"))
        writer.write(record("b", status=Status.PROVIDER_ERROR, error="429"))
        writer.write(record("c", status=Status.UNPARSED))
        writer.write(record("d", status=Status.PROVIDER_ERROR))
        writer.write(record("d"))  # redone by an earlier resume: the last line wins
    path.write_bytes(path.read_bytes() + b'{"key": "e"')
    done = prepare_resume(path)
    assert done == {"a", "c", "d"}
    rows = lines(path)
    assert [row["key"] for row in rows] == ["a", "c", "d"]
    assert [row["status"] for row in rows] == ["ok", "unparsed", "ok"]
    assert not (tmp_path / "judgments.jsonl.tmp").exists()


def test_prepare_resume_leaves_a_clean_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(record("a"))
    before = path.stat().st_mtime_ns, path.read_bytes()
    assert prepare_resume(path) == {"a"}
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
    assert prepare_resume(tmp_path / "missing.jsonl") == set()


def test_corrupt_middle_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    path.write_text(record("a").to_json() + "\n{oops\n" + record("b").to_json() + "\n")
    with pytest.raises(DatasetError, match=r"judgments\.jsonl:2"):
        list(read_records(path))
    path.write_text(json.dumps({"no": "key"}) + "\n")
    with pytest.raises(DatasetError, match="not a judgment record"):
        list(read_records(path))


def test_periodic_sync_runs_off_the_calling_thread_and_close_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "judgments.jsonl"
    started, release = threading.Event(), threading.Event()
    synced: list[tuple[int, int]] = []
    real_fstat = os.fstat

    def slow_sync(fd: int) -> None:
        started.set()
        assert release.wait(10)
        real_fstat(fd)  # the descriptor is still open: close has not run under the sync
        synced.append((threading.get_ident(), fd))

    monkeypatch.setattr(store.os, "fdatasync", slow_sync, raising=False)
    writer = JsonlWriter(path, fsync_interval_s=0.0)
    writer.write(record("a"))  # starts a sync that blocks until released...
    assert started.wait(10)
    writer.write(record("b"))  # ... yet writing goes on, and no second sync piles up
    assert [r.key for r in read_records(path)] == ["a", "b"]
    closer = threading.Thread(target=writer.close)
    closer.start()
    time.sleep(0.05)
    assert closer.is_alive()  # close waits for the sync before closing the descriptor
    release.set()
    closer.join(10)
    assert len(synced) == 1 and synced[0][0] != threading.get_ident()


def test_failed_write_truncates_to_the_last_record_and_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "judgments.jsonl"
    with JsonlWriter(path) as writer:
        writer.write(record("a"))
    whole = path.read_bytes()
    real_write = os.write

    def write_then_fill_up(fd: int, data: bytes | memoryview) -> int:
        if len(data) > 20:  # a short write, like a disk filling up mid-record ...
            return real_write(fd, bytes(data[:20]))
        raise OSError(errno.EFBIG, "File too large")  # ... then the error

    with JsonlWriter(path) as writer:
        writer.write(record("b"))
        monkeypatch.setattr(store.os, "write", write_then_fill_up)
        with pytest.raises(OSError, match="File too large") as failed:
            writer.write(record("c"))
        assert failed.value.filename == str(path) and failed.value.errno == errno.EFBIG
        with pytest.raises(OSError):  # a broken writer stays broken, it never appends again
            writer.write(record("d"))
        monkeypatch.undo()
    assert path.read_bytes() == whole + (record("b").to_json() + "\n").encode()
    assert [r.key for r in read_records(path)] == ["a", "b"]
