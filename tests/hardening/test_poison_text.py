"""Lone surrogates never kill a run: replaced by U+FFFD, counted, flagged on the record."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from contextlib import closing
from pathlib import Path

import pytest
from rich.console import Console

from jurybox.app.analyze import analyze_to_dir
from jurybox.io.datasets import load_dataset
from jurybox.io.judgments import JUDGMENTS_FILE, read_records
from jurybox.io.text import REPLACEMENT, clean_text, clean_value
from jurybox.io.verdicts import import_verdicts, load_imported
from jurybox.pipeline import run_async
from jurybox.pipeline.cache import ResponseCache
from jurybox.pipeline.runner import Runtime
from jurybox.providers.fake import FakeProvider
from jurybox.records import Completion
from pipeline.helpers import make_config

from .test_run_lock import llmbar_folder

# The JSON text a judge sends: an *escaped* lone surrogate, which json.loads turns into one.
POISON_ANSWER = '{"verdict": "A", "confidence": "high", "reasoning": "\\ud800"}'


def _poison_dataset(path: Path, n: int = 3) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "responses": {"control": f"answer {i}", "treatment": f"other {i}"},
        }
        for i in range(n)
    ]
    rows[0]["question"] = "Which is better \ud800?"
    rows[1]["responses"]["control"] = "lone \udfff low half"  # type: ignore[index]
    rows[2]["id"] = "q\udc802"  # even an id: it must stay one stable key
    # ensure_ascii escapes the surrogates, as any JSON writer in the wild would
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_clean_text_replaces_and_counts_only_what_utf8_cannot_encode() -> None:
    assert clean_text("plain") == ("plain", 0)
    assert clean_text("é \U0001f600") == ("é \U0001f600", 0)
    assert clean_text("a\ud800b\udfff") == (f"a{REPLACEMENT}b{REPLACEMENT}", 2)
    value, count = clean_value({"k\ud800": ["x", "\udc00", 3], "n": None})
    assert value == {f"k{REPLACEMENT}": ["x", REPLACEMENT, 3], "n": None} and count == 2


def test_a_poison_dataset_loads_with_the_text_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        items = load_dataset(_poison_dataset(tmp_path / "items.jsonl"))
    assert items[0].question == f"Which is better {REPLACEMENT}?"
    assert items[2].id == f"q{REPLACEMENT}2"
    assert "3 unencodable code point(s)" in caplog.text


def test_a_poison_answer_and_dataset_run_resume_and_analyse(tmp_path: Path) -> None:
    dataset = _poison_dataset(tmp_path / "items.jsonl")
    out = tmp_path / "out"
    config = make_config(dataset, out, pipeline={"test_retest_count": 0})
    judge = FakeProvider("fake-model", replies=[POISON_ANSWER])
    summary = asyncio.run(run_async(config, output_dir=out, runtime=Runtime({"j1": judge})))

    records = list(read_records(out / JUDGMENTS_FILE))
    assert summary.units_total == len(records) == 6
    assert {r.status.value for r in records} == {"ok"}
    assert all(r.preference == "A" and r.text_replaced >= 1 for r in records)
    # The raw text keeps the judge's escape verbatim; the parsed reasoning is what was replaced.
    assert all(r.raw_response == POISON_ANSWER for r in records)
    assert all(r.preference_reasoning == REPLACEMENT for r in records)
    assert {r.query_id for r in records} == {"q0", "q1", f"q{REPLACEMENT}2"}
    # The cache kept the (cleaned) answers; a resume has nothing left to do.
    with closing(ResponseCache(out / "cache.sqlite")) as cache:
        assert len(cache) > 0
    again = FakeProvider("fake-model", replies=[POISON_ANSWER])
    resumed = asyncio.run(
        run_async(config, output_dir=out, resume=True, runtime=Runtime({"j1": again}))
    )
    assert resumed.units_run == 0 and again.calls == 0
    assert len(list(read_records(out))) == 6
    _analyse(out, dataset, tmp_path / "report")


def _analyse(judgments: Path, dataset: Path | None, out_dir: Path) -> None:
    """The whole ``jurybox analyze`` use case; every report file is written and is UTF-8."""
    quiet = Console(file=io.StringIO())
    paths = analyze_to_dir(
        judgments, human=None, dataset=dataset, out_dir=out_dir, console=quiet, plots=False
    )
    written = [path for path in out_dir.rglob("*") if path.is_file()]
    assert paths is not None and written
    for path in written:
        path.read_bytes().decode("utf-8")  # raises if anything unencodable slipped through


def test_the_cache_stores_a_poison_completion(tmp_path: Path) -> None:
    completion = Completion(text="x\ud800", model="m", structured={"reasoning": "\udfff"})
    with closing(ResponseCache(tmp_path / "cache.sqlite")) as cache:
        cache.put("k", completion)
        stored = cache.get("k")
    assert stored is not None
    assert stored.text == f"x{REPLACEMENT}"
    assert stored.structured == {"reasoning": REPLACEMENT}


def test_the_llmbar_importer_handles_poison_text(tmp_path: Path) -> None:
    folder = llmbar_folder(tmp_path / "bar", ["fine", "bad \ud800 text", "ok"])
    out = tmp_path / "imported.jsonl"
    assert import_verdicts("llmbar", folder, out) == 6
    records, items = load_imported(out)
    assert len(records) == 6 and len(items) == 3
    assert items[1].responses["output_1"] == f"bad {REPLACEMENT} text"
    _analyse(out, None, tmp_path / "report")
