"""Human labels that match nothing are reported and excluded; judge answers have a size cap."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from rich.console import Console

from jurybox.app.analyze import analyze_to_dir
from jurybox.io.judgments import read_records
from jurybox.io.label_screen import screen_labels
from jurybox.pipeline import run_async
from jurybox.pipeline.answer_cap import cap_answer
from jurybox.pipeline.runner import Runtime
from jurybox.providers.fake import FakeProvider
from jurybox.records import Completion, Status
from pipeline.helpers import make_config, write_dataset

ARMS = ("control", "treatment")


def test_screen_labels_excludes_unknown_ids_and_values() -> None:
    labels = {
        "q1": {"preferred_arm": "control"},
        "q2": {"preferred_arm": "banana"},
        "q3": {"verdict": {"control": "Pass", "mystery": "Fail"}},
        "q9": {"preferred_arm": "tie"},
    }
    screen = screen_labels(labels, {"q1", "q2", "q3"}, ARMS)
    assert list(screen.labels) == ["q1"]
    assert screen.unknown_ids == ("q9",)
    assert len(screen.bad_values) == 2 and "'banana'" in screen.bad_values[0]
    assert screen.excluded == 3


def test_analyze_reports_and_excludes_bad_labels(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 4)
    out = tmp_path / "run"
    config = make_config(dataset, out, pipeline={"test_retest_count": 0})
    asyncio.run(run_async(config, output_dir=out, runtime=Runtime({"j1": FakeProvider()})))
    human = tmp_path / "labels.jsonl"
    rows = [
        {"query_id": "q000", "preferred_arm": "control"},
        {"query_id": "q001", "preferred_arm": "banana"},
        {"query_id": "nope", "preferred_arm": "treatment"},
    ]
    human.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    screen = io.StringIO()
    analyze_to_dir(
        out,
        human=human,
        dataset=dataset,
        out_dir=tmp_path / "report",
        console=Console(file=screen, width=400),
        plots=False,
    )
    text = screen.getvalue()
    assert "excluded 1 with a query id not in the judgments (nope)" in text
    assert "q001: preferred_arm 'banana' is not an arm of the run" in text
    report = json.loads((tmp_path / "report" / "analysis_report.json").read_text("utf-8"))
    assert report["summary"]["input_screen"] == {
        "duplicates_dropped": 0,
        "labels_unknown_ids": 1,
        "labels_bad_values": 1,
    }
    assert report["summary"]["human_labels"]["preferences"] == 1  # only q000's label counted


def test_cap_answer_cuts_on_a_character_boundary() -> None:
    completion = Completion(text="é" * 10, model="m", structured={"a": 1})
    same, size = cap_answer(completion, 20)
    assert same is completion and size is None
    cut, size = cap_answer(completion, 5)
    assert cut.text == "éé" and size == 20 and cut.structured is None


def test_a_huge_answer_is_stored_cut_and_flagged(tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "items.jsonl", 2)
    out = tmp_path / "run"
    config = make_config(dataset, out, pipeline={"test_retest_count": 0, "max_answer_bytes": 1000})
    huge = json.dumps({"verdict": "A", "confidence": "high", "reasoning": "x" * 5_000_000})
    provider = FakeProvider("fake-model", replies=[huge])
    asyncio.run(run_async(config, output_dir=out, runtime=Runtime({"j1": provider})))
    records = list(read_records(out))
    assert records and all(r.answer_cut_bytes == len(huge) for r in records)
    assert all(len((r.raw_response or "").encode()) <= 1000 for r in records)
    assert all(r.status == Status.UNPARSED for r in records)  # the cut answer is not valid JSON
    assert (out / "judgments.jsonl").stat().st_size < 20_000
