"""The labelled items of an optimize split into train / dev / test, and the ledger of test uses.

Any mode with gold labels: a preferred arm (``human.preferred_arm`` or the labels file's) in
pairwise, rubric and ranking mode; a Pass/Fail verdict (``human.verdict``) in criterion mode.
Items without one are left out (and counted). The split is stratified by the gold label,
seeded, and keeps items with the same normalised content in one split (``devloop.split``'s
hashes); each split file is written with its labels spread evenly, so that the first N dev
items (a rung of the search) are roughly stratified too.

A split folder holds one sub-folder per seed (``seed-<n>/``: ``train/dev/test.jsonl`` and
``split_manifest.json``) and ``ledger.jsonl``: every split drawn and every test pass, appended
and never rewritten. The latest split is the one in use; once its test split was judged, a new
optimize refuses to judge it again unless told to draw a new split (``--new-split``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jurybox.config import RunConfig
from jurybox.devloop.split import (
    SPLITS,
    SplitName,
    allocate,
    check_fractions,
    checked_manifest,
    content_hash,
    interleaved,
    item_row,
    normalise_text,
    response_hash,
)
from jurybox.devloop.state import append_line, read_lines
from jurybox.errors import DatasetError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.datasets import dataset_hash, load_dataset, load_human_labels
from jurybox.pipeline.until import gold_labels
from jurybox.records import Item

FORMAT = "jurybox-optimize-split/1"
MANIFEST = "split_manifest.json"
LEDGER = "ledger.jsonl"


def criterion_gold(config: RunConfig, items: Sequence[Item]) -> dict[str, dict[str, str]]:
    """Item id -> arm -> "Pass"/"Fail": ``human.verdict`` (one string for every arm, or per
    arm), the labels file's winning where both give one."""
    found: dict[str, Any] = {item.id: item.human.get("verdict") for item in items if item.human}
    if config.paths.human_labels is not None:
        labels = load_human_labels(config.resolve(config.paths.human_labels))
        found.update({qid: label.get("verdict") for qid, label in labels.items()})
    arms = {item.id: item.arms for item in items}
    gold: dict[str, dict[str, str]] = {}
    for qid, value in found.items():
        if qid not in arms or value is None:
            continue
        per_arm = value if isinstance(value, Mapping) else dict.fromkeys(arms[qid], value)
        verdicts = {arm: str(v).strip().capitalize() for arm, v in per_arm.items()}
        if set(verdicts) == set(arms[qid]) and set(verdicts.values()) <= {"Pass", "Fail"}:
            gold[qid] = verdicts
    return gold


@dataclass(frozen=True)
class Gold:
    """The gold label of every labelled item, as a stratum name and as stored on the item."""

    strata: Mapping[str, str]  # item id -> stratum (the preferred arm, or the verdicts)
    human: Mapping[str, Mapping[str, Any]]  # item id -> its `human` field in the split files


def gold_of(config: RunConfig, items: Sequence[Item]) -> Gold:
    """The items' gold labels for ``config``'s mode."""
    if config.task.mode == "criterion":
        verdicts = criterion_gold(config, items)
        strata = {qid: "|".join(v[arm] for arm in sorted(v)) for qid, v in verdicts.items()}
        return Gold(strata, {qid: {"verdict": v} for qid, v in verdicts.items()})
    preferred = gold_labels(config, items)
    return Gold(preferred, {qid: {"preferred_arm": arm} for qid, arm in preferred.items()})


def item_hash(item: Item) -> str:
    """The normalised question and every response (in arm order): duplicates share it."""
    return content_hash(item.question, "\x1e".join(item.responses[a] for a in item.arms))


@dataclass(frozen=True)
class SplitItem:
    id: str
    split: SplitName
    label: str
    content_hash: str
    response_hashes: tuple[str, ...]


def assign(
    items: Sequence[Item], strata: Mapping[str, str], fractions: Mapping[str, float], seed: int
) -> list[SplitItem]:
    """Stratified by gold label, duplicates (same normalised content) together; seeded."""
    rng = np.random.default_rng(seed)
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item_hash(item), []).append(item)
    by_label: dict[str, list[str]] = {}
    for key, members in groups.items():
        by_label.setdefault(strata[members[0].id], []).append(key)
    out: list[SplitItem] = []
    for label in sorted(by_label):
        keys = by_label[label]
        shuffled = [keys[i] for i in rng.permutation(len(keys))]
        for key, split in zip(shuffled, allocate(len(keys), fractions), strict=True):
            for item in groups[key]:
                hashes = tuple(sorted({response_hash(text) for text in item.responses.values()}))
                out.append(SplitItem(item.id, split, strata[item.id], key, hashes))
    return out


@dataclass(frozen=True)
class OptimizeSplit:
    """One seed's split, read back and checked against its manifest."""

    folder: Path
    seed: int
    files: Mapping[SplitName, Path]
    entries: Mapping[str, SplitItem]
    source_sha256: str
    manifest_sha256: str

    def items(self, name: SplitName) -> list[Item]:
        return load_dataset(self.files[name])

    def ids(self, name: SplitName) -> list[str]:
        return [e.id for e in self.entries.values() if e.split == name]

    def counts(self) -> dict[str, int]:
        return {name: len(self.ids(name)) for name in SPLITS}


def draw_split(
    config: RunConfig, root: Path, *, fractions: Mapping[str, float], seed: int
) -> tuple[OptimizeSplit, int]:
    """Split the base config's labelled items into ``root/seed-<seed>/``; returns the split and
    how many items had no gold label (left out)."""
    shares = check_fractions(fractions)
    dataset = config.resolve(config.paths.dataset)
    items = load_dataset(dataset, config.dataset)
    gold = gold_of(config, items)
    labelled = [item for item in items if item.id in gold.strata]
    if len(labelled) < 3:
        raise DatasetError(
            f"{len(labelled)} of {len(items)} items have a gold label for {config.task.mode} "
            "mode; optimize needs labelled items to split into train, dev and test",
            path=str(dataset),
        )
    entries = assign(labelled, gold.strata, shares, seed)
    folder = root / f"seed-{seed}"
    by_id = {item.id: dataclasses.replace(item, human=gold.human[item.id]) for item in labelled}
    files = _write_files(folder, entries, by_id)
    manifest = {
        "format": FORMAT,
        "seed": seed,
        "fractions": shares,
        "mode": config.task.mode,
        "source": {"path": str(dataset), "sha256": dataset_hash(dataset)},
        "normalisation": "as `jurybox split` (docs/devloop.md): content_hash of the question "
        "and every response, response_hashes of each response",
        "files": {
            name: {"path": files[name].name, "sha256": dataset_hash(files[name])} for name in SPLITS
        },
        "items": [dataclasses.asdict(e) for e in sorted(entries, key=lambda e: e.id)],
    }
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    write_text_atomic(folder / MANIFEST, text)
    return load_optimize_split(folder), len(items) - len(labelled)


def _write_files(
    folder: Path, entries: Sequence[SplitItem], by_id: Mapping[str, Item]
) -> dict[SplitName, Path]:
    """train/dev/test.jsonl, each with its labels spread evenly through the file."""
    files: dict[SplitName, Path] = {}
    for name in SPLITS:
        mine = [e for e in entries if e.split == name]
        ordered = interleaved(mine, sorted({e.label for e in mine}), lambda e: e.label)
        files[name] = folder / f"{name}.jsonl"
        rows = [json.dumps(item_row(by_id[e.id]), ensure_ascii=False) + "\n" for e in ordered]
        write_text_atomic(files[name], "".join(rows))
    return files


def load_optimize_split(folder: Path) -> OptimizeSplit:
    """A seed's split folder, its files checked against the manifest's hashes."""
    data, files = checked_manifest(
        folder,
        FORMAT,
        missing="no optimize split here",
        changed="optimize split the data: its test items could no longer be told apart from "
        "the rest. Draw a new split (--new-split)",
    )
    entries = {
        row["id"]: SplitItem(
            row["id"],
            row["split"],
            row["label"],
            row["content_hash"],
            tuple(row["response_hashes"]),
        )
        for row in data["items"]
    }
    return OptimizeSplit(
        folder,
        int(data["seed"]),
        files,
        entries,
        data["source"]["sha256"],
        dataset_hash(folder / MANIFEST),
    )


# --- the ledger --------------------------------------------------------------------------------


def append_ledger(root: Path, entry: Mapping[str, Any]) -> None:
    """One line, appended and fsync'd; the ledger is never rewritten."""
    append_line(root / LEDGER, entry)


def read_ledger(root: Path) -> Iterator[dict[str, Any]]:
    return read_lines(root / LEDGER)


def passes_on_test(root: Path, seed: int) -> list[dict[str, Any]]:
    """Every test pass started on the split of ``seed`` (finished or not), oldest first."""
    return [
        e for e in read_ledger(root) if e.get("event") == "test" and int(e.get("seed", -1)) == seed
    ]


def held_out_texts(split: OptimizeSplit) -> list[tuple[str, str, str]]:
    """(split, item id, normalised text) of every dev and test question and response: what no
    candidate's own text may quote."""
    out = []
    for name in ("dev", "test"):
        for item in split.items(name):
            for text in (item.question, *item.responses.values()):
                out.append((name, item.id, normalise_text(text)))
    return out
