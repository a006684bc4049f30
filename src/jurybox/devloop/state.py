"""The loop's memory in the run folder: an append-only history and each criterion's frozen state.

``history.jsonl`` gets one line per criterion per ``calibrate`` (split, prompt hash, counts,
rates, whether it froze or reused test); lines are only ever appended. ``<criterion>/frozen.json``
holds the frozen judge's test-set labels and verdicts, which ``estimate`` needs for the
correction. Test-set rules read the history: the test set may be measured once per prompt hash.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jurybox.errors import ConfigError, DatasetError
from jurybox.io.atomic import write_text_atomic

HISTORY_FILE = "history.jsonl"
FROZEN_FILE = "frozen.json"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def append_line(path: Path, entry: Mapping[str, Any]) -> None:
    """Append one JSON line and fsync it; the file is opened in append mode, never rewritten."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(dict(entry), ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_lines(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON lines ``append_line`` wrote (a torn last line left out)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith("\n") or not line.strip():
                continue  # a torn last line from a killed process
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(
                    f"not valid JSON ({exc.msg})", path=str(path), line=number
                ) from None


def append_history(run_dir: Path, entry: Mapping[str, Any]) -> None:
    append_line(run_dir / HISTORY_FILE, entry)


def read_history(run_dir: Path) -> Iterator[dict[str, Any]]:
    return read_lines(run_dir / HISTORY_FILE)


@dataclass(frozen=True)
class TestUse:
    """How the test set has been used for one criterion."""

    __test__ = False  # not a pytest class, despite the name

    prompt_hashes: tuple[str, ...]  # distinct prompts measured on test, oldest first
    first_at: str | None

    def reused_by(self, prompt_hash: str) -> bool:
        """Whether measuring ``prompt_hash`` on test would (or did) reuse the test set."""
        return any(known != prompt_hash for known in self.prompt_hashes)


def test_use(run_dir: Path, criterion: str) -> TestUse:
    """From the history, and from frozen.json in case the history was lost."""
    hashes: list[str] = []
    first: str | None = None
    for entry in read_history(run_dir):
        if entry.get("criterion") == criterion and entry.get("split") == "test":
            first = first or entry.get("timestamp")
            if entry["prompt_hash"] not in hashes:
                hashes.append(entry["prompt_hash"])
    frozen = frozen_path(run_dir / criterion)
    if frozen.exists():
        data = json.loads(frozen.read_text(encoding="utf-8"))
        first = first or data.get("frozen_at")
        hashes += [h for h in data.get("test_prompt_hashes", []) if h not in hashes]
    return TestUse(tuple(hashes), first)


def iteration(run_dir: Path, criterion: str, split: str) -> int:
    """1 + how many times this criterion was calibrated on this split before."""
    return 1 + sum(
        1
        for entry in read_history(run_dir)
        if entry.get("criterion") == criterion and entry.get("split") == split
    )


def check_test_allowed(run_dir: Path, criterion: str, prompt_hash: str, *, force: bool) -> TestUse:
    """Refuse measuring test with a new prompt once another prompt was measured there.

    Raises:
        ConfigError: without ``force``, naming the prompt(s) already measured on test.
    """
    used = test_use(run_dir, criterion)
    if used.reused_by(prompt_hash) and not force:
        earlier = ", ".join(h[:12] for h in used.prompt_hashes)
        raise ConfigError(
            f"criterion '{criterion}': the test set was already measured with prompt {earlier} "
            f"(first on {used.first_at}); measuring it again with prompt {prompt_hash[:12]} "
            "turns test into a second dev set and its TPR/TNR become optimistic. Label a fresh "
            "test set, or pass --force (the report will say the test set was reused)",
            path=str(run_dir / HISTORY_FILE),
        )
    return used


def frozen_path(criterion_dir: Path) -> Path:
    return criterion_dir / FROZEN_FILE


def write_frozen(criterion_dir: Path, state: Mapping[str, Any]) -> Path:
    """Write frozen.json atomically (a reader sees the old state or the new one)."""
    text = json.dumps(dict(state), indent=2, ensure_ascii=False) + "\n"
    return write_text_atomic(frozen_path(criterion_dir), text)


@dataclass(frozen=True)
class FrozenJudge:
    """A frozen criterion: its prompt hash and its verdicts on the labelled test set."""

    criterion: str
    prompt_hash: str
    frozen_at: str
    labels: tuple[int, ...]  # 1 = human Pass, test items the judge answered
    verdicts: tuple[int, ...]  # 1 = judge Pass, same items
    test_reused: bool
    test_prompt_hashes: tuple[str, ...]
    path: Path


def read_frozen(criterion_dir: Path, criterion: str) -> FrozenJudge:
    """The frozen state; ConfigError when the criterion was never frozen."""
    path = frozen_path(criterion_dir)
    if not path.exists():
        raise ConfigError(
            f"criterion '{criterion}' is not frozen: run `jurybox calibrate CONFIG --split test "
            "--freeze` first",
            path=str(path),
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    test: Sequence[Mapping[str, Any]] = data["test"]["items"]
    answered = [row for row in test if row["verdict"] in ("Pass", "Fail")]
    return FrozenJudge(
        criterion=data["criterion"],
        prompt_hash=data["prompt_hash"],
        frozen_at=data["frozen_at"],
        labels=tuple(int(row["label"] == "Pass") for row in answered),
        verdicts=tuple(int(row["verdict"] == "Pass") for row in answered),
        test_reused=bool(data.get("test_reused")),
        test_prompt_hashes=tuple(data.get("test_prompt_hashes", ())),
        path=path,
    )
