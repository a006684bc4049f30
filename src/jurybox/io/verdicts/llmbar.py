"""LLMBar, in its published layout or the flat one (see ``jurybox.io.verdicts``).

Published: ``Dataset/<group>/<subset>/dataset.json`` with
``evaluators/<judge>/<strategy>/result.json`` (judge named ``judge/strategy``); flat:
``<subset>/dataset.json`` with ``verdicts/<judge>/result.json``. A path at any level of either
tree imports everything below it; the subset is kept in each item's metadata and id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import (
    MISSING,
    Loaded,
    _field,
    _load_json,
    entry_error,
    list_of,
    mapping_of,
    nfc,
    pair_record,
)
from jurybox.records import Item, Status

_LLMBAR_ORDERS = (
    ("swap = False", ("output_1", "output_2")),
    ("swap = True", ("output_2", "output_1")),
)
_ROOT = "Dataset"  # the folder the published subsets are named from
_Key = tuple[str, str, str]
_VERDICTS = ("evaluators", "verdicts")


def _subset_name(folder: Path, source: Path) -> str:
    """``group/subset`` under the published ``Dataset`` folder, else the folder's own name.

    Named from ``Dataset`` wherever it is, so the ids are the same at every import level.
    """
    parents = [folder, *folder.parents]
    root = next((p for p in parents if p.name == _ROOT), None)
    if root is not None and root != folder:
        return folder.relative_to(root).as_posix()
    base = source if source != folder and folder.is_relative_to(source) else folder.parent
    return folder.relative_to(base).as_posix()


def _llmbar_items(folder: Path, subset: str) -> list[Item]:
    path = folder / "dataset.json"
    items = []
    for i, entry in enumerate(list_of(_load_json(path), path, "dataset")):
        label = str(_field(entry, "label", path, i))
        if label not in ("1", "2"):
            raise entry_error(path, i, "label", f"label must be 1 or 2, got {label}")
        items.append(
            Item(
                id=f"{subset}/{i}",
                question=nfc(_field(entry, "input", path, i)),
                responses={
                    arm: nfc(_field(entry, arm, path, i)) for arm in ("output_1", "output_2")
                },
                metadata={"source": f"llmbar/{subset}", "subset": subset, "category": subset},
                human={"preferred_arm": f"output_{label}"},
            )
        )
    return items


def _key(entry: Any, path: Path, index: int) -> _Key:
    return (
        nfc(_field(entry, "input", path, index)),
        nfc(_field(entry, "output_1", path, index)),
        nfc(_field(entry, "output_2", path, index)),
    )


def _match(key: _Key, index: int, items: list[Item], lookup: dict[_Key, Item]) -> Item | None:
    """The item at the same position when its text matches (duplicates stay apart), else any."""
    if index < len(items):
        same = items[index]
        if (same.question, same.responses["output_1"], same.responses["output_2"]) == key:
            return same
    return lookup.get(key)


def _last_result(entry: Any, path: Path, index: int) -> dict[str, Any]:
    results = _field(entry, "results", path, index)
    if not isinstance(results, list) or not results:
        raise entry_error(path, index, "results", "'results' must be a non-empty list")
    return dict(mapping_of(results[-1], path, index, "results"))


def _winner(last: dict[str, Any], name: str, path: Path, index: int) -> Any:
    verdict = mapping_of(_field(last, name, path, index), path, index, name)
    return verdict.get("winner", MISSING)


def _llmbar_judge(
    result_path: Path, judge: str, subset: str, items: list[Item], *, loaded: Loaded, stamp: str
) -> None:
    lookup = {(i.question, i.responses["output_1"], i.responses["output_2"]): i for i in items}
    for index, entry in enumerate(list_of(_load_json(result_path), result_path, "results")):
        item = _match(_key(entry, result_path, index), index, items, lookup)
        if item is None:
            raise entry_error(result_path, index, "input", "matches no item of dataset.json")
        last = _last_result(entry, result_path, index)
        rated = _rating(last)
        for name, shown in _LLMBAR_ORDERS:
            winner = _winner(last, name, result_path, index)
            arm = f"output_{winner}" if str(winner) in ("1", "2") else None
            if arm is None:
                loaded.note(winner)
            elif rated is not None and rated[0] == rated[1]:
                arm = "tie"  # upstream broke the score tie by a fixed rule, not by the judge
            completion = mapping_of(last[name], result_path, index, name).get("completion")
            raw = str(completion[0]) if isinstance(completion, list) and completion else None
            loaded.records.append(
                pair_record(
                    run_id=f"import-llmbar-{subset}",
                    stamp=stamp,
                    qid=item.id,
                    judge=judge,
                    shown=shown,
                    winner=arm,
                    raw=raw,
                    status=Status.OK if arm else Status.UNPARSED,
                    positions_shown="score_1" not in last,
                )
            )


def _rating(last: Any) -> tuple[float, float] | None:
    """The two scores of a ``Rating*`` strategy (each output scored alone), or None."""

    def score(value: Any) -> float:  # upstream stores [text, finish_reason]
        return float(value[0] if isinstance(value, list) else value)

    try:
        return score(last["score_1"]), score(last["score_2"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _subset_folders(source: Path) -> list[Path]:
    """The folders holding ``dataset.json``: above ``source`` (a judge, a strategy) or below."""
    start = source if source.is_dir() else source.parent
    chain = [start, *list(start.parents)[:3]]
    for up, folder in enumerate(chain):
        # Above only through the verdict folders, never into an unrelated parent's dataset.json.
        if (folder / "dataset.json").is_file() and (up == 0 or chain[up - 1].name in _VERDICTS):
            return [folder]
    return sorted(p.parent for p in start.rglob("dataset.json"))


def _verdict_files(folder: Path, source: Path) -> list[tuple[Path, str]]:
    """Each ``result.json`` of the subset at or below ``source``, with its judge's name."""
    published = [
        (p, f"{p.parent.parent.name}/{p.parent.name}")
        for p in folder.glob("evaluators/*/*/result.json")
    ]
    flat = [(p, p.parent.name) for p in folder.glob("verdicts/*/result.json")]
    return sorted((path, judge) for path, judge in published + flat if path.is_relative_to(source))


def read_llmbar(source: Path, stamp: str) -> Loaded:
    """An LLMBar tree at any level (see the module docstring)."""
    folders = _subset_folders(source)
    if not folders:
        raise DatasetError(
            "no dataset.json here, above or below (the LLMBar layout is "
            "Dataset/<group>/<subset>/dataset.json with evaluators/<judge>/<strategy>/result.json)",
            path=str(source),
        )
    loaded = Loaded()
    for folder in folders:
        files = _verdict_files(folder, source)
        if not files:
            continue
        subset = _subset_name(folder, source)
        items = _llmbar_items(folder, subset)
        loaded.items.extend(items)
        for path, judge in files:
            _llmbar_judge(path, judge, subset, items, loaded=loaded, stamp=stamp)
    if not loaded.records:
        raise DatasetError(
            "no verdicts: expected evaluators/<judge>/<strategy>/result.json or "
            "verdicts/<judge>/result.json beside dataset.json",
            path=str(source),
        )
    return loaded
