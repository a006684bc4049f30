"""No writer replaces a file it did not make, or writes onto its own input (issue 31 item 4).

``export`` and ``import`` onto what they read (directly, through a symlink, through a hard link),
``export-pairs`` onto its dataset, ``run`` into a folder holding a foreign ``manifest.json``:
each is refused with exit status 2, and every file under the test folder is byte-for-byte what
it was. Replacing a writer's own earlier output still works.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.helpers import write_config, write_dataset

from .helpers import fake_run, invoke, snapshot

EXIT_BAD_INPUT = 2


def _refused(root: Path, *args: str | Path, says: str) -> None:
    before = snapshot(root)
    result = invoke(*args)
    assert result.exit_code == EXIT_BAD_INPUT, result.output
    assert says in result.output, result.output
    assert "Traceback" not in result.output
    assert snapshot(root) == before  # nothing written, replaced or removed


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """A finished run of the fake judge: judgments.jsonl and manifest.json."""
    return fake_run(tmp_path)


def test_export_refuses_its_own_inputs(run_dir: Path) -> None:
    root = run_dir.parent
    judgments = run_dir / "judgments.jsonl"
    link = root / "link.jsonl"
    link.symlink_to(judgments)
    hard = root / "hard.jsonl"
    os.link(judgments, hard)
    for target in (
        judgments,
        link,
        hard,
        run_dir / ".." / "run" / "judgments.jsonl",
        run_dir / "manifest.json",
        root / "items.jsonl",  # the dataset the manifest names
    ):
        _refused(root, "export", run_dir, "--out", target, "--format", "jsonl", says="reads")


def test_export_refuses_a_file_it_did_not_write_and_replaces_its_own(run_dir: Path) -> None:
    root = run_dir.parent
    notes = root / "notes.csv"
    notes.write_text("my,own\nnotes,here\n", encoding="utf-8")
    _refused(root, "export", run_dir, "--out", notes, says="not a jurybox export")
    for suffix in ("csv", "jsonl", "parquet"):
        out = root / f"table.{suffix}"
        for _ in range(2):  # the second export replaces the first: it is one
            result = invoke("export", run_dir, "--out", out)
            assert result.exit_code == 0, result.output
        if suffix != "parquet":  # a parquet export is not a csv one, and the reverse
            other = "parquet" if suffix == "csv" else "csv"
            assert invoke("export", run_dir, "--out", out, "--format", other).exit_code == 0
    # Another run's judgments file is not an export: never replaced by one.
    other_run = root / "other.jsonl"
    other_run.write_bytes((run_dir / "judgments.jsonl").read_bytes())
    _refused(root, "export", run_dir, "--out", other_run, "--format", "jsonl", says="not a")


def _verdicts(path: Path) -> Path:
    rows = [
        {"id": f"q{i}", "judge": "j", "question": f"q {i}?", "a": "yes", "b": "no", "winner": "A"}
        for i in range(4)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


_MAP = ("--map", "query_id=id", "--map", "judge=judge", "--map", "question=question")
_MAP += ("--map", "response_a=a", "--map", "response_b=b", "--map", "preferred=winner")


def test_import_refuses_its_input_its_dataset_and_a_run(run_dir: Path) -> None:
    root = run_dir.parent
    source = _verdicts(root / "verdicts.jsonl")
    # Onto the source; with the items beside --out landing on the source; onto a run's records.
    for out in (source, root / "x" / ".." / "verdicts.jsonl"):
        _refused(root, "import", "generic", source, "--out", out, *_MAP, says="reads")
    named = _verdicts(root / "pairs.items.jsonl")
    _refused(root, "import", "generic", named, "--out", root / "pairs.jsonl", *_MAP, says="reads")
    judgments = run_dir / "judgments.jsonl"
    _refused(root, "import", "generic", source, "--out", judgments, *_MAP, says="not a jurybox")
    # A dataset that happens to sit where the items would go is not replaced either.
    (root / "fresh.items.jsonl").write_bytes((root / "items.jsonl").read_bytes())
    _refused(root, "import", "generic", source, "--out", root / "fresh.jsonl", *_MAP, says="items")
    # An import replaces its own earlier output (records and items).
    for _ in range(2):
        result = invoke("import", "generic", source, "--out", root / "mine.jsonl", *_MAP)
        assert result.exit_code == 0, result.output
    assert (root / "mine.items.jsonl").exists()


@pytest.mark.parametrize("manifest", ['{"name": "my project"}\n', "not json at all"])
def test_run_refuses_a_folder_with_a_foreign_manifest(tmp_path: Path, manifest: str) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 2)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "manifest.json").write_text(manifest, encoding="utf-8")
    config = write_config(
        tmp_path / "run.yaml",
        dataset,
        folder,
        judges={"j1": {"provider": "fake", "model": "fake-model"}},
        pipeline={"test_retest_count": 0, "cache": False},
    )
    _refused(tmp_path, "run", config, says="not the manifest of a jurybox run")
    _refused(tmp_path, "run", config, "--resume", folder, says="not the manifest of a jurybox run")


def test_a_run_folder_of_jurybox_is_resumed_as_before(run_dir: Path) -> None:
    result = invoke("run", run_dir.parent / "run.yaml", "--resume", run_dir)
    assert result.exit_code == 0, result.output


def test_export_pairs_refuses_its_dataset(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 2)
    _refused(tmp_path, "export-pairs", dataset, "--out", dataset, says="reads")
    out = tmp_path / "pairs.json"
    for _ in range(2):
        assert invoke("export-pairs", dataset, "--out", out).exit_code == 0
    (tmp_path / "mine.json").write_text('{"mine": true}', encoding="utf-8")
    _refused(tmp_path, "export-pairs", dataset, "--out", tmp_path / "mine.json", says="not a")
