"""Record keys cannot collide; old (version-1) files are migrated on read; analysis reads one
record per key and says how many duplicates it dropped."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from rich.console import Console

from jurybox.app.analyze import analyze_to_dir
from jurybox.config import RunConfig
from jurybox.io.judgments import JUDGMENTS_FILE, read_records
from jurybox.io.record_table import read_judgments
from jurybox.pipeline import run_async
from jurybox.pipeline.runner import Runtime
from jurybox.providers.base import Provider
from jurybox.providers.fake import FakeProvider
from jurybox.records import Status, WorkUnit, ranking_ordering, unit_key
from pipeline.helpers import fake_judge, make_config, record

from .helpers import lines


def _legacy_key(data: dict[str, object]) -> str:
    """How version 1 built keys: the parts joined by "|", nothing escaped."""
    parts = [data["query_id"], data["judge_name"], data["presentation_order"], f"r{data['repeat']}"]
    if data.get("criterion") is not None:
        parts.append(f"c:{data['criterion']}")
    if data.get("retest"):
        parts.append("retest")
    return "|".join(map(str, parts))


def test_keys_of_different_tuples_differ() -> None:
    one = WorkUnit("x|j", "k", "control_first", ("control", "treatment"))
    two = WorkUnit("x", "j|k", "control_first", ("control", "treatment"))
    assert one.key != two.key
    assert unit_key("a\\", "|b", "o", 0) != unit_key("a\\|", "b", "o", 0)
    assert unit_key("q1", "j1", "single", 0, criterion="c") == "q1|j1|single|r0|c:c"


def _colliding_run(tmp_path: Path) -> tuple[Path, RunConfig]:
    dataset = tmp_path / "items.jsonl"
    rows = [
        {"id": item, "question": f"Q {item}?", "responses": {"control": "a", "treatment": "b"}}
        for item in ("x|j", "x")
    ]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out"
    judges = {"k": fake_judge(), "j|k": fake_judge()}
    config = make_config(dataset, out, judges=judges, pipeline={"test_retest_count": 0})
    return out, config


def _providers() -> dict[str, Provider]:
    return {"k": FakeProvider("fake-model"), "j|k": FakeProvider("fake-model")}


def _calls(providers: dict[str, Provider]) -> int:
    return sum(p.calls for p in providers.values() if isinstance(p, FakeProvider))


def test_a_finished_run_with_colliding_legacy_keys_resumes_without_losing_records(
    tmp_path: Path,
) -> None:
    out, config = _colliding_run(tmp_path)
    first = asyncio.run(run_async(config, output_dir=out, runtime=Runtime(_providers())))
    assert first.units_total == len(lines(out / JUDGMENTS_FILE)) == 8
    assert len({r["key"] for r in lines(out / JUDGMENTS_FILE)}) == 8

    again = _providers()
    resumed = asyncio.run(run_async(config, output_dir=out, resume=True, runtime=Runtime(again)))
    assert resumed.units_run == 0 and _calls(again) == 0
    assert len(lines(out / JUDGMENTS_FILE)) == 8


def test_a_version_1_file_is_migrated_and_resumed(tmp_path: Path) -> None:
    out, config = _colliding_run(tmp_path)
    asyncio.run(run_async(config, output_dir=out, runtime=Runtime(_providers())))
    judgments = out / JUDGMENTS_FILE
    old = [{**data, "key": _legacy_key(data), "schema_version": 1} for data in lines(judgments)]
    assert len({data["key"] for data in old}) == 6  # version 1: two pairs of keys collide
    judgments.write_text("".join(json.dumps(d) + "\n" for d in old), encoding="utf-8")

    # Read back, every record has its own key again (rebuilt from its fields).
    assert len({r.key for r in read_records(judgments)}) == 8
    again = _providers()
    resumed = asyncio.run(run_async(config, output_dir=out, resume=True, runtime=Runtime(again)))
    assert resumed.units_run == 0 and _calls(again) == 0
    assert len(lines(judgments)) == 8  # nothing deleted, nothing redone


def test_duplicates_are_dropped_keeping_the_last_complete_record(tmp_path: Path) -> None:
    path = tmp_path / JUDGMENTS_FILE
    written = [
        record("q1|j1|control_first|r0", preference="A"),
        record("q1|j1|control_first|r0", preference="B"),  # the last complete one: kept
        record("q1|j1|control_first|r0", Status.PROVIDER_ERROR),  # a later failure: not kept
        record("q2|j1|control_first|r0", Status.PROVIDER_ERROR),
        record("q2|j1|control_first|r0", Status.PROVIDER_ERROR),
        record("q3|j1|control_first|r0", preference="A"),
    ]
    path.write_text("".join(r.to_json() + "\n" for r in written), encoding="utf-8")
    unique = read_judgments(path)
    assert unique.dropped == 3
    assert [(r.key[:2], r.status.value, r.preference) for r in unique.records()] == [
        ("q1", "ok", "B"),
        ("q2", "provider_error", None),
        ("q3", "ok", "A"),
    ]


def test_analyze_says_how_many_duplicates_it_dropped(tmp_path: Path) -> None:
    from .test_poison_text import _poison_dataset  # a small two-arm dataset

    dataset = _poison_dataset(tmp_path / "items.jsonl")
    out = tmp_path / "run"
    config = make_config(dataset, out, pipeline={"test_retest_count": 0})
    provider = FakeProvider("fake-model")
    asyncio.run(run_async(config, output_dir=out, runtime=Runtime({"j1": provider})))
    judgments = out / JUDGMENTS_FILE
    original = judgments.read_text(encoding="utf-8")
    judgments.write_text(original + original.splitlines(keepends=True)[0], encoding="utf-8")
    screen = io.StringIO()
    analyze_to_dir(
        judgments,
        human=None,
        dataset=dataset,
        out_dir=tmp_path / "report",
        console=Console(file=screen, width=300),
        plots=False,
    )
    assert "dropped 1 duplicate record(s)" in screen.getvalue()
    report = json.loads((tmp_path / "report" / "analysis_report.json").read_text("utf-8"))
    assert report["summary"]["input_screen"] == {
        "duplicates_dropped": 1,
        "labels_unknown_ids": 0,
        "labels_bad_values": 0,
    }
    assert report["summary"]["n_records"] == len(original.splitlines())


# --- ranking orders: an arm's name may hold ">" (issue 31 item 5) -------------------------------

_TRICKY_ARMS = ("a", "b", "a>b>a")


def _ranking_run(tmp_path: Path) -> tuple[Path, RunConfig]:
    dataset = tmp_path / "council.jsonl"
    rows = [
        {
            "id": f"q{n}",
            "question": f"Q {n}?",
            "responses": {arm: f"{arm}{n}" for arm in _TRICKY_ARMS},
        }
        for n in range(12)
    ]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out"
    config = make_config(
        dataset,
        out,
        task={"mode": "ranking", "rubric": "general", "arms": list(_TRICKY_ARMS)},
        pipeline={"test_retest_count": 0},  # each item in a seeded order and its reverse
    )
    return out, config


def test_ranking_orders_of_arms_holding_the_separator_have_their_own_names() -> None:
    from itertools import permutations

    orders = list(permutations(_TRICKY_ARMS))
    names = {ranking_ordering(order) for order in orders}
    assert len(names) == len(orders) == 6  # unescaped: "a>b>a>b>a" twice
    assert ranking_ordering(("atlas", "birch")) == "atlas>birch"  # plain names: unchanged
    assert ranking_ordering(("x\\", ">y")) != ranking_ordering(("x\\>", "y"))


def test_a_ranking_run_over_arms_holding_the_separator_keeps_every_judgment(
    tmp_path: Path,
) -> None:
    out, config = _ranking_run(tmp_path)
    first = asyncio.run(run_async(config, output_dir=out, runtime=Runtime(_one_provider())))
    written = lines(out / JUDGMENTS_FILE)
    assert first.units_total == len(written) == 24  # 12 items x 2 orders
    assert len({data["key"] for data in written}) == 24
    again = _one_provider()
    resumed = asyncio.run(run_async(config, output_dir=out, resume=True, runtime=Runtime(again)))
    assert resumed.units_run == 0 and _calls(again) == 0
    assert lines(out / JUDGMENTS_FILE) == written


def test_an_old_ranking_file_with_colliding_keys_resumes_without_deleting_any(
    tmp_path: Path,
) -> None:
    out, config = _ranking_run(tmp_path)
    asyncio.run(run_async(config, output_dir=out, runtime=Runtime(_one_provider())))
    judgments = out / JUDGMENTS_FILE
    old = []
    for data in lines(judgments):  # as written before the escaping: orders joined as they are
        data["presentation_order"] = ">".join(
            data["positions"][k] for k in sorted(data["positions"])
        )
        old.append({**data, "key": _legacy_key(data)})
    # a, b, a>b>a and its reverse a>b>a, b, a were both "a>b>a>b>a": 3 items' pairs collide
    assert len({data["key"] for data in old}) == 21
    judgments.write_text("".join(json.dumps(d) + "\n" for d in old), encoding="utf-8")

    assert len({r.key for r in read_records(judgments)}) == 24
    again = _one_provider()
    resumed = asyncio.run(run_async(config, output_dir=out, resume=True, runtime=Runtime(again)))
    assert resumed.units_run == 0 and _calls(again) == 0
    assert len(lines(judgments)) == 24  # nothing deleted, nothing paid again


def _one_provider() -> dict[str, Provider]:
    return {"j1": FakeProvider("fake-model")}
