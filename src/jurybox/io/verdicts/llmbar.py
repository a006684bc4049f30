"""LLMBar: ``dataset.json`` + ``verdicts/<judge>/result.json`` (see ``jurybox.io.verdicts``)."""

from __future__ import annotations

from pathlib import Path

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import Loaded, _field, _load_json, pair_record
from jurybox.records import Item, JudgeRecord, Status

_LLMBAR_ORDERS = (
    ("swap = False", ("output_1", "output_2")),
    ("swap = True", ("output_2", "output_1")),
)


def _llmbar_items(folder: Path) -> list[Item]:
    path = folder / "dataset.json"
    items = []
    for i, entry in enumerate(_load_json(path)):
        label = str(_field(entry, "label", path, i))
        if label not in ("1", "2"):
            raise DatasetError(f"entry {i}: label must be 1 or 2, got {label}", path=str(path))
        items.append(
            Item(
                id=f"{folder.name}/{i}",
                question=_field(entry, "input", path, i),
                responses={"output_1": entry["output_1"], "output_2": entry["output_2"]},
                metadata={"source": f"llmbar/{folder.name}"},
                human={"preferred_arm": f"output_{label}"},
            )
        )
    return items


def _llmbar_judge(judge_dir: Path, items: list[Item], stamp: str) -> list[JudgeRecord]:
    path = judge_dir / "result.json"
    results = _load_json(path)
    by_content = {(i.question, i.responses["output_1"], i.responses["output_2"]): i for i in items}
    records = []
    for index, entry in enumerate(results):
        key = (entry.get("input"), entry.get("output_1"), entry.get("output_2"))
        item = by_content.get(key)
        if item is None:
            raise DatasetError(f"entry {index} matches no item of dataset.json", path=str(path))
        last = _field(entry, "results", path, index)[-1]
        for name, shown in _LLMBAR_ORDERS:
            verdict = _field(last, name, path, index)
            winner = verdict.get("winner")
            arm = f"output_{winner}" if str(winner) in ("1", "2") else None
            completion = verdict.get("completion")
            raw = str(completion[0]) if isinstance(completion, list) and completion else None
            records.append(
                pair_record(
                    run_id=f"import-llmbar-{judge_dir.parent.parent.name}",
                    stamp=stamp,
                    qid=item.id,
                    judge=judge_dir.name,
                    shown=shown,
                    winner=arm,
                    raw=raw,
                    status=Status.OK if arm else Status.UNPARSED,
                )
            )
    return records


def read_llmbar(source: Path, stamp: str) -> Loaded:
    """An LLMBar folder (dataset.json + verdicts/<judge>/result.json) or a folder of them."""
    if (source / "dataset.json").exists():
        folders = [source]
    else:
        folders = sorted(p for p in source.iterdir() if (p / "dataset.json").exists())
    if not folders:
        raise DatasetError("no dataset.json here or in a subfolder", path=str(source))
    records: list[JudgeRecord] = []
    items: list[Item] = []
    for folder in folders:
        folder_items = _llmbar_items(folder)
        items.extend(folder_items)
        judges = sorted(p for p in (folder / "verdicts").glob("*") if (p / "result.json").exists())
        if not judges:
            raise DatasetError("no verdicts/<judge>/result.json", path=str(folder))
        for judge_dir in judges:
            records.extend(_llmbar_judge(judge_dir, folder_items, stamp))
    return records, items


# --- PandaLM -------------------------------------------------------------------------------
