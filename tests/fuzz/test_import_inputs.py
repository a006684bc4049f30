"""Fuzz test of every importer, through ``jurybox import KIND`` (issue 31's check; the rules are
in ``fuzz.harness``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fuzz.harness import (
    DEEP,
    HUGE,
    Accepted,
    Expect,
    Refused,
    cli,
    jsonl,
    judge,
)

# --- the importers -------------------------------------------------------------------------------


def _pandalm(entries: list[Any] | bytes) -> dict[str, bytes]:
    testset = entries if isinstance(entries, bytes) else json.dumps(entries, indent=1).encode()
    verdicts = [{"idx": i, "gpt_result": "1"} for i in range(2)]
    return {"testset-v1.json": testset, "gpt-testset-v1.json": json.dumps(verdicts).encode()}


PANDA = [
    {
        "idx": i,
        "instruction": f"q{i}",
        "input": "",
        "response1": "a",
        "response2": "b",
        "annotator1": 1,
    }
    for i in range(2)
]
JB = [
    {"pair_id": f"p{i}", "question": "q", "response_A": "a", "response_B": "b", "label": "A>B",
     "judge_name": "j", "judgments": [{"decision": "A>B"}, {"decision": "B>A"}]}
    for i in range(2)
]  # fmt: skip
LLMBAR = [{"input": f"q{i}", "output_1": "a", "output_2": "b", "label": 1} for i in range(2)]
_WINNERS = {"swap = False": {"winner": "1"}, "swap = True": {"winner": "2"}}


def _llmbar(dataset: bytes | None = None, result: bytes | None = None) -> dict[str, bytes]:
    """A flat LLMBar subset: dataset.json and one judge's result.json (two items)."""
    verdicts = [{**row, "results": [_WINNERS]} for row in LLMBAR]
    return {
        "dataset.json": dataset or json.dumps(LLMBAR, indent=1).encode(),
        "verdicts/GPT-4/result.json": result or json.dumps(verdicts, indent=1).encode(),
    }


GENERIC_MAP = ("--map", "query_id=q", "--map", "judge=j", "--map", "preferred=p")


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "out" / "judgments.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _imported(
    count: int, check: Callable[[list[dict[str, Any]]], bool] = lambda _: True
) -> Accepted:
    def verify(tmp_path: Path) -> None:
        records = _records(tmp_path)
        assert len(records) == count and check(records), records

    return Accepted(verify)


# kind -> (files under the source folder, the file the error names, expectation, extra args)
IMPORTS: dict[str, tuple[str, dict[str, bytes], str, Expect, tuple[str, ...]]] = {
    "pandalm_clean": ("pandalm", _pandalm(PANDA), "testset-v1.json", _imported(2), ()),
    "pandalm_truncated": (
        "pandalm",
        _pandalm(json.dumps(PANDA, indent=1).encode()[:-20]),
        "testset-v1.json",
        Refused(16, None, "invalid JSON"),
        (),
    ),
    "pandalm_null_idx": (
        "pandalm",
        _pandalm([PANDA[0], {**PANDA[1], "idx": None}]),
        "testset-v1.json",
        Refused(10, "idx", "null"),
        (),
    ),
    "pandalm_list_instruction": (
        "pandalm",
        _pandalm([PANDA[0], {**PANDA[1], "instruction": ["q"]}]),
        "testset-v1.json",
        Refused(10, "instruction", "a list"),
        (),
    ),
    "pandalm_duplicate_idx": (
        "pandalm",
        _pandalm([PANDA[0], PANDA[0]]),
        "testset-v1.json",
        Refused(10, "idx", "twice"),
        (),
    ),
    "pandalm_nan_annotator": (
        "pandalm",
        _pandalm(json.dumps(PANDA).replace('"annotator1": 1', '"annotator1": NaN', 1).encode()),
        "testset-v1.json",
        Refused(1, None, "NaN"),
        (),
    ),
    "pandalm_huge_idx": (
        "pandalm",
        _pandalm(json.dumps(PANDA).replace('"idx": 1', '"idx": ' + HUGE).encode()),
        "testset-v1.json",
        Refused(1, None, "5,000 characters"),
        (),
    ),
    "pandalm_deep": (
        "pandalm",
        _pandalm(json.dumps(PANDA).replace('"input": ""', '"input": ' + DEEP, 1).encode()),
        "testset-v1.json",
        Refused(1, None, "nested deeper"),
        (),
    ),
    "pandalm_not_utf8": (
        "pandalm",
        _pandalm(
            json.dumps(PANDA, indent=1)
            .replace('"q1"', '"q\\u00e9"')
            .encode()
            .replace(b"q\\u00e9", b"q\xe9")
        ),
        "testset-v1.json",
        Refused(12, None, "invalid UTF-8"),
        (),
    ),
    "pandalm_bom": (
        "pandalm",
        _pandalm(b"\xef\xbb\xbf" + json.dumps(PANDA).encode()),
        "testset-v1.json",
        _imported(2),
        (),
    ),
    "llmbar_clean": ("llmbar", _llmbar(), "dataset.json", _imported(4), ()),
    "llmbar_bom_crlf": (
        "llmbar",
        _llmbar(b"\xef\xbb\xbf" + json.dumps(LLMBAR, indent=1).encode().replace(b"\n", b"\r\n")),
        "dataset.json",
        _imported(4),
        (),
    ),
    "llmbar_label_is_a_list": (
        "llmbar",
        _llmbar(json.dumps([LLMBAR[0], {**LLMBAR[1], "label": [1]}], indent=1).encode()),
        "dataset.json",
        Refused(8, "label", "must be 1 or 2"),
        (),
    ),
    "llmbar_nan_label": (
        "llmbar",
        _llmbar(json.dumps(LLMBAR).replace('"label": 1', '"label": NaN', 1).encode()),
        "dataset.json",
        Refused(1, None, "NaN"),
        (),
    ),
    "llmbar_result_deep": (
        "llmbar",
        _llmbar(result=("[" + DEEP + "]").encode()),
        "verdicts/GPT-4/result.json",
        Refused(1, None, "nested deeper"),
        (),
    ),
    "llmbar_result_truncated": (
        "llmbar",
        _llmbar(result=json.dumps([{**LLMBAR[0], "results": [_WINNERS]}], indent=1).encode()[:-30]),
        "verdicts/GPT-4/result.json",
        Refused(13, None, "Unterminated string"),
        (),
    ),
    "judgebench_clean": ("judgebench", {"x.jsonl": jsonl(JB)}, "x.jsonl", _imported(4), ()),
    "judgebench_null_pair_id": (
        "judgebench",
        {"x.jsonl": jsonl([JB[0], {**JB[1], "pair_id": None}])},
        "x.jsonl",
        Refused(2, "pair_id", "null"),
        (),
    ),
    "judgebench_duplicate": (
        "judgebench",
        {"x.jsonl": jsonl([JB[0], JB[0]])},
        "x.jsonl",
        Refused(2, "pair_id", "twice"),
        (),
    ),
    "judgebench_crlf_bom": (
        "judgebench",
        {"x.jsonl": b"\xef\xbb\xbf" + jsonl(JB).replace(b"\n", b"\r\n")},
        "x.jsonl",
        _imported(4),
        (),
    ),
    "judgebench_lone_surrogate": (
        "judgebench",
        {"x.jsonl": jsonl([JB[0], {**JB[1], "question": "q\ud800"}])},
        "x.jsonl",
        _imported(4, lambda records: all(r["text_replaced"] == 0 for r in records)),
        (),
    ),
    "judgebench_truncated": (
        "judgebench",
        {"x.jsonl": jsonl(JB)[:-15]},
        "x.jsonl",
        Refused(2, None, "invalid JSON"),
        (),
    ),
    "alpacaeval_nan_preference": (
        "alpacaeval",
        {"a.json": b'[{"instruction": "q", "output_1": "a", "output_2": "b", "preference": NaN}]'},
        "a.json",
        Refused(1, None, "NaN"),
        (),
    ),
    "alpacaeval_list_output": (
        "alpacaeval",
        {
            "a.json": b'[\n{"instruction": "q", "output_1": ["a"], "output_2": "b", '
            b'"preference": 1}]'
        },
        "a.json",
        Refused(2, "output_1", "a list"),
        (),
    ),
    "fastchat_null_question_id": (
        "fastchat",
        {
            "model_judgment/gpt-4_pair.jsonl": jsonl(
                [
                    {
                        "question_id": None,
                        "model_1": "a",
                        "model_2": "b",
                        "g1_winner": "tie",
                        "g2_winner": "tie",
                    }
                ]
            )
        },
        "model_judgment/gpt-4_pair.jsonl",
        Refused(1, "question_id", "null"),
        (),
    ),
    "fastchat_float_turn": (
        "fastchat",
        {
            "model_judgment/gpt-4_pair.jsonl": jsonl(
                [
                    {
                        "question_id": 1,
                        "model_1": "a",
                        "model_2": "b",
                        "g1_winner": "tie",
                        "turn": 1.5,
                    }
                ]
            )
        },
        "model_judgment/gpt-4_pair.jsonl",
        Refused(1, "turn"),
        (),
    ),
    "fastchat_long_model_name": (
        "fastchat",
        {
            "model_judgment/gpt-4_pair.jsonl": jsonl(
                [
                    {
                        "question_id": 1,
                        "model_1": "m" * 5000,
                        "model_2": "../b",
                        "g1_winner": "model_1",
                        "g2_winner": "model_1",
                    }
                ]
            )
        },
        "model_judgment/gpt-4_pair.jsonl",
        _imported(2),
        (),
    ),
    "generic_csv_clean": (
        "generic",
        {"v.csv": b"q,j,p\n1,j,A\n2,j,B\n"},
        "v.csv",
        _imported(2),
        GENERIC_MAP,
    ),
    "generic_csv_ragged": (
        "generic",
        {"v.csv": b"q,j,p\n1,j,A\n2,j\n"},
        "v.csv",
        Refused(3, None, "2 cells"),
        GENERIC_MAP,
    ),
    "generic_csv_duplicate_header": (
        "generic",
        {"v.csv": b"q,q,j,p\n1,2,j,A\n"},
        "v.csv",
        Refused(1, None, "duplicate 'q'"),
        GENERIC_MAP,
    ),
    "generic_csv_not_utf8": (
        "generic",
        {"v.csv": b"q,j,p\n1,j\xff,A\n"},
        "v.csv",
        Refused(2, None, "invalid UTF-8"),
        GENERIC_MAP,
    ),
    "generic_csv_empty_id": (
        "generic",
        {"v.csv": b"q,j,p\n1,j,A\n,j,B\n"},
        "v.csv",
        Refused(3, "q", "empty text"),
        GENERIC_MAP,
    ),
    "generic_csv_bom_crlf": (
        "generic",
        {"v.csv": b"\xef\xbb\xbfq,j,p\r\n1,j,A\r\n2,j,B\r\n"},
        "v.csv",
        _imported(2),
        GENERIC_MAP,
    ),
    "generic_jsonl_null_id": (
        "generic",
        {"v.jsonl": jsonl([{"q": "1", "j": "j", "p": "A"}, {"q": None, "j": "j", "p": "A"}])},
        "v.jsonl",
        Refused(2, "q", "null"),
        GENERIC_MAP,
    ),
    "generic_jsonl_repeat": (
        "generic",
        {"v.jsonl": jsonl([{"q": "1", "j": "j", "p": "A"}, {"q": "1", "j": "j", "p": "B"}])},
        "v.jsonl",
        _imported(2, lambda records: [r["repeat"] for r in records] == [0, 1]),  # a repeat
        GENERIC_MAP,
    ),
}


@pytest.mark.parametrize("name", list(IMPORTS))
def test_the_importers(tmp_path: Path, name: str) -> None:
    kind, files, named, expect, extra = IMPORTS[name]
    source = tmp_path / "source"
    for relative, content in files.items():
        (source / relative).parent.mkdir(parents=True, exist_ok=True)
        (source / relative).write_bytes(content)
    target = source / named if kind in ("generic", "judgebench") else source
    result = cli("import", kind, target, "--out", tmp_path / "out" / "judgments.jsonl", *extra)
    judge(expect, result, source / named, tmp_path)
