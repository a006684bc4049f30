"""JudgeBench output JSONL: ``outputs/*.jsonl``, one judge per file (see ``io.verdicts``)."""

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
    jsonl_objects,
    pair_record,
    raw_text,
    text_of,
)
from jurybox.records import Item, Status

_JB_ARMS = ("response_A", "response_B")
_WHERE = (
    "JudgeBench verdicts live in the repository's outputs/ folder "
    "(outputs/dataset=judgebench,...,judge_model=....jsonl); data/ holds the pairs without verdicts"
)


def _jb_winner(decision: Any, shown: tuple[str, str]) -> str | None:
    text = str(decision).replace(">>", ">").strip().upper() if decision is not None else ""
    return {"A>B": shown[0], "B>A": shown[1], "A=B": "tie"}.get(text)


def _judge_name(pair: Mapping[str, Any], at: At) -> tuple[str, str | None]:
    judgments = pair["judgments"]
    first = next((j for j in judgments if isinstance(j, Mapping)), {})
    detail = first.get("judgment")
    model = (
        text_of(detail, "judge_model", at, required=False) if isinstance(detail, Mapping) else ""
    )
    name = text_of(pair, "judge_name", at, required=False) or at.path.stem
    return name + (f"/{model}" if model else ""), model or None


def _jb_pair(pair: Mapping[str, Any], qid: str, at: At, stamp: str, loaded: Loaded) -> None:
    judgments = pair.get("judgments")
    if not isinstance(judgments, list) or not judgments:
        raise at.error("'judgments' must be a non-empty list", "judgments")
    judge, model = _judge_name(pair, at)
    for slot, shown in enumerate((_JB_ARMS, _JB_ARMS[::-1])):
        if slot >= len(judgments):
            break
        judgment = judgments[slot]
        raw = None
        if judgment is None:  # JudgeBench's mark of a failed call
            winner, status = None, Status.PROVIDER_ERROR
            loaded.note(None)
        elif not isinstance(judgment, Mapping):
            raise at.error(f"judgment {slot} is not an object", "judgments")
        else:
            winner = _jb_winner(judgment.get("decision"), shown)
            status = Status.OK if winner else Status.UNPARSED
            if winner is None:
                loaded.note(judgment.get("decision"))
            detail = judgment.get("judgment")
            raw = raw_text(detail.get("response")) if isinstance(detail, Mapping) else None
        loaded.records.append(
            pair_record(
                run_id=f"import-judgebench-{at.path.stem}",
                stamp=stamp,
                qid=qid,
                judge=judge,
                shown=shown,
                winner=winner,
                status=status,
                raw=raw,
                model=model,
            )
        )


def _jb_item(pair: Mapping[str, Any], qid: str, at: At) -> Item:
    label = str(pair.get("label", "")).replace(">>", ">").upper()
    gold = {"A>B": _JB_ARMS[0], "B>A": _JB_ARMS[1], "A=B": "tie"}.get(label)
    author = text_of(pair, "response_model", at, required=False)
    return Item(
        id=qid,
        question=text_of(pair, "question", at, required=False),
        responses={arm: text_of(pair, arm, at, required=False) for arm in _JB_ARMS},
        authors={arm: author for arm in _JB_ARMS} if author else {},
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
        seen: set[str] = set()
        for at, pair in jsonl_objects(path):
            qid = id_of(pair, "pair_id", at)
            if qid in seen:  # one judge per file: a pair twice would share its records' keys
                raise at.error(f"pair_id {quoted(qid)} is given twice in this file", "pair_id")
            seen.add(qid)
            if "judgments" not in pair:  # a pair of data/, not a judge's output
                raise at.error(f"no 'judgments': {_WHERE}", "judgments")
            _jb_pair(pair, qid, at, stamp, loaded)
            if qid not in items:
                items[qid] = _jb_item(pair, qid, at)
    if not loaded.records:
        raise DatasetError(f"no JudgeBench pair found: {_WHERE}", path=str(source))
    loaded.items = list(items.values())
    return loaded
