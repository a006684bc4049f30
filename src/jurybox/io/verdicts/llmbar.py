"""LLMBar, in its published layout or the flat one (see ``jurybox.io.verdicts``).

Published: ``Dataset/<group>/<subset>/dataset.json`` with
``evaluators/<judge>/<strategy>/result.json`` (judge named ``judge/strategy``); flat:
``<subset>/dataset.json`` with ``verdicts/<judge>/result.json``. A path at any level of either
tree imports everything below it; the subset is kept in each item's metadata and id.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import quoted
from jurybox.io.verdicts._common import (
    MISSING,
    At,
    Loaded,
    field_of,
    json_entries,
    mapping_of,
    pair_record,
    raw_text,
    text_of,
)
from jurybox.records import Item, Status

_LLMBAR_ORDERS = (
    ("swap = False", ("output_1", "output_2")),
    ("swap = True", ("output_2", "output_1")),
)
_ROOT = "Dataset"  # the folder the published subsets are named from
_Key = tuple[str, str, str]
_VERDICTS = ("evaluators", "verdicts")
_DEPTH = 5  # folders searched below the path imported, for dataset.json


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
    items = []
    for at, raw in json_entries(folder / "dataset.json"):
        entry = mapping_of(raw, at)
        label = field_of(entry, "label", at)
        if isinstance(label, bool) or str(label) not in ("1", "2"):
            raise at.error(f"label must be 1 or 2, got {quoted(label)}", "label")
        items.append(
            Item(
                id=f"{subset}/{at.index}",
                question=text_of(entry, "input", at),
                responses={arm: text_of(entry, arm, at) for arm in ("output_1", "output_2")},
                metadata={"source": f"llmbar/{subset}", "subset": subset, "category": subset},
                human={"preferred_arm": f"output_{label}"},
            )
        )
    return items


def _key(entry: Mapping[str, Any], at: At) -> _Key:
    return (
        text_of(entry, "input", at),
        text_of(entry, "output_1", at),
        text_of(entry, "output_2", at),
    )


def _match(key: _Key, index: int, items: list[Item], lookup: dict[_Key, Item]) -> Item | None:
    """The item at the same position when its text matches (duplicates stay apart), else any."""
    if index < len(items):
        same = items[index]
        if (same.question, same.responses["output_1"], same.responses["output_2"]) == key:
            return same
    return lookup.get(key)


def _last_result(entry: Mapping[str, Any], at: At) -> dict[str, Any]:
    results = field_of(entry, "results", at)
    if not isinstance(results, list) or not results:
        raise at.error("'results' must be a non-empty list", "results")
    return dict(mapping_of(results[-1], at, "results"))


def _winner(last: dict[str, Any], name: str, at: At) -> Any:
    verdict = mapping_of(field_of(last, name, at), at, name)
    return verdict.get("winner", MISSING)


def _llmbar_judge(
    result_path: Path, judge: str, subset: str, items: list[Item], *, loaded: Loaded, stamp: str
) -> None:
    lookup = {(i.question, i.responses["output_1"], i.responses["output_2"]): i for i in items}
    for at, raw in json_entries(result_path):
        entry = mapping_of(raw, at)
        item = _match(_key(entry, at), at.index or 0, items, lookup)
        if item is None:
            raise at.error("matches no item of dataset.json", "input")
        last = _last_result(entry, at)
        rated = _rating(last)
        for name, shown in _LLMBAR_ORDERS:
            winner = _winner(last, name, at)
            arm = f"output_{winner}" if str(winner) in ("1", "2") else None
            if arm is None:
                loaded.note(winner)
            elif rated is not None and rated[0] == rated[1]:
                arm = "tie"  # upstream broke the score tie by a fixed rule, not by the judge
            completion = mapping_of(last[name], at, name).get("completion")
            raw_answer = (
                raw_text(completion[0]) if isinstance(completion, list) and completion else None
            )
            loaded.records.append(
                pair_record(
                    run_id=f"import-llmbar-{subset}",
                    stamp=stamp,
                    qid=item.id,
                    judge=judge,
                    shown=shown,
                    winner=arm,
                    raw=raw_answer,
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
    # Below only as deep as the published tree goes (a repository root holds Dataset/<group>/
    # <subset>/dataset.json): a path such as a home folder is not searched to its bottom.
    below = ("/".join(["*"] * depth + ["dataset.json"]) for depth in range(_DEPTH + 1))
    return sorted({p.parent for pattern in below for p in start.glob(pattern)})


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
