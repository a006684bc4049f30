"""Train / dev / test split of a labelled set, stratified by label, seeded, with content hashes.

Train (10–20 %) is the only source of few-shot examples, dev (40–45 %) is where the prompt is
iterated, test (40–45 %) is measured once the prompt is frozen (Shankar & Husain, "Application-
Centric AI Evals", ch. 5). ``split_manifest.json`` records, per item, its split, its label and a
hash of its normalised question + response, so that ``jurybox.devloop.leakage`` can refuse a
few-shot example copied from dev or test even after whitespace or case edits.

Items with the same normalised content are kept in one split: a duplicate in train and test would
be a leak that no example check could see.
"""

from __future__ import annotations

import hashlib
import json
import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np

from jurybox.errors import ConfigError, DatasetError
from jurybox.io.atomic import write_text_atomic
from jurybox.io.datasets import dataset_hash, load_dataset
from jurybox.io.targets import same_file
from jurybox.records import Item

SplitName = Literal["train", "dev", "test"]
_E = TypeVar("_E")
SPLITS: tuple[SplitName, ...] = ("train", "dev", "test")
MANIFEST = "split_manifest.json"
FORMAT = "jurybox-split/1"
DEFAULT_FRACTIONS: Mapping[str, float] = {"train": 0.15, "dev": 0.425, "test": 0.425}
NORMALISATION = (
    "Unicode NFKC, typographic quotes and dashes to ASCII, casefold, whitespace collapsed; "
    "content_hash = sha256(question + U+001F + response), response_hash = sha256(response)"
)
_TYPOGRAPHY = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"',
                             "–": "-", "—": "-", "‐": "-", "…": "..."})  # fmt: skip


def normalise_text(text: str) -> str:
    """The form hashed for leak checks: trivial edits (spacing, case, curly quotes) vanish."""
    text = unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY).casefold()
    return " ".join(text.split())


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(question: str, response: str) -> str:
    return _sha(normalise_text(question) + "\x1f" + normalise_text(response))


def response_hash(response: str) -> str:
    return _sha(normalise_text(response))


def item_label(item: Item) -> Literal["Pass", "Fail"]:
    """The item's human Pass/Fail verdict; the item must have exactly one response."""
    if len(item.responses) != 1:
        raise DatasetError(
            f"item '{item.id}' has {len(item.responses)} responses; the judge development loop "
            "labels one response per item (make one item per response)",
            field="responses",
        )
    verdicts = item.human.get("verdict") or {}
    verdict = verdicts.get(item.arms[0]) if isinstance(verdicts, Mapping) else None
    if verdict not in ("Pass", "Fail"):
        raise DatasetError(f"item '{item.id}' has no human Pass/Fail verdict", field="human")
    return "Pass" if verdict == "Pass" else "Fail"


def item_response(item: Item) -> str:
    return item.responses[item.arms[0]]


@dataclass(frozen=True)
class SplitEntry:
    """One labelled item as the manifest records it."""

    id: str
    split: SplitName
    label: Literal["Pass", "Fail"]
    content_hash: str
    response_hash: str


def check_fractions(fractions: Mapping[str, float]) -> dict[str, float]:
    values: dict[str, float] = {name: float(fractions[name]) for name in SPLITS}
    if any(not 0.0 <= value <= 1.0 for value in values.values()):
        raise ConfigError(f"split fractions must be within [0, 1], got {values}", field="--train")
    if not math.isclose(sum(values.values()), 1.0, abs_tol=1e-6):
        raise ConfigError(f"split fractions must sum to 1, got {values}", field="--train")
    if values["dev"] == 0 or values["test"] == 0:
        raise ConfigError("dev and test must both get a share of the items", field="--dev")
    return values


def allocate(n: int, fractions: Mapping[str, float]) -> list[SplitName]:
    """n slots over the splits by largest remainder; ties go to the earlier split."""
    exact = [n * fractions[name] for name in SPLITS]
    counts = [math.floor(x) for x in exact]
    order = sorted(range(3), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in order[: n - sum(counts)]:
        counts[i] += 1
    return [name for name, k in zip(SPLITS, counts, strict=True) for _ in range(k)]


def assign_splits(
    items: Sequence[Item], fractions: Mapping[str, float], rng: np.random.Generator
) -> list[SplitEntry]:
    """Stratified by label, duplicates (same normalised content) kept together; seeded."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(content_hash(item.question, item_response(item)), []).append(item)
    by_label: dict[str, list[str]] = {"Pass": [], "Fail": []}
    for key, members in groups.items():
        by_label[item_label(members[0])].append(key)  # a duplicate group follows its first label
    entries: list[SplitEntry] = []
    for label in ("Pass", "Fail"):
        keys = by_label[label]
        shuffled = [keys[i] for i in rng.permutation(len(keys))]
        for key, split in zip(shuffled, allocate(len(keys), fractions), strict=True):
            for item in groups[key]:
                response = item_response(item)
                entries.append(
                    SplitEntry(
                        item.id,
                        split,
                        item_label(item),
                        key,
                        response_hash(response),
                    )
                )
    return entries


def interleaved(
    entries: Sequence[_E], labels: Sequence[str], label: Callable[[_E], str]
) -> list[_E]:
    """Spread the labels (in the order ``labels`` gives them) evenly through a file, so that
    its first N items are roughly stratified."""
    ranked: list[tuple[float, int, int, _E]] = []
    for rank, name in enumerate(labels):
        mine = [entry for entry in entries if label(entry) == name]
        for index, entry in enumerate(mine):
            ranked.append(((index + 0.5) / len(mine), rank, index, entry))
    return [entry for *_, entry in sorted(ranked, key=lambda r: (r[0], r[1], r[2]))]


def _interleaved(entries: Sequence[SplitEntry]) -> list[SplitEntry]:
    return interleaved(entries, ("Pass", "Fail"), lambda entry: entry.label)


def item_row(item: Item) -> dict[str, Any]:
    """An item as a dataset line (the jurybox JSONL format; empty fields left out)."""
    row: dict[str, Any] = {"id": item.id, "question": item.question}
    row["responses"] = dict(item.responses)
    optional = {
        "contexts": list(item.contexts),
        "expected_answer": item.expected_answer,
        "metadata": dict(item.metadata),
        "authors": dict(item.authors),
        "human": dict(item.human),
    }
    row.update({key: value for key, value in optional.items() if value})
    return row


@dataclass(frozen=True)
class SplitResult:
    """What ``split_labelled`` wrote."""

    out_dir: Path
    manifest_path: Path
    files: Mapping[SplitName, Path]
    counts: Mapping[SplitName, Mapping[str, int]]
    seed: int


def _write_jsonl(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def _same_assignment(path: Path, entries: Sequence[SplitEntry]) -> bool:
    old = json.loads(path.read_text(encoding="utf-8"))
    new = {(e.id, e.split, e.content_hash) for e in entries}
    return {(e["id"], e["split"], e["content_hash"]) for e in old.get("items", [])} == new


def split_labelled(
    labelled: str | Path,
    out_dir: str | Path,
    *,
    fractions: Mapping[str, float] = DEFAULT_FRACTIONS,
    seed: int = 42,
    force: bool = False,
) -> SplitResult:
    """Split a labelled dataset into ``train/dev/test.jsonl`` + ``split_manifest.json``.

    Args:
        labelled: dataset whose items carry ``human.verdict`` Pass/Fail (one response each).
        out_dir: folder to write; an existing, different split there is refused unless ``force``
            (re-splitting after the test set was used would mix test items into train and dev).
        fractions: train / dev / test shares, summing to 1.
        seed: seeds the shuffle (``numpy.random.default_rng``).
        force: overwrite a different split.
    """
    shares = check_fractions(fractions)
    items = load_dataset(labelled)
    if not items:
        raise DatasetError("no items to split", path=str(labelled))
    entries = assign_splits(items, shares, np.random.default_rng(seed))
    out = Path(out_dir)
    manifest_path = out / MANIFEST
    for written in (manifest_path, *(out / f"{name}.jsonl" for name in SPLITS)):
        if same_file(written, Path(labelled)):  # never onto its own input, even with --force
            raise ConfigError(f"would overwrite {labelled}, which it splits", path=str(written))
    if manifest_path.exists() and not force and not _same_assignment(manifest_path, entries):
        raise ConfigError(
            "already holds a different split; splitting again moves items between train, dev "
            "and test (a leak if the old test set was used). Pass --force to overwrite",
            path=str(out),
        )
    out.mkdir(parents=True, exist_ok=True)
    by_id = {item.id: item for item in items}
    files: dict[SplitName, Path] = {}
    counts: dict[SplitName, dict[str, int]] = {}
    for name in SPLITS:
        mine = _interleaved([e for e in entries if e.split == name])
        files[name] = out / f"{name}.jsonl"
        _write_jsonl(files[name], [item_row(by_id[e.id]) for e in mine])
        counts[name] = {label: sum(e.label == label for e in mine) for label in ("Pass", "Fail")}
    manifest = _manifest(labelled, entries, files=files, counts=counts, fractions=shares, seed=seed)
    write_text_atomic(manifest_path, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return SplitResult(out, manifest_path, files, counts, seed)


def _manifest(
    labelled: str | Path,
    entries: Sequence[SplitEntry],
    *,
    files: Mapping[SplitName, Path],
    counts: Mapping[SplitName, Mapping[str, int]],
    fractions: Mapping[str, float],
    seed: int,
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": {"path": str(labelled), "sha256": dataset_hash(labelled)},
        "seed": seed,
        "fractions": dict(fractions),
        "label": "human.verdict",
        "normalisation": NORMALISATION,
        "files": {
            name: {
                "path": files[name].name,
                "sha256": dataset_hash(files[name]),
                "items": sum(counts[name].values()),
                "labels": dict(counts[name]),
            }
            for name in SPLITS
        },
        "items": [
            {
                "id": e.id,
                "split": e.split,
                "label": e.label,
                "content_hash": e.content_hash,
                "response_hash": e.response_hash,
            }
            for e in sorted(entries, key=lambda e: e.id)
        ],
    }


@dataclass(frozen=True)
class LoadedSplit:
    """A split folder read back and checked against its manifest."""

    directory: Path
    manifest_sha256: str
    entries: Mapping[str, SplitEntry]  # item id -> entry
    files: Mapping[SplitName, Path]

    def items(self, name: SplitName) -> list[Item]:
        return load_dataset(self.files[name])

    def ids(self, name: SplitName) -> list[str]:
        return [e.id for e in self.entries.values() if e.split == name]


def checked_manifest(
    folder: Path, fmt: str, *, missing: str, changed: str
) -> tuple[dict[str, Any], dict[SplitName, Path]]:
    """A split folder's manifest (of format ``fmt``) and its train/dev/test files, each checked
    against the hash the manifest holds: ConfigError with ``missing`` when there is none, and
    naming the file, followed by ``changed``, when one is missing or edited."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(missing, path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON ({exc.msg})", path=str(path), line=exc.lineno) from None
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise ConfigError(f"not a {fmt} manifest", path=str(path))
    files: dict[SplitName, Path] = {}
    for name in SPLITS:
        file = folder / data["files"][name]["path"]
        if not file.exists() or dataset_hash(file) != data["files"][name]["sha256"]:
            raise ConfigError(f"{file.name} is missing or changed since {changed}", path=str(file))
        files[name] = file
    return data, files


def load_split(directory: str | Path) -> LoadedSplit:
    """Read ``split_manifest.json`` and verify that the split files are the ones it hashed."""
    folder = Path(directory)
    path = folder / MANIFEST
    data, files = checked_manifest(
        folder,
        FORMAT,
        missing="no split here; run `jurybox split` first",
        changed="`jurybox split` wrote it; its hashes would no longer guard against leaks. "
        "Re-run `jurybox split`",
    )
    entries = {
        row["id"]: SplitEntry(
            row["id"], row["split"], row["label"], row["content_hash"], row["response_hash"]
        )
        for row in data["items"]
    }
    return LoadedSplit(folder, dataset_hash(path), entries, files)
