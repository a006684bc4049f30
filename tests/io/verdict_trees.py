"""Miniature copies of the public verdict releases, built in a test's tmp_path.

Imported by the tests beside it (``tests/io`` has no ``__init__``: a package named ``io`` would
shadow the standard library's).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Three items; the same texts appear in two subsets, so ids must carry the subset.
ROWS = [
    {"input": "Write a haiku.", "output_1": "An old pond.", "output_2": "A poem.", "label": 1},
    {"input": "Add 2 and 2.", "output_1": "5", "output_2": "4", "label": 2},
    {"input": "Name a colour.", "output_1": "Blue", "output_2": "A car", "label": 1},
]


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def vanilla(winners: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """result.json of a pairwise strategy: per item (swap = False, swap = True) winners."""
    return [
        {
            **row,
            "results": [
                {
                    "swap = False": {"completion": ["Output (a)", "stop"], "winner": first},
                    "swap = True": {"completion": ["Output (b)", "stop"], "winner": second},
                }
            ],
        }
        for row, (first, second) in zip(ROWS, winners, strict=True)
    ]


def rating(scores: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """result.json of a ``Rating`` strategy, with upstream's winners (a tie goes to the second)."""
    entries = []
    for row, (s1, s2) in zip(ROWS, scores, strict=True):
        a, b = float(s1), float(s2)
        first = "1" if a > b else "2"
        second = "2" if b > a else "1"
        last = {
            "score_1": [s1, "stop"],
            "score_2": [s2, "stop"],
            "swap = False": {"winner": first},
            "swap = True": {"winner": second},
        }
        entries.append({**row, "results": [last]})
    return entries


def llmbar_tree(root: Path) -> Path:
    """``Dataset/LLMBar/Natural`` (GPT-4: Vanilla, Rating) and ``Dataset/Processed/MT-Bench``."""
    dataset = root / "Dataset"
    natural = dataset / "LLMBar" / "Natural"
    write_json(natural / "dataset.json", ROWS)
    gpt4 = natural / "evaluators" / "GPT-4"
    write_json(gpt4 / "Vanilla" / "result.json", vanilla([("1", "1"), ("2", "1"), (None, None)]))
    write_json(gpt4 / "Rating" / "result.json", rating([("8", "3"), ("6", "6"), ("7", "2")]))
    mt_bench = dataset / "Processed" / "MT-Bench"
    write_json(mt_bench / "dataset.json", ROWS)
    palm = mt_bench / "evaluators" / "PaLM2" / "Vanilla_NoRules"
    write_json(palm / "result.json", vanilla([("1", "2"), ("2", "2"), ("1", "1")]))
    return dataset


def jb_pair(
    pid: str, label: str, decisions: list[str | None], source: str = "livebench-math"
) -> dict[str, Any]:
    """One line of a JudgeBench output file; a None decision is a failed call (null judgment)."""
    judgments = [
        None
        if d is None
        else {"judgment": {"judge_model": "o1-mini", "response": d}, "decision": d}
        for d in decisions
    ]
    return {
        "pair_id": pid,
        "original_id": pid,
        "source": source,
        "question": f"Question {pid}?",
        "response_model": "gpt-4o",
        "response_A": "first answer",
        "response_B": "second answer",
        "label": label,
        "judge_name": "arena_hard",
        "judgments": judgments,
    }


def judgebench_repo(root: Path) -> Path:
    """A JudgeBench checkout: ``data/`` (pairs without verdicts) and ``outputs/`` (one judge)."""
    repo = root / "JudgeBench"
    pairs = [
        jb_pair("p1", "A>B", ["A>B", "B>A"]),  # right in both games
        jb_pair("p2", "B>A", ["A=B", "A>B"]),  # tie, then right after the swap: +1 -> right
        jb_pair("p3", "A>B", [None, "A>B"]),  # failed, then wrong after the swap: -1 -> wrong
        jb_pair("p4", "B>A", ["B>A", "B>A"], source="mmlu-pro-law"),  # +1 -1 = 0 -> wrong
    ]
    data = [{k: v for k, v in p.items() if k not in ("judgments", "judge_name")} for p in pairs]
    write_jsonl(repo / "data" / "dataset=judgebench,split=gpt.jsonl", data)
    name = (
        "dataset=judgebench,response_model=gpt-4o,judge_name=arena_hard,judge_model=o1-mini.jsonl"
    )
    write_jsonl(repo / "outputs" / name, pairs)
    return repo


def alpaca_annotations(path: Path) -> Path:
    """AlpacaEval annotations: two annotators, preferences 1, 2, 1.5, 0 and a weighted 1.8."""
    base = {"generator_1": "text_davinci_003", "generator_2": "my_model", "dataset": "helpful_base"}
    rows = [
        {
            **base,
            "instruction": "Say hi.",
            "output_1": "Hi.",
            "output_2": "Hello!",
            "preference": 2,
        },
        {
            **base,
            "instruction": "Count to 3.",
            "output_1": "1 2 3",
            "output_2": "1, 2",
            "preference": 1,
        },
        {**base, "instruction": "Pick a.", "output_1": "a", "output_2": "A", "preference": 1.5},
        {**base, "instruction": "Pick b.", "output_1": "b", "output_2": "B", "preference": 0},
        {
            **base,
            "instruction": "Say hi.",
            "output_1": "Hi.",
            "output_2": "Hello!",
            "preference": 1.8,
        },
    ]
    for i, row in enumerate(rows):
        row["annotator"] = "alpaca_eval_gpt4" if i < 4 else "human_1"
    return write_json(path, rows)


def fastchat_bench(root: Path) -> Path:
    """``data/mt_bench`` with question.jsonl, model_answer/ and model_judgment/ pair + single."""
    bench = root / "data" / "mt_bench"
    write_jsonl(
        bench / "question.jsonl", [{"question_id": 81, "turns": ["Plan a trip.", "Shorter."]}]
    )
    for model, text in (("vicuna-13b", "Go to Hawaii."), ("llama-13b", "Stay home.")):
        answer = {
            "question_id": 81,
            "model_id": model,
            "choices": [{"index": 0, "turns": [text, "Hi."]}],
        }
        write_jsonl(bench / "model_answer" / f"{model}.jsonl", [answer])
    judge = ["gpt-4", "pair-v2"]
    pairs = [
        {
            "question_id": 81,
            "model_1": "vicuna-13b",
            "model_2": "llama-13b",
            "g1_winner": "model_1",
            "g2_winner": "model_1",
            "judge": judge,
            "turn": 1,
            "g1_judgment": "[[A]]",
            "g2_judgment": "[[B]]",
        },
        {
            "question_id": 81,
            "model_1": "vicuna-13b",
            "model_2": "llama-13b",
            "g1_winner": "tie",
            "g2_winner": "error",
            "judge": ["gpt-4", "pair-v2-multi-turn"],
            "turn": 2,
        },
    ]
    write_jsonl(bench / "model_judgment" / "gpt-4_pair.jsonl", pairs)
    singles = [
        {
            "question_id": 81,
            "model": "vicuna-13b",
            "judge": ["gpt-4", "single-v1"],
            "score": 9,
            "turn": 1,
            "judgment": "Rating: [[9]]",
        },
        {
            "question_id": 81,
            "model": "llama-13b",
            "judge": ["gpt-4", "single-v1"],
            "score": -1,
            "turn": 1,
            "judgment": "no rating",
        },
        {
            "question_id": 81,
            "model": "llama-13b",
            "judge": ["gpt-4", "single-v1"],
            "score": 3,
            "turn": 1,
            "judgment": "Rating: [[3]]",
        },
    ]
    write_jsonl(bench / "model_judgment" / "gpt-4_single.jsonl", singles)
    return bench
