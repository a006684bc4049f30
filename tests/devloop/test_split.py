"""jurybox split: stratified, seeded, content-hashed; the manifest guards the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from jurybox.cli import main
from jurybox.devloop.split import (
    check_fractions,
    content_hash,
    load_split,
    normalise_text,
    response_hash,
    split_labelled,
)
from jurybox.errors import ConfigError, DatasetError
from jurybox.io.datasets import load_dataset

from .helpers import LABELLED


def test_split_is_stratified_and_complete(tmp_path: Path) -> None:
    result = split_labelled(LABELLED, tmp_path / "s", seed=42)
    # 31 Pass / 29 Fail at 0.15 / 0.425 / 0.425, largest remainder per label
    assert result.counts == {
        "train": {"Pass": 5, "Fail": 5},
        "dev": {"Pass": 13, "Fail": 12},
        "test": {"Pass": 13, "Fail": 12},
    }
    ids = [
        item.id for name in ("train", "dev", "test") for item in load_dataset(result.files[name])
    ]
    assert sorted(ids) == sorted(item.id for item in load_dataset(LABELLED))


def test_split_files_keep_every_field_and_interleave_labels(tmp_path: Path) -> None:
    result = split_labelled(LABELLED, tmp_path / "s")
    originals = {item.id: item for item in load_dataset(LABELLED)}
    dev = load_dataset(result.files["dev"])
    for item in dev:
        assert item == originals[item.id]
    first_four = [item.human["verdict"]["assistant"] for item in dev[:4]]
    assert set(first_four) == {"Pass", "Fail"}  # a --limit 4 still sees both labels


def test_split_is_seeded(tmp_path: Path) -> None:
    def assignment(folder: Path) -> dict[str, str]:
        manifest = json.loads((folder / "split_manifest.json").read_text())
        return {row["id"]: row["split"] for row in manifest["items"]}

    split_labelled(LABELLED, tmp_path / "a", seed=7)
    split_labelled(LABELLED, tmp_path / "b", seed=7)
    split_labelled(LABELLED, tmp_path / "c", seed=8)
    assert assignment(tmp_path / "a") == assignment(tmp_path / "b")
    assert assignment(tmp_path / "a") != assignment(tmp_path / "c")


def test_manifest_records_content_hashes(tmp_path: Path) -> None:
    result = split_labelled(LABELLED, tmp_path / "s")
    manifest = json.loads(result.manifest_path.read_text())
    first = load_dataset(LABELLED)[0]
    row = next(r for r in manifest["items"] if r["id"] == first.id)
    assert row["content_hash"] == content_hash(first.question, first.responses["assistant"])
    assert row["response_hash"] == response_hash(first.responses["assistant"])
    assert set(manifest["files"]) == {"train", "dev", "test"}
    assert manifest["seed"] == 42 and "casefold" in manifest["normalisation"]


def test_normalisation_ignores_whitespace_case_and_typography() -> None:
    a = content_hash("How do I  reset it?", "Open Settings → Profile.\n")
    b = content_hash("how do i reset it?", "  OPEN settings  → profile.")
    assert a == b
    assert normalise_text("It’s “fine” — really") == 'it\'s "fine" - really'
    assert content_hash("q", "a b") != content_hash("q a", "b")  # the separator is kept


def test_duplicates_stay_in_one_split(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"d{i}",
            "question": "Same?",
            "responses": {"a": "Same answer."},
            "human": {"verdict": "Pass"},
        }
        for i in range(3)
    ] + [
        {
            "id": f"u{i}",
            "question": f"Q{i}?",
            "responses": {"a": f"Answer {i}."},
            "human": {"verdict": "Pass" if i % 2 else "Fail"},
        }
        for i in range(20)
    ]
    source = tmp_path / "dups.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for seed in range(5):
        split = load_split(split_labelled(source, tmp_path / f"s{seed}", seed=seed).out_dir)
        assert len({split.entries[f"d{i}"].split for i in range(3)}) == 1


@pytest.mark.parametrize(
    "fractions",
    [
        {"train": 0.2, "dev": 0.4, "test": 0.5},
        {"train": -0.1, "dev": 0.6, "test": 0.5},
        {"train": 0.5, "dev": 0.5, "test": 0.0},
    ],
)
def test_bad_fractions_are_refused(fractions: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        check_fractions(fractions)  # type: ignore[arg-type]


def test_a_different_split_is_not_overwritten_without_force(tmp_path: Path) -> None:
    split_labelled(LABELLED, tmp_path / "s", seed=1)
    split_labelled(LABELLED, tmp_path / "s", seed=1)  # same split again: fine
    with pytest.raises(ConfigError, match="different split"):
        split_labelled(LABELLED, tmp_path / "s", seed=2)
    split_labelled(LABELLED, tmp_path / "s", seed=2, force=True)


def test_an_edited_split_file_is_detected(tmp_path: Path) -> None:
    result = split_labelled(LABELLED, tmp_path / "s")
    load_split(result.out_dir)
    with result.files["dev"].open("a") as handle:
        handle.write("\n")
    with pytest.raises(ConfigError, match="changed since"):
        load_split(result.out_dir)


def test_unlabelled_or_multi_arm_items_are_refused(tmp_path: Path) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps({"id": "x", "question": "q", "responses": {"a": "r"}}) + "\n")
    with pytest.raises(DatasetError, match="no human Pass/Fail verdict"):
        split_labelled(source, tmp_path / "s")
    row = {
        "id": "x",
        "question": "q",
        "responses": {"a": "r", "b": "s"},
        "human": {"verdict": {"a": "Pass", "b": "Fail"}},
    }
    source.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match="one response per item"):
        split_labelled(source, tmp_path / "s")


def test_cli_split_prints_counts_and_writes_files(tmp_path: Path) -> None:
    out = tmp_path / "split"
    args = [
        "split",
        str(LABELLED),
        "--out",
        str(out),
        "--train",
        "0.2",
        "--dev",
        "0.4",
        "--test",
        "0.4",
        "--seed",
        "3",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "train   12 items  (Pass 6, Fail 6)" in result.output
    assert {p.name for p in out.iterdir()} == {
        "train.jsonl",
        "dev.jsonl",
        "test.jsonl",
        "split_manifest.json",
    }
    bad = CliRunner().invoke(main, ["split", str(LABELLED), "--out", str(out), "--train", "0.5"])
    assert bad.exit_code == 2 and "sum to 1" in bad.output
