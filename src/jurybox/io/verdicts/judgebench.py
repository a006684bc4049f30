"""JudgeBench output JSONL (see ``jurybox.io.verdicts``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import Loaded, _jsonl_rows, pair_record
from jurybox.records import Item, JudgeRecord, Status

_JB_ARMS = ("response_A", "response_B")


def _jb_winner(decision: Any, shown: tuple[str, str]) -> str | None:
    text = str(decision).replace(">>", ">").strip().upper() if decision is not None else ""
    return {"A>B": shown[0], "B>A": shown[1], "A=B": "tie"}.get(text)


def _jb_pair(pair: Mapping[str, Any], path: Path, line: int, stamp: str) -> list[JudgeRecord]:
    judgments = pair.get("judgments") or []
    first = next((j for j in judgments if isinstance(j, Mapping)), {})
    model = (
        (first.get("judgment") or {}).get("judge_model")
        if isinstance(first.get("judgment"), Mapping)
        else None
    )
    judge = f"{pair.get('judge_name', path.stem)}" + (f"/{model}" if model else "")
    records = []
    for slot, shown in enumerate((_JB_ARMS, _JB_ARMS[::-1])):
        if slot >= len(judgments):
            break
        judgment = judgments[slot]
        if judgment is None:
            winner, status, raw = None, Status.PROVIDER_ERROR, None
        else:
            winner = _jb_winner(judgment.get("decision"), shown)
            status = Status.OK if winner else Status.UNPARSED
            detail = judgment.get("judgment")
            raw = detail.get("response") if isinstance(detail, Mapping) else None
        records.append(
            pair_record(
                run_id=f"import-judgebench-{path.stem}",
                stamp=stamp,
                qid=str(pair["pair_id"]),
                judge=judge,
                shown=shown,
                winner=winner,
                status=status,
                raw=raw,
                model=model,
            )
        )
    return records


def _jb_item(pair: Mapping[str, Any]) -> Item:
    label = str(pair.get("label", "")).replace(">>", ">").upper()
    gold = {"A>B": _JB_ARMS[0], "B>A": _JB_ARMS[1], "A=B": "tie"}.get(label)
    author = pair.get("response_model")
    return Item(
        id=str(pair["pair_id"]),
        question=str(pair.get("question", "")),
        responses={arm: str(pair.get(arm, "")) for arm in _JB_ARMS},
        authors={arm: str(author) for arm in _JB_ARMS} if author else {},
        metadata={"category": pair.get("source"), "source": "judgebench"},
        human={"preferred_arm": gold} if gold else {},
    )


def read_judgebench(source: Path, stamp: str) -> Loaded:
    """JudgeBench output JSONL files (one judge each)."""
    files = [source] if source.is_file() else sorted(source.glob("*.jsonl"))
    records: list[JudgeRecord] = []
    items: dict[str, Item] = {}
    for path in files:
        for line, pair in _jsonl_rows(path):
            if "pair_id" not in pair:
                raise DatasetError("no 'pair_id'", path=str(path), line=line, field="pair_id")
            records.extend(_jb_pair(pair, path, line, stamp))
            items.setdefault(str(pair["pair_id"]), _jb_item(pair))
    if not records:
        raise DatasetError("no JudgeBench pair found", path=str(source))
    return records, list(items.values())
