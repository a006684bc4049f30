"""JudgeBench output JSONL: ``outputs/*.jsonl``, one judge per file (see ``io.verdicts``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import Loaded, _jsonl_rows, nfc, pair_record
from jurybox.records import Item, Status

_JB_ARMS = ("response_A", "response_B")
_WHERE = (
    "JudgeBench verdicts live in the repository's outputs/ folder "
    "(outputs/dataset=judgebench,...,judge_model=....jsonl); data/ holds the pairs without verdicts"
)


def _jb_winner(decision: Any, shown: tuple[str, str]) -> str | None:
    text = str(decision).replace(">>", ">").strip().upper() if decision is not None else ""
    return {"A>B": shown[0], "B>A": shown[1], "A=B": "tie"}.get(text)


def _judge_name(pair: Mapping[str, Any], path: Path) -> tuple[str, str | None]:
    judgments = pair.get("judgments")
    first = next((j for j in judgments if isinstance(j, Mapping)), {}) if judgments else {}
    detail = first.get("judgment")
    model = detail.get("judge_model") if isinstance(detail, Mapping) else None
    model = None if model is None else str(model)
    return f"{pair.get('judge_name', path.stem)}" + (f"/{model}" if model else ""), model


def _jb_pair(pair: Mapping[str, Any], path: Path, line: int, stamp: str, loaded: Loaded) -> None:
    judgments = pair.get("judgments")
    if not isinstance(judgments, list) or not judgments:
        raise DatasetError("'judgments' must be a non-empty list", path=str(path), line=line)
    judge, model = _judge_name(pair, path)
    for slot, shown in enumerate((_JB_ARMS, _JB_ARMS[::-1])):
        if slot >= len(judgments):
            break
        judgment = judgments[slot]
        raw = None
        if judgment is None:  # JudgeBench's mark of a failed call
            winner, status = None, Status.PROVIDER_ERROR
            loaded.note(None)
        elif not isinstance(judgment, Mapping):
            raise DatasetError(
                f"judgment {slot} is not an object", path=str(path), line=line, field="judgments"
            )
        else:
            winner = _jb_winner(judgment.get("decision"), shown)
            status = Status.OK if winner else Status.UNPARSED
            if winner is None:
                loaded.note(judgment.get("decision"))
            detail = judgment.get("judgment")
            raw = detail.get("response") if isinstance(detail, Mapping) else None
        loaded.records.append(
            pair_record(
                run_id=f"import-judgebench-{path.stem}",
                stamp=stamp,
                qid=str(pair["pair_id"]),
                judge=judge,
                shown=shown,
                winner=winner,
                status=status,
                raw=None if raw is None else str(raw),
                model=model,
            )
        )


def _jb_item(pair: Mapping[str, Any]) -> Item:
    label = str(pair.get("label", "")).replace(">>", ">").upper()
    gold = {"A>B": _JB_ARMS[0], "B>A": _JB_ARMS[1], "A=B": "tie"}.get(label)
    author = pair.get("response_model")
    return Item(
        id=str(pair["pair_id"]),
        question=nfc(pair.get("question", "")),
        responses={arm: nfc(pair.get(arm, "")) for arm in _JB_ARMS},
        authors={arm: str(author) for arm in _JB_ARMS} if author else {},
        metadata={"category": pair.get("source"), "source": "judgebench"},
        human={"preferred_arm": gold} if gold else {},
    )


def _files(source: Path) -> list[Path]:
    """The JSONL files to read: ``source`` itself or the ``*.jsonl`` of a folder."""
    if source.is_file():
        return [source]
    files = sorted(source.glob("*.jsonl"))
    if not files and (source / "outputs").is_dir():  # the repository root: name the folder
        raise DatasetError(
            f"no JSONL here; {_WHERE}: import {source / 'outputs'}", path=str(source)
        )
    return files


def read_judgebench(source: Path, stamp: str) -> Loaded:
    """JudgeBench output JSONL files (one judge each)."""
    loaded = Loaded()
    items: dict[str, Item] = {}
    for path in _files(source):
        for line, pair in _jsonl_rows(path):
            if "pair_id" not in pair:
                raise DatasetError("no 'pair_id'", path=str(path), line=line, field="pair_id")
            if "judgments" not in pair:  # a pair of data/, not a judge's output
                raise DatasetError(f"no 'judgments': {_WHERE}", path=str(path), line=line)
            _jb_pair(pair, path, line, stamp, loaded)
            items.setdefault(str(pair["pair_id"]), _jb_item(pair))
    if not loaded.records:
        raise DatasetError(f"no JudgeBench pair found: {_WHERE}", path=str(source))
    loaded.items = list(items.values())
    return loaded
