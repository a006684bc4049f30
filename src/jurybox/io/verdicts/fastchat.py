"""FastChat MT-Bench judgments: ``model_judgment/<judge>_pair.jsonl`` and ``<judge>_single.jsonl``.

Pair lines: ``question_id``, ``model_1``, ``model_2``, ``g1_winner`` (model_1 shown first),
``g2_winner`` (the swapped game; FastChat already maps it back to model names), ``judge``
(``[model, prompt]``), ``turn``; a winner is ``model_1`` | ``model_2`` | ``tie`` | ``error``.
Single lines: ``question_id``, ``model``, ``score`` (-1 = the judge's text had no rating),
``judge``, ``turn``; each becomes a rubric-like record with the score as the answer's overall.
Questions and answers are read from ``question.jsonl`` and ``model_answer/<model>.jsonl`` beside
``model_judgment/`` when they are there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.verdicts._common import (
    MISSING,
    Loaded,
    _jsonl_rows,
    nfc,
    pair_record,
    single_record,
)
from jurybox.records import Item, Status

_GAMES = (("g1_winner", ("model_1", "model_2")), ("g2_winner", ("model_2", "model_1")))


def _files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    folder = source / "model_judgment" if (source / "model_judgment").is_dir() else source
    files = sorted(folder.glob("*_pair.jsonl")) + sorted(folder.glob("*_single.jsonl"))
    if not files:
        raise DatasetError(
            "no FastChat judgment file (expected model_judgment/<judge>_pair.jsonl or "
            "<judge>_single.jsonl, e.g. fastchat/llm_judge/data/mt_bench/model_judgment/)",
            path=str(source),
        )
    return files


class _Texts:
    """Question and answer texts beside ``model_judgment/``, when the folder has them."""

    def __init__(self, bench: Path) -> None:
        self.bench = bench
        self.questions = self._rows(bench / "question.jsonl", "question_id", "turns")
        self.answers: dict[str, dict[str, list[str]]] = {}

    @staticmethod
    def _rows(path: Path, key: str, field: str) -> dict[str, list[str]]:
        if not path.is_file():
            return {}
        return {
            str(row.get(key)): [nfc(t) for t in row.get(field) or []]
            for _, row in _jsonl_rows(path)
        }

    def question(self, qid: str, turn: int) -> str:
        return _turn(self.questions.get(qid, []), turn)

    def answer(self, model: str, qid: str, turn: int) -> str:
        if model not in self.answers:
            path = self.bench / "model_answer" / f"{model}.jsonl"
            rows = _jsonl_rows(path) if path.is_file() else []
            self.answers[model] = {str(r.get("question_id")): _answer_turns(r) for _, r in rows}
        return _turn(self.answers[model].get(qid, []), turn)


def _answer_turns(row: Mapping[str, Any]) -> list[str]:
    choices = row.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    turns = first.get("turns") if isinstance(first, Mapping) else None
    return [nfc(t) for t in turns] if isinstance(turns, list) else []


def _turn(turns: list[str], turn: int) -> str:
    return turns[turn - 1] if 0 < turn <= len(turns) else ""


def _required(row: Mapping[str, Any], name: str, path: Path, line: int) -> Any:
    if row.get(name) in (None, ""):
        raise DatasetError(f"no '{name}'", path=str(path), line=line, field=name)
    return row[name]


def _judge(row: Mapping[str, Any], path: Path) -> tuple[str, str]:
    """``model/prompt`` from FastChat's ``["gpt-4", "pair-v2"]``, and the model alone."""
    judge = row.get("judge")
    if isinstance(judge, list) and judge:
        return "/".join(str(part) for part in judge), str(judge[0])
    name = str(judge) if judge else path.name.rsplit("_", 1)[0]
    return name, name


def _turn_of(row: Mapping[str, Any], path: Path, line: int) -> int:
    try:
        return int(row.get("turn", 1))
    except (TypeError, ValueError):
        raise DatasetError(
            "'turn' must be 1 or 2", path=str(path), line=line, field="turn"
        ) from None


class _Reader:
    def __init__(self, source: Path, stamp: str) -> None:
        self.stamp = stamp
        self.loaded = Loaded()
        self.items: dict[str, Item] = {}
        base = source.parent if source.is_file() else source
        bench = base.parent if base.name == "model_judgment" else base
        self.texts = _Texts(bench)
        self.seen: dict[tuple[str, ...], int] = {}

    def repeat(self, *key: str) -> int:
        """A judgment already seen (a re-run appended to the file) is a repeat, not a clash."""
        self.seen[key] = self.seen.get(key, -1) + 1
        return self.seen[key]

    def pair(self, row: Mapping[str, Any], path: Path, line: int) -> None:
        qid = str(_required(row, "question_id", path, line))
        models = {arm: str(_required(row, arm, path, line)) for arm in ("model_1", "model_2")}
        turn = _turn_of(row, path, line)
        item_id = f"mt_bench/{qid}/turn{turn}/{models['model_1']} vs {models['model_2']}"
        judge, model = _judge(row, path)
        repeat = self.repeat(item_id, judge)
        for game, shown in _GAMES:
            value = row.get(game, MISSING)
            winner = value if value in ("model_1", "model_2", "tie") else None
            if winner is None:
                self.loaded.note(value)
            self.loaded.records.append(
                pair_record(
                    run_id=f"import-fastchat-{path.stem}",
                    stamp=self.stamp,
                    qid=item_id,
                    judge=judge,
                    model=model,
                    shown=shown,
                    winner=winner,
                    status=Status.OK if winner else Status.UNPARSED,
                    raw=_text(row.get(f"{game[:2]}_judgment")),
                    repeat=repeat,
                )
            )
        if item_id not in self.items:
            self.items[item_id] = Item(
                id=item_id,
                question=self.texts.question(qid, turn),
                responses={arm: self.texts.answer(name, qid, turn) for arm, name in models.items()},
                authors=models,
                metadata={"source": "fastchat", "question_id": qid, "turn": turn},
            )

    def single(self, row: Mapping[str, Any], path: Path, line: int) -> None:
        qid = str(_required(row, "question_id", path, line))
        name = str(_required(row, "model", path, line))
        turn = _turn_of(row, path, line)
        item_id = f"mt_bench/{qid}/turn{turn}"
        judge, model = _judge(row, path)
        value = row.get("score", MISSING)
        score = _score(value)
        if score is None:
            self.loaded.note(value)
        self.loaded.records.append(
            single_record(
                run_id=f"import-fastchat-{path.stem}",
                stamp=self.stamp,
                qid=item_id,
                judge=judge,
                model=model,
                arm=name,
                score=score,
                status=Status.OK if score is not None else Status.UNPARSED,
                raw=_text(row.get("judgment")),
                repeat=self.repeat(item_id, judge, name),
            )
        )
        item = self.items.get(item_id) or Item(
            id=item_id,
            question=self.texts.question(qid, turn),
            responses={},
            metadata={"source": "fastchat", "question_id": qid, "turn": turn},
        )
        responses = {**item.responses, name: self.texts.answer(name, qid, turn)}
        authors = {**item.authors, name: name}
        self.items[item_id] = Item(
            id=item_id,
            question=item.question,
            responses=responses,
            authors=authors,
            metadata=item.metadata,
        )


def _score(value: Any) -> float | None:
    """FastChat's rating, 1 to 10; -1 (its mark of a missing rating) and others are None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value >= 0 else None


def _text(value: Any) -> str | None:
    return None if value is None else (value if isinstance(value, str) else json.dumps(value))


def read_fastchat(source: Path, stamp: str) -> Loaded:
    """FastChat judgment files (see the module docstring)."""
    reader = _Reader(source, stamp)
    for path in _files(source):
        for line, row in _jsonl_rows(path):
            if "model_1" in row:
                reader.pair(row, path, line)
            elif "model" in row:
                reader.single(row, path, line)
            else:
                raise DatasetError(
                    "neither a pair judgment (model_1, model_2, g1_winner, g2_winner) nor a "
                    "single one (model, score)",
                    path=str(path),
                    line=line,
                )
    if not reader.loaded.records:
        raise DatasetError("no judgment found", path=str(source))
    reader.loaded.items = list(reader.items.values())
    return reader.loaded
