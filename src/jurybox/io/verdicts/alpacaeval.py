"""AlpacaEval / AlpacaFarm annotations: a JSON list (see ``jurybox.io.verdicts``).

Each entry holds ``instruction``, ``output_1``, ``output_2``, ``preference`` and ``annotator``
(optional ``generator_1`` / ``generator_2``, ``dataset``). ``preference`` is 1 (output_1 better),
2 (output_2 better), 1.5 or 0 (a draw; 0 is AlpacaFarm's older spelling); a weighted annotator's
number between 1 and 2 counts for the side it leans to. The outputs are numbered as published:
AlpacaEval already maps its random presentation order back, so one record per annotation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import (
    MISSING,
    At,
    Loaded,
    json_entries,
    mapping_of,
    pair_record,
    text_of,
)
from jurybox.records import Item, Status

_ARMS = ("output_1", "output_2")


def preference_arm(value: Any) -> str | None:
    """``output_1``, ``output_2`` or ``tie`` for an AlpacaEval preference, None if unreadable."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if number in {0, 1.5}:
        return "tie"
    if not math.isfinite(number) or not 1 <= number <= 2:
        return None
    return "output_1" if number < 1.5 else "output_2"


def _files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    files = sorted(source.glob("*.json"))
    if not files:
        raise DatasetError("no *.json annotation file", path=str(source))
    return files


class _Items:
    """Items by content: the same instruction and outputs judged by several annotators."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, ...], Item] = {}

    def get(self, entry: Mapping[str, Any], at: At) -> Item:
        question = text_of(entry, "instruction", at)
        outputs = [text_of(entry, arm, at) for arm in _ARMS]
        key = (question, *outputs)
        if key not in self.by_key:
            authors = {
                arm: text
                for n, arm in enumerate(_ARMS, 1)
                if (text := text_of(entry, f"generator_{n}", at, required=False))
            }
            dataset = text_of(entry, "dataset", at, required=False)
            self.by_key[key] = Item(
                id=f"alpacaeval/{len(self.by_key)}",
                question=question,
                responses=dict(zip(_ARMS, outputs, strict=True)),
                authors=authors,
                metadata={"source": "alpacaeval", **({"category": dataset} if dataset else {})},
            )
        return self.by_key[key]


def read_alpacaeval(source: Path, stamp: str) -> Loaded:
    """AlpacaEval / AlpacaFarm annotation files (a file, or a folder of ``*.json``)."""
    loaded = Loaded()
    items = _Items()
    for path in _files(source):
        for at, raw in json_entries(path):
            entry = mapping_of(raw, at)
            item = items.get(entry, at)
            value = entry.get("preference", MISSING)
            winner = preference_arm(value)
            if winner is None:
                loaded.note(value)
            judge = text_of(entry, "annotator", at, required=False) or path.stem
            repeat = loaded.repeat(item.id, judge)
            loaded.records.append(
                pair_record(
                    run_id=f"import-alpacaeval-{path.stem}",
                    stamp=stamp,
                    qid=item.id,
                    judge=judge,
                    shown=_ARMS,
                    winner=winner,
                    status=Status.OK if winner else Status.UNPARSED,
                    repeat=repeat,
                )
            )
    if not loaded.records:
        raise DatasetError("no annotation found", path=str(source))
    loaded.items = list(items.by_key.values())
    return loaded
