"""Two resumes of one run folder at once: one is refused, naming the holder, and the file ends
exact (one line per unit, every unit done once). Imports are all or nothing."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from jurybox.io.judgments import JUDGMENTS_FILE
from jurybox.io.verdicts import companion_items_path, import_verdicts

from .helpers import copy_run, lines, partial_run, start_cli

TRIALS = 10


@pytest.mark.slow
@pytest.mark.timeout(280)
def test_two_resumes_at_once_one_is_refused_and_the_file_ends_exact(tmp_path: Path) -> None:
    # 10 units left at 300 ms each, one at a time: the winner holds the folder for ~3 s, far
    # longer than the gap between two processes started together.
    config_path, seed, planned = partial_run(tmp_path, items=8, keep=6, latency_ms=300)
    assert planned - 6 >= 10
    for trial in range(TRIALS):
        folder = copy_run(seed, tmp_path / f"trial{trial}")
        both = [start_cli("run", config_path, "--resume", folder) for _ in range(2)]
        results = [(p.wait(timeout=120), *p.communicate()) for p in both]

        codes = sorted(code for code, _, _ in results)
        assert codes == [0, 2], results
        refused = next(err for code, _, err in results if code == 2)
        holder = re.search(r"in use by another jurybox process \(pid (\d+)\)", refused)
        assert holder is not None, refused
        winner = next(p for p, (code, _, _) in zip(both, results, strict=True) if code == 0)
        assert int(holder.group(1)) == winner.pid
        records = lines(folder / JUDGMENTS_FILE)
        keys = Counter(record["key"] for record in records)
        assert len(records) == planned and set(keys.values()) == {1}
        assert {record["status"] for record in records} == {"ok"}
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == "complete" and manifest["records"] == planned


def llmbar_folder(folder: Path, outputs: list[str]) -> Path:
    """A minimal LLMBar folder: one item per output (output_1 is gold), one judge, two orders."""
    folder.mkdir(parents=True)
    rows = [
        {"input": f"q{i}", "output_1": text, "output_2": "other", "label": 1}
        for i, text in enumerate(outputs)
    ]
    (folder / "dataset.json").write_text(json.dumps(rows), encoding="utf-8")
    verdicts = folder / "verdicts" / "gpt-4"
    verdicts.mkdir(parents=True)
    swaps = {"swap = False": {"winner": 1}, "swap = True": {"winner": 2}}
    results = [{**row, "results": [swaps]} for row in rows]
    (verdicts / "result.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def test_a_failed_import_leaves_the_previous_output_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "imported.jsonl"
    assert import_verdicts("llmbar", llmbar_folder(tmp_path / "good", ["a", "b", "c"]), out) > 0
    before = out.read_bytes(), companion_items_path(out).read_bytes()

    from jurybox.io import verdicts

    real = verdicts._item_json
    calls = {"n": 0}

    def failing(item: object) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real(item)  # type: ignore[arg-type]

    monkeypatch.setattr(verdicts, "_item_json", failing)
    with pytest.raises(OSError):
        import_verdicts("llmbar", tmp_path / "good", out)

    assert (out.read_bytes(), companion_items_path(out).read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".tmp") == []
