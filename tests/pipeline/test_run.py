"""The run end to end with fake judges: records, resume, retries, cache, failures, dry run."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from jurybox.app import run_from_config
from jurybox.config import RunConfig
from jurybox.errors import (
    BadRequestError,
    ConfigError,
    DatasetError,
    RateLimitError,
)
from jurybox.io.judgments import read_records
from jurybox.pipeline import RunSummary, Runtime, plan_units, run_async
from jurybox.providers._common import estimate_tokens
from jurybox.providers.fake import FakeProvider
from jurybox.records import Completion, CompletionRequest, Status

from .helpers import fake_judge, lines, make_config, make_items, write_config, write_dataset


def run(config: RunConfig, out: Path, *, resume: bool = False, **providers: Any) -> RunSummary:
    runtime = Runtime(providers=providers)
    return asyncio.run(run_async(config, output_dir=out, resume=resume, runtime=runtime))


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "items.jsonl", 12)


def three_judges() -> dict[str, Any]:
    return {name: fake_judge(seed=i) for i, name in enumerate(("a", "b", "c"))}


def test_record_count_is_items_judges_orders_plus_retest(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "items.jsonl", 39)
    config = make_config(
        data, tmp_path / "out", judges=three_judges(), pipeline={"test_retest_count": 10}
    )
    summary = run(config, tmp_path / "out")
    rows = lines(tmp_path / "out" / "judgments.jsonl")
    assert len(rows) == 39 * 3 * 2 + 10 * 3 == 264
    assert {row["key"] for row in rows} == {unit.key for unit in plan_units(config, make_items(39))}
    assert Counter(row["judge_name"] for row in rows) == {"a": 88, "b": 88, "c": 88}
    assert sum(row["retest"] for row in rows) == 30
    assert {row["run_id"] for row in rows} == {summary.run_id}
    assert summary.status_counts["ok"] == 264 and summary.units_run == 264
    assert summary.provider_calls == 264
    first = rows[0]
    assert first["prompt_hash"] and first["attempts"] == 1 and first["cache_hit"] is False
    assert first["timestamp"].endswith("+00:00") and first["input_tokens"] > 0
    assert first["latency_ms"] is not None and first["local_judge"] is False


def test_manifest_describes_the_run(tmp_path: Path, dataset: Path) -> None:
    out = tmp_path / "out"
    judges = {"j1": {**fake_judge(), "price_input_per_mtok": 1.0, "price_output_per_mtok": 2.0}}
    summary = run(make_config(dataset, out, judges=judges), out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["run_id"] == summary.run_id and manifest["status"] == "complete"
    assert manifest["config"]["judges"]["j1"]["model"] == "fake-model"
    assert manifest["dataset"]["path"] == str(dataset) and len(manifest["dataset"]["hash"]) >= 16
    assert manifest["versions"]["jurybox"] and manifest["versions"]["python"]
    assert manifest["status_counts"]["ok"] == 12 * 2 + 2
    assert manifest["local_judge_used"] is False
    assert manifest["input_tokens"] == summary.input_tokens > 0
    expected_cost = (summary.input_tokens * 1.0 + summary.output_tokens * 2.0) / 1e6
    assert manifest["cost_usd"] == pytest.approx(expected_cost)
    assert manifest["started_at"] <= manifest["finished_at"]
    assert manifest["sessions"][0]["provider_calls"] == 26


def test_resuming_a_finished_run_makes_zero_calls(tmp_path: Path, dataset: Path) -> None:
    out = tmp_path / "out"
    config = make_config(dataset, out)
    first = run(config, out)
    before = (out / "judgments.jsonl").read_bytes()
    never = FakeProvider(error_rate=1.0)
    again = run(config, out, resume=True, j1=never)
    assert never.calls == 0 and again.provider_calls == 0 and again.units_run == 0
    assert (out / "judgments.jsonl").read_bytes() == before
    assert again.run_id == first.run_id and again.units_skipped == first.units_total
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["resumed"] for s in manifest["sessions"]] == [False, True]


def test_new_run_refuses_a_directory_with_judgments(tmp_path: Path, dataset: Path) -> None:
    out = tmp_path / "out"
    config = make_config(dataset, out)
    run(config, out)
    with pytest.raises(ConfigError, match="--resume"):
        run(config, out)


def test_rate_limit_is_retried_with_the_hint_honoured(tmp_path: Path, dataset: Path) -> None:
    seen: Counter[tuple[str, int | None]] = Counter()

    def first_call_limited(request: CompletionRequest) -> Any:
        seen[request.user, request.seed] += 1  # retests repeat a prompt with another seed
        if seen[request.user, request.seed] == 1:
            return RateLimitError("429 slow down", retry_after=0.05)
        return json.dumps({"verdict": "A", "confidence": "high", "reasoning": "r"})

    sleeps = Sleeps()
    # A configured limit (a tpm never reached) keeps the adaptive limiter, and its own waits,
    # out of this test of the retry policy (tests/pipeline/test_adaptive_limits.py has those).
    judges = {"j1": {**fake_judge(), "tpm": 10**12}}
    pipeline = {"retry_after_cap_s": 1.0}
    config = make_config(dataset, tmp_path / "out", judges=judges, pipeline=pipeline)
    runtime = Runtime(providers={"j1": FakeProvider(reply_fn=first_call_limited)}, sleep=sleeps)
    summary = asyncio.run(run_async(config, output_dir=tmp_path / "out", runtime=runtime))
    records = list(read_records(tmp_path / "out"))
    assert len(records) == summary.units_total == 26
    assert {r.attempts for r in records} == {2}
    assert {r.status for r in records} == {Status.OK}
    assert len(sleeps.waits) == 26 and all(0.05 <= w <= 0.055 for w in sleeps.waits)


def test_permanent_and_exhausted_errors_become_records(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdefghij"
    monkeypatch.setenv("JURYBOX_TEST_KEY", secret)

    def failing(request: CompletionRequest) -> Any:
        if "question 3" in request.user or "Question number 3?" in request.user:
            return BadRequestError(f"bad request for key {secret}", status_code=400)
        return ConnectionResetError("dropped")

    judges = {"j1": {**fake_judge(), "api_key_env": "JURYBOX_TEST_KEY"}}
    config = make_config(dataset, tmp_path / "out", judges=judges, pipeline={"max_retries": 2})
    sleeps = Sleeps()
    runtime = Runtime(providers={"j1": FakeProvider(reply_fn=failing)}, sleep=sleeps)
    summary = asyncio.run(run_async(config, output_dir=tmp_path / "out", runtime=runtime))
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 26 and summary.status_counts["provider_error"] == 26
    permanent = [r for r in records if r.query_id == "q003"]
    assert permanent and all(r.attempts == 1 for r in permanent)
    assert all((r.error or "").startswith("[HTTP 400] BadRequestError") for r in permanent)
    others = [r for r in records if r.query_id != "q003"]
    assert all((r.error or "").startswith("[connection reset] ConnectError") for r in others)
    assert all(r.attempts == 3 for r in records if r.query_id != "q003")
    text = (tmp_path / "out" / "judgments.jsonl").read_text()
    assert secret not in text and "[redacted]" in text
    assert all(r.raw_response is None and not r.parse_success for r in records)


def test_provider_errors_are_redone_on_resume(tmp_path: Path, dataset: Path) -> None:
    out = tmp_path / "out"
    config = make_config(dataset, out, pipeline={"max_retries": 0})
    flaky = FakeProvider(error_rate=0.5, seed=3)
    first = run(config, out, j1=flaky)
    failed = first.status_counts["provider_error"]
    assert 0 < failed < 26
    healthy = FakeProvider()
    second = run(config, out, resume=True, j1=healthy)
    assert healthy.calls == failed and second.units_run == failed
    rows = lines(out / "judgments.jsonl")
    assert len(rows) == 26 and len({row["key"] for row in rows}) == 26
    assert {row["status"] for row in rows} == {"ok"}
    assert second.status_counts["ok"] == 26 and second.run_id == first.run_id


def test_timeouts_are_retried_then_recorded(tmp_path: Path, dataset: Path) -> None:
    judges = {"j1": {**fake_judge(latency_ms=500), "timeout_s": 0.01}}
    config = make_config(dataset, tmp_path / "out", judges=judges, pipeline={"max_retries": 1})
    summary = run(config, tmp_path / "out", j1=FakeProvider(latency_ms=500))
    assert summary.status_counts["provider_error"] == 26
    records = list(read_records(tmp_path / "out"))
    assert all(r.attempts == 2 and "TransientError" in (r.error or "") for r in records)


def test_garbage_replies_are_unparsed_records_not_crashes(tmp_path: Path, dataset: Path) -> None:
    garbage = FakeProvider(replies=["I think both are fine!", "{not json"])
    summary = run(make_config(dataset, tmp_path / "out"), tmp_path / "out", j1=garbage)
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 26 and summary.parse_failures == 26
    assert all(r.status is Status.UNPARSED and not r.parse_success for r in records)
    assert {r.raw_response for r in records} == {"I think both are fine!", "{not json"}


def test_shared_cache_makes_a_second_run_free(tmp_path: Path, dataset: Path) -> None:
    shared = {"cache_path": str(tmp_path / "shared.sqlite")}
    first_provider, second_provider = FakeProvider(), FakeProvider(error_rate=1.0)
    config = make_config(dataset, tmp_path / "one", pipeline=shared)
    run(config, tmp_path / "one", j1=first_provider)
    second = run(config, tmp_path / "two", j1=second_provider)
    assert first_provider.calls == 26 and second_provider.calls == 0
    assert second.cache_hits == 26 and second.cache_input_share == 1.0
    records = list(read_records(tmp_path / "two"))
    assert all(r.cache_hit and r.attempts == 0 and r.status is Status.OK for r in records)
    one = {r.key: r.raw_response for r in read_records(tmp_path / "one")}
    assert {r.key: r.raw_response for r in records} == one
    assert not (tmp_path / "two" / "cache.sqlite").exists()


def test_cache_off_and_only_successes_cached(tmp_path: Path, dataset: Path) -> None:
    config = make_config(dataset, tmp_path / "a", pipeline={"cache": False})
    run(config, tmp_path / "a")
    assert not (tmp_path / "a" / "cache.sqlite").exists()
    failing = make_config(dataset, tmp_path / "b", pipeline={"max_retries": 0})
    run(failing, tmp_path / "b", j1=FakeProvider(error_rate=1.0))
    retry = FakeProvider()
    run(failing, tmp_path / "b", resume=True, j1=retry)
    assert retry.calls == 26  # failures were not cached, so the resume really calls


def test_repeats_and_retests_are_fresh_samples_not_cache_hits(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "items.jsonl", 3)
    config = make_config(data, tmp_path / "out", pipeline={"repeats": 2, "test_retest_count": 3})
    provider = FakeProvider()
    summary = run(config, tmp_path / "out", j1=provider)
    assert summary.units_total == provider.calls == 3 * 2 * 2 + 3
    assert summary.cache_hits == 0
    assert len({request.seed for request in provider.requests}) == 3


class InFlight(FakeProvider):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.now = self.peak = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await super().complete(request)
        finally:
            self.now -= 1


def test_calls_in_flight_are_bounded_per_judge(tmp_path: Path, dataset: Path) -> None:
    judges = {"a": {**fake_judge(), "concurrency": 3}, "b": fake_judge()}
    config = make_config(dataset, tmp_path / "out", judges=judges, pipeline={"concurrency": 5})
    a, b = InFlight(latency_ms=5), InFlight(latency_ms=5)
    run(config, tmp_path / "out", a=a, b=b)
    assert a.peak == 3 and b.peak == 5


def test_local_judge_runs_one_call_at_a_time_and_is_flagged(tmp_path: Path, dataset: Path) -> None:
    local = InFlight(latency_ms=2)
    local.is_local = True
    config = make_config(dataset, tmp_path / "out", judges={"j1": {"provider": "local"}})
    summary = run(config, tmp_path / "out", j1=local)
    assert local.peak == 1 and summary.local_judge
    assert all(r.local_judge for r in read_records(tmp_path / "out"))
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["local_judge_used"]


def test_rpm_limit_holds_in_every_window(tmp_path: Path, dataset: Path) -> None:
    class Clock:
        now = 0.0

        def __call__(self) -> float:
            return self.now

        async def sleep(self, seconds: float) -> None:
            self.now += seconds
            await asyncio.sleep(0)

    clock = Clock()
    starts: list[float] = []

    def stamp(request: CompletionRequest) -> str:
        starts.append(clock())
        return json.dumps({"verdict": "B", "confidence": "low", "reasoning": "r"})

    judges = {"j1": {**fake_judge(), "rpm": 7}}
    config = make_config(dataset, tmp_path / "out", judges=judges, pipeline={"concurrency": 4})
    runtime = Runtime(
        providers={"j1": FakeProvider(reply_fn=stamp)}, clock=clock, sleep=clock.sleep
    )
    asyncio.run(run_async(config, output_dir=tmp_path / "out", runtime=runtime))
    assert len(starts) == 26
    assert max(sum(1 for t in starts if s <= t < s + 60.0) for s in starts) == 7
    assert clock.now >= 3 * 60.0  # 26 calls at 7 a minute need at least three more minutes


def test_batch_pairwise_one_call_per_batch_one_record_per_unit(tmp_path: Path) -> None:
    data = write_dataset(tmp_path / "items.jsonl", 10)
    config = make_config(data, tmp_path / "out", task={"batch_size": 4})
    provider = FakeProvider()
    summary = run(config, tmp_path / "out", j1=provider)
    assert summary.units_total == 22
    assert provider.calls == math.ceil(20 / 4) + 1
    records = list(read_records(tmp_path / "out"))
    assert len({r.key for r in records}) == 22
    by_prompt: dict[str | None, list[int]] = {}
    for r in records:
        by_prompt.setdefault(r.prompt_hash, []).append(r.input_tokens or 0)
    assert sorted(len(v) for v in by_prompt.values()) == [2, 4, 4, 4, 4, 4]
    # A batch's usage is split over its records without losing a token.
    sent = {q.prompt_hash(): estimate_tokens(q.system + q.user) for q in provider.requests}
    assert {h: sum(tokens) for h, tokens in by_prompt.items()} == sent


def test_dry_run_makes_no_calls_and_prints_unit_counts(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurybox.providers import registry

    def refuse(name: str, judge: Any) -> Any:
        raise AssertionError("a dry run must not build providers")

    monkeypatch.setitem(registry._REGISTERED, "fake", refuse)
    judges = {
        "cheap": {**fake_judge(), "price_input_per_mtok": 1.0, "price_output_per_mtok": 1.0},
        "free": fake_judge(),
    }
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "out", judges=judges)
    buffer = io.StringIO()
    summary = run_from_config(path, dry_run=True, console=Console(file=buffer, width=120))
    text = buffer.getvalue()
    assert summary.dry_run and summary.provider_calls == 0
    assert summary.units_per_judge == {"cheap": 26, "free": 26}
    assert "cheap" in text and "26" in text and "no calls" in text
    assert not (tmp_path / "out").exists()
    cheap = next(e for e in summary.estimates if e.judge == "cheap")
    assert cheap.input_tokens > 26 * 20 and cheap.max_output_tokens == 26 * 4096
    assert cheap.output_tokens == 26 * 24  # the typical pairwise answer, not max_tokens
    assert cheap.cost_usd == pytest.approx((cheap.input_tokens + cheap.output_tokens) / 1e6)
    assert cheap.max_cost_usd == pytest.approx((cheap.input_tokens + cheap.max_output_tokens) / 1e6)
    free = next(e for e in summary.estimates if e.judge == "free")
    assert free.cost_usd is None and "no price for fake" in free.prices
    assert "$" in text and "unpriced (judge free)" in text


def test_bad_input_fails_before_any_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from jurybox.providers import registry

    def refuse(name: str, judge: Any) -> Any:
        raise AssertionError("bad input must fail before providers exist")

    monkeypatch.setitem(registry._REGISTERED, "fake", refuse)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "question": "q"}\n')
    path = write_config(tmp_path / "cfg.yaml", bad, tmp_path / "out")
    with pytest.raises(DatasetError):
        run_from_config(path, console=Console(file=io.StringIO()))
    with pytest.raises(ConfigError):
        run_from_config(tmp_path / "missing.yaml", console=Console(file=io.StringIO()))


def test_run_from_config_prints_paths_and_summary(tmp_path: Path, dataset: Path) -> None:
    path = write_config(tmp_path / "cfg.yaml", dataset, tmp_path / "ignored")
    buffer = io.StringIO()
    out = tmp_path / "chosen"
    summary = run_from_config(
        path, output_dir=out, limit=5, console=Console(file=buffer, width=200)
    )
    text = buffer.getvalue()
    assert summary.units_total == 5 * 2 + 2 and summary.status_counts["ok"] == 12
    assert str(out / "judgments.jsonl") in text and str(out / "manifest.json") in text
    assert "parse failures 0" in text and "bundled local model" not in text
    assert not (tmp_path / "ignored").exists()
    with pytest.raises(ConfigError, match="different directories"):
        run_from_config(path, output_dir=out, resume=tmp_path / "x", console=Console())


def test_a_bug_mid_run_surfaces_plainly_and_marks_the_manifest(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurybox.modes.pairwise import PairwiseMode

    real = PairwiseMode.interpret
    seen = Counter[str]()

    def breaks_on_the_fifth(*args: Any) -> Any:
        seen["calls"] += 1
        if seen["calls"] == 5:
            raise RuntimeError("interpreter bug")
        return real(*args)

    monkeypatch.setattr(PairwiseMode, "interpret", breaks_on_the_fifth)
    config = make_config(dataset, tmp_path / "out", pipeline={"concurrency": 1})
    with pytest.raises(RuntimeError, match="interpreter bug"):
        run(config, tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["sessions"][0]["units_run"] == 4
    assert len(lines(tmp_path / "out" / "judgments.jsonl")) == 4
    monkeypatch.setattr(PairwiseMode, "interpret", real)
    assert run(config, tmp_path / "out", resume=True).units_run == 26 - 4


def test_a_full_disk_reports_the_judgments_error_not_the_manifest_one(
    tmp_path: Path, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jurybox.io.judgments import JsonlWriter
    from jurybox.pipeline import runner

    real_manifest = runner.write_manifest
    statuses: list[str] = []

    def manifest_then_full(path: Path, data: dict[str, Any]) -> None:
        statuses.append(data["status"])
        if len(statuses) > 1:  # the disk is full by the time the final manifest is written
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real_manifest(path, data)

    def full(self: JsonlWriter, record: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.path))

    monkeypatch.setattr(runner, "write_manifest", manifest_then_full)
    monkeypatch.setattr(JsonlWriter, "write", full)
    with pytest.raises(OSError, match="No space left") as failed:
        run(make_config(dataset, tmp_path / "out"), tmp_path / "out")
    assert failed.value.filename == str(tmp_path / "out" / "judgments.jsonl")
    assert statuses == ["running", "failed"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "running"  # the last good manifest stays readable


# --- golden records per mode ------------------------------------------------------------------
# tests/data/golden_modes/<case>.jsonl were written by the code before the modes/ refactor; a run
# of the same config must still write exactly these records. Only what differs between two runs
# is masked: times, the run id, and a code check's prompt hash (its text names the tmp folder).

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_modes"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_GOLDEN_CASES: dict[str, dict[str, Any]] = {
    "rubric": {"task": {"mode": "rubric", "rubric": "general"}},
    "pairwise_both": {"task": {"mode": "pairwise"}},
    "pairwise_reference_random": {
        "task": {"mode": "pairwise", "reference_guided": True},
        "pipeline": {"position_bias_mode": "random"},
    },
    "pairwise_rubric": {
        "task": {"mode": "pairwise", "pairwise_with_rubric": True, "rubric": "general"}
    },
    "batch_pairwise": {"task": {"mode": "pairwise", "batch_size": 2}},
    "ranking": {"task": {"mode": "ranking", "rubric": "general"}},
    "criterion": {"task": {"mode": "criterion"}},  # an LLM criterion and a code check
}


def golden_rows(case: str, tmp_path: Path) -> list[str]:
    """The case's judgments, masked and sorted, as JSON lines."""
    sections = dict(_GOLDEN_CASES[case])
    arms = ("a", "b", "c") if case == "ranking" else ("control", "treatment")
    dataset = write_dataset(tmp_path / "data.jsonl", 3, arms)
    if case == "criterion":
        criteria = [
            EXAMPLES / "criteria" / "next_step.yaml",
            EXAMPLES / "devloop" / "has_pointer.yaml",
        ]
        sections["task"] = {**sections["task"], "criteria": [str(path) for path in criteria]}
    pipeline = {"test_retest_count": 1, **sections.pop("pipeline", {})}
    config = make_config(dataset, tmp_path / "out", pipeline=pipeline, **sections)
    asyncio.run(run_async(config, output_dir=tmp_path / "out", runtime=Runtime()))
    rows = []
    for row in lines(tmp_path / "out" / "judgments.jsonl"):
        row.update(timestamp=None, latency_ms=None, run_id=None)
        if row["judge_vendor"] == "code":
            row["prompt_hash"] = None
        rows.append(json.dumps(row, sort_keys=True, ensure_ascii=False))
    return sorted(rows)


@pytest.mark.parametrize("case", sorted(_GOLDEN_CASES))
def test_records_match_the_golden_run_of_each_mode(case: str, tmp_path: Path) -> None:
    want = (GOLDEN / f"{case}.jsonl").read_text(encoding="utf-8").splitlines()
    got = golden_rows(case, tmp_path)
    assert len(got) == len(want)
    assert {json.loads(row)["status"] for row in got} >= {"ok"}
    for got_row, want_row in zip(got, want, strict=True):
        assert json.loads(got_row) == json.loads(want_row)
