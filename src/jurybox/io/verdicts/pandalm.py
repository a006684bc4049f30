"""PandaLM: ``testset-v1.json`` + ``<judge>-testset-v1.json`` (see ``jurybox.io.verdicts``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import quoted
from jurybox.io.verdicts._common import (
    At,
    Loaded,
    id_of,
    json_entries,
    mapping_of,
    pair_record,
    raw_text,
    text_of,
)
from jurybox.records import Item, Status

_PANDALM_ARMS = ("response1", "response2")


def _pandalm_label(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    text = str(value).strip().lower()
    return {"1": "response1", "2": "response2", "0": "tie", "tie": "tie"}.get(text)


def _pandalm_items(path: Path) -> list[Item]:
    items: dict[str, Item] = {}
    for at, raw in json_entries(path):
        entry = mapping_of(raw, at)
        qid = f"pandalm/{id_of(entry, 'idx', at)}"
        if qid in items:
            raise at.error(f"idx {quoted(entry['idx'])} is given twice", "idx")
        authors = text_of(entry, "cmp_key", at, required=False).split("_")
        question = text_of(entry, "instruction", at)
        if extra := text_of(entry, "input", at, required=False):
            question += "\n\n" + extra
        items[qid] = Item(
            id=qid,
            question=question,
            responses={arm: text_of(entry, arm, at) for arm in _PANDALM_ARMS},
            authors=dict(zip(_PANDALM_ARMS, authors, strict=True)) if len(authors) == 2 else {},
            metadata={"category": entry.get("motivation_app"), "source": "pandalm"},
            human={"annotators": _annotators(entry, at)},
        )
    return list(items.values())


def _annotators(entry: Mapping[str, Any], at: At) -> dict[str, str]:
    """Each annotator's label (0 tie, 1, 2); anything else is an error, not a dropped vote."""
    labels = {}
    for name in (key for key in entry if key.startswith("annotator")):
        label = _pandalm_label(entry[name])
        if label is None:
            raise at.error(f"expected 0, 1 or 2, got {quoted(entry[name])}", name)
        labels[name] = label
    return labels


def _pandalm_judge(path: Path, stamp: str, loaded: Loaded) -> None:
    judge = path.name.removesuffix("-testset-v1.json")
    seen: set[str] = set()
    for at, raw in json_entries(path):
        entry = mapping_of(raw, at)
        qid = f"pandalm/{id_of(entry, 'idx', at)}"
        if qid in seen:
            raise at.error(f"idx {quoted(entry['idx'])} is given twice", "idx")
        seen.add(qid)
        result_key = next((k for k in entry if k.endswith("_result")), None)
        if result_key is None:
            raise at.error("no '*_result' field")
        winner = _pandalm_label(entry[result_key])
        if winner is None:
            loaded.note(entry[result_key])
        reason = raw_text(entry.get(result_key.replace("_result", "_reason")))
        loaded.records.append(
            pair_record(
                run_id="import-pandalm",
                stamp=stamp,
                qid=qid,
                judge=judge,
                shown=_PANDALM_ARMS,
                winner=winner,
                raw=reason,
                status=Status.OK if winner else Status.UNPARSED,
            )
        )


def read_pandalm(source: Path, stamp: str) -> Loaded:
    """The PandaLM test set (three annotators) and its judge files."""
    loaded = Loaded(items=_pandalm_items(source / "testset-v1.json"))
    for path in sorted(source.glob("*-testset-v1.json")):
        _pandalm_judge(path, stamp, loaded)
    if not loaded.records:
        raise DatasetError("no <judge>-testset-v1.json judge file", path=str(source))
    return loaded
