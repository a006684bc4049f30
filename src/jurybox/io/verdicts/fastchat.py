"""FastChat MT-Bench judgments: ``model_judgment/<judge>_pair.jsonl`` and ``<judge>_single.jsonl``.

Pair lines: ``question_id``, ``model_1``, ``model_2``, ``g1_winner`` (model_1 shown first),
``g2_winner`` (the swapped game; FastChat already maps it back to model names), ``judge``
(``[model, prompt]``), ``turn``; a winner is ``model_1`` | ``model_2`` | ``tie`` | ``error``.
Single lines: ``question_id``, ``model``, ``score`` (-1 = the judge's text had no rating),
``judge``, ``turn``; each becomes a rubric-like record with the score as the answer's overall.
Questions and answers are read from ``question.jsonl`` and ``model_answer/<model>.jsonl`` beside
``model_judgment/`` when they are there: the answer files are listed once and looked up by model
name, so a model name never becomes a path (``../x`` or a name too long for the file system).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jurybox.errors import DatasetError
from jurybox.io.input_files import quoted
from jurybox.io.verdicts._common import (
    MISSING,
    At,
    Loaded,
    id_of,
    jsonl_objects,
    nfc,
    pair_record,
    raw_text,
    single_record,
    text_of,
)
from jurybox.records import Item, Status

_Turns = Callable[[Mapping[str, Any], At], list[str]]
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
        self.questions = self._rows(bench / "question.jsonl", "question_id", _question_turns)
        answers = bench / "model_answer"
        self.answer_files = {p.stem: p for p in answers.glob("*.jsonl")} if answers.is_dir() else {}
        self.answers: dict[str, dict[str, list[str]]] = {}

    @staticmethod
    def _rows(path: Path, key: str, turns: _Turns) -> dict[str, list[str]]:
        if not path.is_file():
            return {}
        return {id_of(row, key, at): turns(row, at) for at, row in jsonl_objects(path)}

    def question(self, qid: str, turn: int) -> str:
        return _turn(self.questions.get(qid, []), turn)

    def answer(self, model: str, qid: str, turn: int) -> str:
        if model not in self.answers:
            path = self.answer_files.get(model)
            rows = self._rows(path, "question_id", _answer_turns) if path is not None else {}
            self.answers[model] = rows
        return _turn(self.answers[model].get(qid, []), turn)


def _texts(value: Any, at: At, name: str) -> list[str]:
    """A list of texts (a conversation's turns); null or absent is none."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise at.error("expected a list of texts", name)
    return [nfc(text) for text in value]


def _question_turns(row: Mapping[str, Any], at: At) -> list[str]:
    return _texts(row.get("turns"), at, "turns")


def _answer_turns(row: Mapping[str, Any], at: At) -> list[str]:
    choices = row.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    turns = first.get("turns") if isinstance(first, Mapping) else None
    return _texts(turns, at, "choices.0.turns")


def _turn(turns: list[str], turn: int) -> str:
    return turns[turn - 1] if 0 < turn <= len(turns) else ""


def _judge(row: Mapping[str, Any], at: At) -> tuple[str, str]:
    """``model/prompt`` from FastChat's ``["gpt-4", "pair-v2"]``, and the model alone."""
    judge = row.get("judge")
    if isinstance(judge, list) and judge:
        parts = [text_of({"judge": part}, "judge", at) for part in judge]
        return "/".join(parts), parts[0]
    name = text_of(row, "judge", at, required=False) or at.path.name.rsplit("_", 1)[0]
    return name, name


def _turn_of(row: Mapping[str, Any], at: At) -> int:
    turn = row.get("turn", 1)
    if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
        raise at.error(f"'turn' must be 1 or 2, got {quoted(turn)}", "turn")
    return turn


class _Reader:
    def __init__(self, source: Path, stamp: str) -> None:
        self.stamp = stamp
        self.loaded = Loaded()
        self.items: dict[str, Item] = {}
        base = source.parent if source.is_file() else source
        bench = base.parent if base.name == "model_judgment" else base
        self.texts = _Texts(bench)

    def pair(self, row: Mapping[str, Any], at: At) -> None:
        qid = id_of(row, "question_id", at)
        models = {arm: id_of(row, arm, at) for arm in ("model_1", "model_2")}
        turn = _turn_of(row, at)
        item_id = f"mt_bench/{qid}/turn{turn}/{models['model_1']} vs {models['model_2']}"
        judge, model = _judge(row, at)
        repeat = self.loaded.repeat(item_id, judge)
        for game, shown in _GAMES:
            value = row.get(game, MISSING)
            winner = value if value in ("model_1", "model_2", "tie") else None
            if winner is None:
                self.loaded.note(value)
            self.loaded.records.append(
                pair_record(
                    run_id=f"import-fastchat-{at.path.stem}",
                    stamp=self.stamp,
                    qid=item_id,
                    judge=judge,
                    model=model,
                    shown=shown,
                    winner=winner,
                    status=Status.OK if winner else Status.UNPARSED,
                    raw=raw_text(row.get(f"{game[:2]}_judgment")),
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

    def single(self, row: Mapping[str, Any], at: At) -> None:
        qid = id_of(row, "question_id", at)
        name = id_of(row, "model", at)
        turn = _turn_of(row, at)
        item_id = f"mt_bench/{qid}/turn{turn}"
        judge, model = _judge(row, at)
        value = row.get("score", MISSING)
        score = _score(value)
        if score is None:
            self.loaded.note(value)
        self.loaded.records.append(
            single_record(
                run_id=f"import-fastchat-{at.path.stem}",
                stamp=self.stamp,
                qid=item_id,
                judge=judge,
                model=model,
                arm=name,
                score=score,
                status=Status.OK if score is not None else Status.UNPARSED,
                raw=raw_text(row.get("judgment")),
                repeat=self.loaded.repeat(item_id, judge, name),
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


def read_fastchat(source: Path, stamp: str) -> Loaded:
    """FastChat judgment files (see the module docstring)."""
    reader = _Reader(source, stamp)
    for path in _files(source):
        for at, row in jsonl_objects(path):
            if "model_1" in row:
                reader.pair(row, at)
            elif "model" in row:
                reader.single(row, at)
            else:
                raise at.error(
                    "neither a pair judgment (model_1, model_2, g1_winner, g2_winner) nor a "
                    "single one (model, score)"
                )
    if not reader.loaded.records:
        raise DatasetError("no judgment found", path=str(source))
    reader.loaded.items = list(reader.items.values())
    return reader.loaded
