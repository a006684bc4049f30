"""PandaLM: ``testset-v1.json`` + ``<judge>-testset-v1.json`` (see ``jurybox.io.verdicts``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import Loaded, _field, _load_json, list_of, nfc, pair_record
from jurybox.records import Item, Status

_PANDALM_ARMS = ("response1", "response2")


def _pandalm_label(value: Any) -> str | None:
    text = str(value).strip().lower()
    return {"1": "response1", "2": "response2", "0": "tie", "tie": "tie"}.get(text)


def _pandalm_items(path: Path) -> list[Item]:
    items = []
    for i, entry in enumerate(list_of(_load_json(path), path, "testset")):
        idx = _field(entry, "idx", path, i)
        authors = str(entry.get("cmp_key", "")).split("_")
        question = nfc(_field(entry, "instruction", path, i))
        if entry.get("input"):
            question += "\n\n" + nfc(entry["input"])
        annotators = {k: _pandalm_label(v) for k, v in entry.items() if k.startswith("annotator")}
        items.append(
            Item(
                id=f"pandalm/{idx}",
                question=question,
                responses={arm: nfc(_field(entry, arm, path, i)) for arm in _PANDALM_ARMS},
                authors=dict(zip(_PANDALM_ARMS, authors, strict=True)) if len(authors) == 2 else {},
                metadata={"category": entry.get("motivation_app"), "source": "pandalm"},
                human={"annotators": annotators},
            )
        )
    return items


def _pandalm_judge(path: Path, stamp: str, loaded: Loaded) -> None:
    judge = path.name.removesuffix("-testset-v1.json")
    for i, entry in enumerate(list_of(_load_json(path), path, "verdicts")):
        _field(entry, "idx", path, i)
        result_key = next((k for k in entry if k.endswith("_result")), None)
        if result_key is None:
            raise DatasetError(f"entry {i} has no '*_result' field", path=str(path))
        winner = _pandalm_label(entry[result_key])
        if winner is None:
            loaded.note(entry[result_key])
        reason_key = result_key.replace("_result", "_reason")
        reason = entry.get(reason_key)
        loaded.records.append(
            pair_record(
                run_id="import-pandalm",
                stamp=stamp,
                qid=f"pandalm/{_field(entry, 'idx', path, i)}",
                judge=judge,
                shown=_PANDALM_ARMS,
                winner=winner,
                raw=None if reason is None else str(reason),
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
