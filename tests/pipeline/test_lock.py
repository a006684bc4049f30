"""One process per run directory: a second run into a folder in use is refused, and nothing
the first one wrote is touched; the lock goes with the process, however it ends."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jurybox.errors import ConfigError
from jurybox.pipeline import run_async
from jurybox.pipeline.lock import LOCK_FILE, run_directory_lock

from .helpers import make_config, write_config, write_dataset

# Holds the lock of argv[1] until its stdin closes: another process, as in real life.
HOLDER = """
import sys
from pathlib import Path
from jurybox.pipeline.lock import run_directory_lock
with run_directory_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_run_into_a_folder_in_use_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 4)
    out = tmp_path / "out"
    config = make_config(dataset, out)
    asyncio.run(run_async(config, output_dir=out))
    before = {path.name: path.read_bytes() for path in out.iterdir() if path.name != LOCK_FILE}

    with run_directory_lock(out), pytest.raises(ConfigError) as refused:
        asyncio.run(run_async(config, output_dir=out, resume=True))

    assert str(out) in str(refused.value) and f"pid {os.getpid()}" in str(refused.value)
    assert refused.value.field == "paths.output_dir"
    after = {path.name: path.read_bytes() for path in out.iterdir() if path.name != LOCK_FILE}
    assert after == before
    # Released with the `with`: the resume now goes ahead (and has nothing left to do).
    assert asyncio.run(run_async(config, output_dir=out, resume=True)).units_run == 0


@pytest.mark.timeout(60)
def test_the_cli_refuses_while_another_process_holds_the_folder(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 3)
    out = tmp_path / "out"
    config_path = write_config(tmp_path / "run.yaml", dataset, out)
    cli = [sys.executable, "-m", "jurybox", "run", str(config_path)]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        refused = subprocess.run(cli, capture_output=True, text=True, timeout=50, check=False)
    finally:
        holder.communicate(timeout=10)  # closes its stdin: it lets go and exits

    assert refused.returncode == 2, refused.stderr
    assert f"in use by another jurybox process (pid {holder.pid})" in refused.stderr
    assert not (out / "judgments.jsonl").exists()
    done = subprocess.run(cli, capture_output=True, text=True, timeout=50, check=False)
    assert done.returncode == 0, done.stderr
    assert (out / "judgments.jsonl").stat().st_size > 0


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    holder.kill()
    holder.wait(10)
    if holder.stdin is not None:
        holder.stdin.close()
    holder.stdout.close()

    with run_directory_lock(out):  # free at once, although the pid file is still there
        assert (out / LOCK_FILE).read_text().strip() == str(os.getpid())


# Takes the flock of argv[1]'s lock file without writing its pid: the moment between a new
# holder's flock and its pid write, frozen.
BARE_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="the kernel's lock table is Linux's")
@pytest.mark.timeout(60)
def test_the_refusal_names_the_kernels_holder_not_a_stale_live_pid(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # An earlier holder's pid left in the file, reused by a live process (this one).
    (out / LOCK_FILE).write_text(f"{os.getpid():<20}\n", encoding="ascii")
    holder = subprocess.Popen(
        [sys.executable, "-c", BARE_HOLDER, str(out / LOCK_FILE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(ConfigError) as refused, run_directory_lock(out):
            pass
    finally:
        holder.communicate(timeout=10)
    assert f"(pid {holder.pid})" in str(refused.value)
