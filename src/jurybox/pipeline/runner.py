"""The async run: bounded workers per judge, rate limits, retries, cache, one writer.

Everything here runs on one event loop. Each judge gets ``concurrency`` worker coroutines pulling
calls from a shared iterator, so at most that many calls are in flight per judge. A finished
call's records are written synchronously from the worker that made it: a synchronous write
cannot interleave with another on a single-threaded loop, so the file needs no lock or thread.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jurybox.config import JudgeConfig, RunConfig
from jurybox.errors import ConnectError, JudgeStopped, ProviderError
from jurybox.io.datasets import load_dataset
from jurybox.io.judgments import JsonlWriter, read_records
from jurybox.modes import JudgingMode, build_mode
from jurybox.pipeline.answer_cap import cap_answer
from jurybox.pipeline.cache import CACHE_FILE, ResponseCache, cache_key
from jurybox.pipeline.failures import FailureTally
from jurybox.pipeline.lock import run_directory_lock
from jurybox.pipeline.manifest import (
    RunningTotals,
    write_manifest,
)
from jurybox.pipeline.options import RunOptions, resume_command
from jurybox.pipeline.progress import LazyConsole, RunProgress
from jurybox.pipeline.ratelimit import Clock, JudgeLimits, Limiter, limits_for
from jurybox.pipeline.recording import RecordContext, completed_records, failed_records, utc_now
from jurybox.pipeline.retry import CallFailed, RetryPolicy, Sleep, call_with_retry
from jurybox.pipeline.run_dir import RunOutput, check_run_folder, open_output, units_per_judge
from jurybox.pipeline.signals import RunInterrupted, StopSignals
from jurybox.pipeline.units import make_batches, plan_units, sample_seed
from jurybox.pricing import PriceNote, batch_priced, completion_cost_usd, price_judges
from jurybox.providers._common import estimate_tokens_of
from jurybox.providers.base import Provider, register_judge_secrets
from jurybox.providers.registry import create_provider, judge_concurrency
from jurybox.records import (
    Completion,
    CompletionRequest,
    Item,
    JudgeRecord,
    WorkUnit,
)

if TYPE_CHECKING:
    from rich.console import Console

    from jurybox.pipeline.batch import BatchLog
    from jurybox.pipeline.schedule import Schedule
    from jurybox.pipeline.summary import RunSummary
    from jurybox.providers.batch import BatchBackend

# Start-up (issue #19): the batch machinery (pipeline.batch, providers.batch) is imported by the
# functions of a --batch run, and the summary (pipeline.summary) when the run ends, not on every
# run's way to its first request.


@dataclass(frozen=True, slots=True)
class Fresh:
    """What one provider call (its retries included) gave: records, the completion to cache
    (None when the call failed) and how many calls it made."""

    records: list[JudgeRecord]
    completion: Completion | None
    calls: int


class Engine(Protocol):
    """Where the calls of a run are made (``jurybox.pipeline.engines``). The run itself (cache
    look-ups, the one writer, the manifest) always stays in this process."""

    async def start(self, inputs: RunInputs, run_id: str, judges: Sequence[str]) -> None: ...

    async def judge(self, judge: str, units: list[WorkUnit]) -> Fresh: ...

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Runtime:
    """Injection points for tests and embedding: ready-made providers, clock, sleep, fsync, and
    the engine making the calls (None: this process, on its event loop)."""

    providers: Mapping[str, Provider] = field(default_factory=dict)
    sleep: Sleep = asyncio.sleep
    clock: Clock = time.monotonic
    fsync_interval_s: float = 1.0
    engine: Engine | None = None


@dataclass(frozen=True, slots=True)
class RunInputs:
    """Everything validated before a single call: items, judging mode and work units. The
    config's judges are priced (``pricing.price_judges``); ``prices`` says from where."""

    config: RunConfig
    items: Mapping[str, Item]
    units: Sequence[WorkUnit]
    mode: JudgingMode
    dataset_path: Path
    prices: Mapping[str, PriceNote] = field(default_factory=dict)


def load_inputs(config: RunConfig, limit: int | None = None) -> RunInputs:
    """Load the dataset (first ``limit`` items), the rubric/criteria and the run's own prompt,
    and plan the work units.

    Raises ConfigError / DatasetError on bad input (a bad prices file included), before any
    provider exists.
    """
    config, prices = price_judges(config)
    dataset_path = config.resolve(config.paths.dataset)
    items = load_dataset(dataset_path, config.dataset, config.labels)
    if limit is not None:
        items = items[:limit]
    mode = build_mode(config)
    units = plan_units(config, items)
    by_id = {item.id: item for item in items}
    mode.check_prompts(units, by_id)  # a custom template fails here, before any call
    return RunInputs(config, by_id, units, mode, dataset_path, prices)


def request_for(inputs: RunInputs, units: Sequence[WorkUnit]) -> CompletionRequest:
    """The request for one call (one unit, or a batch of one judge's units)."""
    config = inputs.config
    judge = config.judges[units[0].judge]
    max_tokens = judge.max_tokens or config.pipeline.max_tokens
    seed = sample_seed(config.pipeline.random_seed, units[0].repeat, units[0].retest)
    return inputs.mode.request(units, inputs.items, judge, max_tokens, seed)


@dataclass(frozen=True, slots=True)
class _Judge:
    """One judge of the run: its config, provider, limits, workers and record context."""

    name: str
    config: JudgeConfig
    provider: Provider
    limits: Limiter
    workers: int
    records: RecordContext
    backend: BatchBackend | None = None  # its vendor's batch API, in a --batch run


@dataclass(frozen=True, slots=True)
class _Sink:
    """Where finished records go: the file, the cache, the progress bar, the file's totals."""

    writer: JsonlWriter
    cache: ResponseCache | None
    progress: RunProgress
    totals: RunningTotals
    failures: FailureTally
    batch_log: BatchLog | None = None


class _Session:
    """One session of a run. All methods run on the event loop's thread: counters need no lock."""

    def __init__(
        self, inputs: RunInputs, runtime: Runtime, schedule: Schedule | None = None
    ) -> None:
        self.inputs = inputs
        self.runtime = runtime
        self.schedule = schedule  # a run judged in rounds (pipeline.schedule); None: at once
        self.rounds_done = False  # the schedule had no more work
        self.policy = RetryPolicy.from_config(inputs.config.pipeline)
        self.rng = random.Random(inputs.config.pipeline.random_seed)  # backoff jitter only
        self.started = time.monotonic()
        self.provider_calls = 0
        self.units_run = 0
        self.written: set[str] = set()  # keys given a record in this session
        self.batch_records = 0
        self.batch_saved_usd = 0.0
        self.stopping = False  # set by a stop signal: workers take no new batch
        # Judges whose server is not there (a call found none, retries spent): by the id of
        # their provider, so a mode's own answerer under the same judge name carries on.
        self.stopped: dict[int, JudgeStopped] = {}

    def stop(self) -> None:
        self.stopping = True

    async def run_planned(
        self, judges: Sequence[_Judge], pending: Sequence[WorkUnit], sink: _Sink, checkpoint: Any
    ) -> None:
        """Every pending unit at once, or the schedule's rounds one after another (the manifest
        written after each: ``checkpoint``)."""
        if self.schedule is None:
            return await self.run(judges, pending, sink)
        while not self.stopping:
            units = self.schedule.next_round()
            if not units:
                self.rounds_done = True
                return None
            await self.run(judges, units, sink)
            checkpoint()
        return None

    async def run(self, judges: Sequence[_Judge], pending: Sequence[WorkUnit], sink: _Sink) -> None:
        batches = make_batches(self.inputs.config, pending)
        try:
            async with asyncio.TaskGroup() as group:
                for judge in judges:
                    mine = iter([batch for batch in batches if batch[0].judge == judge.name])
                    if judge.backend is not None and sink.batch_log is not None:
                        group.create_task(self._batched(judge, list(mine), sink))
                        continue
                    for _ in range(judge.workers):
                        group.create_task(self._worker(judge, mine, sink))
        except ExceptionGroup as failed:
            # Provider failures never get here (they are records); what does is a bug or an
            # OSError such as a full disk. Re-raise the first so callers see the plain error.
            raise failed.exceptions[0] from None

    async def _worker(self, judge: _Judge, batches: Iterator[list[WorkUnit]], sink: _Sink) -> None:
        # Workers share one iterator: ``next`` is synchronous, so each batch goes to one worker.
        for batch in batches:
            if self.stopping:
                return
            await self._judge_batch(judge, batch, sink)

    async def _batched(self, judge: _Judge, calls: list[list[WorkUnit]], sink: _Sink) -> None:
        """The judge's calls through its vendor's batch API (calls the mode answers itself,
        such as code checks, stay synchronous)."""
        assert judge.backend is not None and sink.batch_log is not None
        own = [call for call in calls if self.inputs.mode.answerer(call[0]) is not None]
        for call in own:
            await self._judge_batch(judge, call, sink)
        vendor = [call for call in calls if self.inputs.mode.answerer(call[0]) is None]
        from jurybox.pipeline.batch import BatchSettings, JudgeBatches  # noqa: PLC0415 - above

        pipeline = self.inputs.config.pipeline
        settings = BatchSettings(
            poll_s=pipeline.batch_poll_s,
            poll_max_s=pipeline.batch_poll_max_s,
            retry=self.policy,
            fallback=pipeline.batch_fallback,
        )
        host = _BatchHost(self, judge, sink)
        engine = JudgeBatches(
            judge.name,
            judge.backend,
            sink.batch_log,
            host,
            settings,
            sleep=self.runtime.sleep,
            rng=self.rng,
        )
        await engine.run(vendor)

    def answered_by(self, judge: _Judge, units: list[WorkUnit]) -> _Judge:
        """Where the mode answers a unit itself (a code criterion's check), that answerer
        stands in for the model, without rate limits; records then name its vendor."""
        answerer = self.inputs.mode.answerer(units[0])
        if answerer is None:
            return judge
        limits = JudgeLimits(None, None, clock=self.runtime.clock, sleep=self.runtime.sleep)
        records = replace(judge.records, provider=answerer)
        return replace(judge, provider=answerer, limits=limits, records=records)

    async def _judge_batch(self, judge: _Judge, units: list[WorkUnit], sink: _Sink) -> None:
        judge = self.answered_by(judge, units)
        cache, engine = sink.cache, self.runtime.engine
        # An engine renders the prompt where it calls; here only the cache key needs it.
        request = request_for(self.inputs, units) if cache is not None or engine is None else None
        key = ""
        if cache is not None and request is not None:  # not `if cache`: an empty one has len 0
            # The key hashes the whole request once more: only worth it when there is a cache.
            key = cache_key(judge.provider.vendor, judge.provider.model, judge.config, request)
            cached = cache.get(key)
            if cached is not None:
                hit = self._records(
                    judge, units, cached, request.prompt_hash(), attempts=0, hit=True
                )
                self._write(sink, hit)
                return
        if engine is not None:
            fresh = await engine.judge(judge.name, units)
            self.provider_calls += fresh.calls
        else:
            fresh = await self.call_and_record(
                judge, units, request or request_for(self.inputs, units)
            )
        if cache is not None and fresh.completion is not None:
            cache.put(key, fresh.completion)
        self._write(sink, fresh.records)

    async def call_and_record(
        self, judge: _Judge, units: list[WorkUnit], request: CompletionRequest
    ) -> Fresh:
        """Call the judge (retries included) and turn the outcome into records. A judge found
        to have no server is not called again: its calls become records at once."""
        prompt_hash = request.prompt_hash()
        stopped = self.stopped.get(id(judge.provider))
        result = CallFailed(stopped, 0) if stopped else await self._call(judge, request)
        if isinstance(result, CallFailed):
            self._stop_if_unreachable(judge, result.error)
            failed = failed_records(
                judge.records,
                units,
                result.error,
                prompt_hash=prompt_hash,
                attempts=result.attempts,
            )
            return Fresh(failed, None, result.attempts)
        completion, attempts = result
        completion, size = cap_answer(completion, self.inputs.config.pipeline.max_answer_bytes)
        records = self._records(judge, units, completion, prompt_hash, attempts, hit=False)
        if size is not None:
            records = [replace(record, answer_cut_bytes=size) for record in records]
        return Fresh(records, completion, attempts)

    def _stop_if_unreachable(self, judge: _Judge, error: ProviderError) -> None:
        """Stop the judge when a call's retries found no server (refused, unknown host):
        every later call of it, and the retries in flight, end at once as records that a
        resume redoes, instead of each spending its own retries (issue #34)."""
        if not isinstance(error, ConnectError) or not error.unreachable:
            return
        self.stopped.setdefault(
            id(judge.provider),
            JudgeStopped(
                f"judge stopped: a call found no server ({error.kind}): {error.hint}",
                kind=error.kind,
            ),
        )

    def _records(
        self,
        judge: _Judge,
        units: list[WorkUnit],
        completion: Completion,
        prompt_hash: str,
        attempts: int,
        *,
        hit: bool,
    ) -> list[JudgeRecord]:
        judged = self.inputs.mode.interpret(units, self.inputs.items, completion)
        return completed_records(
            judge.records,
            units,
            judged,
            completion,
            prompt_hash=prompt_hash,
            attempts=attempts,
            cache_hit=hit,
        )

    def _write(self, sink: _Sink, records: Sequence[JudgeRecord]) -> None:
        for record in records:
            self.written.add(record.key)
            sink.writer.write(record)  # raises (the record not in the file) on a full disk
            sink.totals.add(record)
            sink.failures.add(record)
            sink.progress.advance(record)
            if self.schedule is not None:
                self.schedule.observe(record)
        self.units_run += len(records)

    async def _call(
        self, judge: _Judge, request: CompletionRequest
    ) -> tuple[Completion, int] | CallFailed:
        estimate = estimate_tokens_of(request.system, request.user)
        limit_s = judge.config.timeout_s

        async def attempt() -> Completion:
            stopped = self.stopped.get(id(judge.provider))
            if stopped is not None:  # another call found no server: no retry of this one
                raise JudgeStopped(str(stopped), kind=stopped.kind)
            async with judge.limits.attempt(estimate, judge.provider.classify_error) as turn:
                self.provider_calls += 1
                started = time.perf_counter()
                try:
                    async with asyncio.timeout(limit_s):
                        completion = await judge.provider.complete(request)
                except TimeoutError:
                    # A bare TimeoutError says nothing; the record should say which limit was hit.
                    raise TimeoutError(
                        f"no answer within the judge's timeout_s of {limit_s:g} s"
                    ) from None
                turn.done(completion)  # tokens used, and the rate limits the response stated
            if completion.latency_ms is None:
                elapsed_ms = (time.perf_counter() - started) * 1000.0
                completion = replace(completion, latency_ms=elapsed_ms)
            return completion

        return await call_with_retry(
            attempt,
            judge.provider.classify_error,
            self.policy,
            rng=self.rng,
            sleep=self.runtime.sleep,
            forgive=judge.limits.forgives,
        )


class _BatchHost:
    """The runner's side of a batch run for one judge (``pipeline.batch.BatchHost``): requests
    and cache keys as in a synchronous call, records through the same mode parser and writer,
    priced at the batch rate and stamped with their batch id."""

    def __init__(self, session: _Session, judge: _Judge, sink: _Sink) -> None:
        self.session, self.judge, self.sink = session, judge, sink
        priced = replace(judge.records, judge=batch_priced(judge.config))
        self.batch_judge = replace(judge, records=priced)

    def request(self, call: list[WorkUnit]) -> CompletionRequest:
        return request_for(self.session.inputs, call)

    def _cache_key(self, request: CompletionRequest) -> str:
        provider = self.judge.provider
        return cache_key(provider.vendor, provider.model, self.judge.config, request)

    def from_cache(self, call: list[WorkUnit]) -> bool:
        cache = self.sink.cache
        if cache is None:
            return False
        request = self.request(call)
        cached = cache.get(self._cache_key(request))
        if cached is None:
            return False
        records = self.session._records(
            self.judge, call, cached, request.prompt_hash(), attempts=0, hit=True
        )
        self.session._write(self.sink, records)
        return True

    def record(
        self,
        call: list[WorkUnit],
        outcome: Completion | ProviderError,
        batch_id: str,
        attempts: int,
    ) -> None:
        request = self.request(call)
        if isinstance(outcome, ProviderError):
            failed = failed_records(
                self.judge.records,
                call,
                outcome,
                prompt_hash=request.prompt_hash(),
                attempts=attempts,
            )
            self.session._write(self.sink, [replace(r, batch_id=batch_id or None) for r in failed])
            return
        self.session._write(self.sink, self._answered(call, request, outcome, batch_id, attempts))

    def _answered(
        self,
        call: list[WorkUnit],
        request: CompletionRequest,
        completion: Completion,
        batch_id: str,
        attempts: int,
    ) -> list[JudgeRecord]:
        if request.response_schema is None or not self.judge.config.structured_output:
            completion = replace(completion, structured=None)  # as the synchronous adapter reads
        completion, size = cap_answer(
            completion, self.session.inputs.config.pipeline.max_answer_bytes
        )
        if self.sink.cache is not None:
            self.sink.cache.put(self._cache_key(request), completion)
        records = self.session._records(
            self.batch_judge, call, completion, request.prompt_hash(), attempts, hit=False
        )
        full = completion_cost_usd(self.judge.config, completion)
        spent = [r.cost_usd for r in records]
        if full is not None and None not in spent:
            self.session.batch_saved_usd += full - sum(c for c in spent if c is not None)
        self.session.batch_records += len(records)
        return [replace(r, batch_id=batch_id, answer_cut_bytes=size) for r in records]

    async def call_sync(self, call: list[WorkUnit]) -> None:
        await self.session._judge_batch(self.judge, call, self.sink)

    def is_done(self, key: str) -> bool:
        return key in self.session.written

    def batch_event(self, submitted: int, ended: int, waiting: bool) -> None:
        self.sink.progress.batches(submitted, ended, waiting)


def _write_manifest(out: RunOutput, status: str, session: _Session) -> dict[str, Any]:
    """Write the manifest with totals over the whole judgments file; returns the totals."""
    file_totals = out.totals.as_dict()
    out.session.update(
        status=status, units_run=session.units_run, provider_calls=session.provider_calls
    )
    if session.batch_records:
        out.session.update(
            batch_records=session.batch_records, batch_saved_usd=session.batch_saved_usd
        )
    if session.schedule is not None:
        out.manifest[session.schedule.manifest_key] = session.schedule.recorded()
    if status != "running":
        out.session["finished_at"] = out.manifest["finished_at"] = utc_now()
    out.manifest.update(status=status, **file_totals)
    write_manifest(out.manifest_path, out.manifest)
    return file_totals


def _make_judge(
    inputs: RunInputs, name: str, out: RunOutput, runtime: Runtime, *, batch: bool = False
) -> _Judge:
    judges = out.manifest.setdefault("judges", {})
    saved = (judges.get(name) or {}).get("rate_limits")  # learned by an earlier session
    # The adaptive limits keep what they learn in this entry: it is the manifest's own.
    entry: dict[str, Any] = {}
    judge = build_judge(
        inputs,
        name,
        out.run_id,
        runtime,
        saved=saved if isinstance(saved, dict) else None,
        report=entry,
        batch=batch,
    )
    judges[name] = entry
    entry.update(
        vendor=judge.provider.vendor, model=judge.provider.model, local=judge.provider.is_local
    )
    note = inputs.prices.get(name)
    if note is not None:  # the manifest says where the judge's prices come from, or why none
        entry["prices" if note.priced else "unpriced"] = note.text
    return judge


def build_judge(
    inputs: RunInputs,
    name: str,
    run_id: str,
    runtime: Runtime,
    limits: Limiter | None = None,
    *,
    saved: Mapping[str, Any] | None = None,
    report: MutableMapping[str, Any] | None = None,
    batch: bool = False,
) -> _Judge:
    """One judge of the run: its provider, rate limits (``limits``, else its own: configured,
    or learned from the provider, starting from ``saved``), workers."""
    config, judge = inputs.config, inputs.config.judges[name]
    provider = runtime.providers.get(name) or create_provider(name, judge)
    workers = judge_concurrency(judge, config.pipeline.concurrency)
    own = limits or limits_for(
        judge.rpm,
        judge.tpm,
        workers,
        adaptive=not provider.is_local,
        saved=saved,
        report=report,
        clock=runtime.clock,
        sleep=runtime.sleep,
    )
    return _Judge(
        name=name,
        config=judge,
        provider=provider,
        limits=own,
        workers=workers,
        records=RecordContext(run_id, config.task.mode, name, judge, provider),
        backend=_batch_backend(provider) if batch else None,
    )


def _batch_backend(provider: Provider) -> BatchBackend | None:
    from jurybox.providers.batch import batch_backend  # noqa: PLC0415 - see the imports

    return batch_backend(provider)


def _batch_log(out: RunOutput) -> BatchLog | None:
    """The durable log of a batch run's provider batches (None for a synchronous run)."""
    if not out.manifest.get("batch"):
        return None
    from jurybox.pipeline.batch import BATCH_LOG_FILE, BatchLog  # noqa: PLC0415 - see imports

    return BatchLog(out.directory / BATCH_LOG_FILE)


def _limit_notes(judges: Sequence[_Judge]) -> str | None:
    """What the judges' limits learned (progress display): ``gpt: learned 1,200 rpm``."""
    notes = [(judge.name, judge.limits.describe()) for judge in judges]
    return "; ".join(f"{name}: {note}" for name, note in notes if note) or None


def _open_cache(config: RunConfig, directory: Path) -> ResponseCache | None:
    if not config.pipeline.cache:
        return None
    path = config.resolve(config.pipeline.cache_path) if config.pipeline.cache_path else None
    return ResponseCache(path or directory / CACHE_FILE)


def _first_wait(judges: Sequence[_Judge]) -> str:
    """What the first answer waits for: a local model loads on its first call (~40 s)."""
    local = [judge.provider.model for judge in judges if judge.provider.is_local]
    if local:
        return f"loading the local model {', '.join(dict.fromkeys(local))} (first call)"
    return "waiting for the first answer"


async def _judge_all(
    session: _Session,
    out: RunOutput,
    judges: Sequence[_Judge],
    pending: Sequence[WorkUnit],
    console: Console | LazyConsole | None,
) -> None:
    cache = _open_cache(session.inputs.config, out.directory)
    log = _batch_log(out)
    fsync_s = session.runtime.fsync_interval_s
    try:
        with (
            JsonlWriter(out.judgments, fsync_interval_s=fsync_s) as writer,
            RunProgress(
                console,
                len(pending),
                lambda: _limit_notes(judges),
                first_wait=_first_wait(judges),
                planned=units_per_judge(pending),
            ) as progress,
        ):
            sink = _Sink(writer, cache, progress, out.totals, out.failures, log)
            checkpoint = lambda: _write_manifest(out, "running", session)  # noqa: E731
            await session.run_planned(judges, pending, sink, checkpoint)
    finally:
        if cache is not None:
            cache.close()


async def execute(
    inputs: RunInputs,
    directory: Path,
    *,
    resume: bool,
    console: Console | LazyConsole | None,
    runtime: Runtime,
    force: bool = False,
    options: RunOptions | None = None,
    schedule: Schedule | None = None,
) -> RunSummary:
    """Run (or resume) the planned units into ``directory``; see ``run_async``. ``options``:
    what the session was started with, recorded in the manifest (``pipeline.options``);
    ``schedule``: judge in its rounds (``pipeline.schedule``) rather than every unit at once.

    Raises:
        RunInterrupted: a stop signal ended the run early (the manifest says ``interrupted``).
    """
    for judge in inputs.config.judges.values():  # before anything is written or sent
        register_judge_secrets(judge)
    check_run_folder(inputs, directory)
    options = options or RunOptions()
    options = replace(
        options,
        config_path=options.config_path or inputs.config.source_path,
        output_dir=options.output_dir or str(directory),
    )
    with (
        StopSignals() as signals,
        run_directory_lock(directory),  # before anything in the folder is read or repaired
    ):
        out = open_output(inputs, directory, resume=resume, force=force)
        return await _execute_locked(
            inputs,
            out,
            options,
            console=console,
            runtime=runtime,
            signals=signals,
            schedule=schedule,
        )


def _pending(inputs: RunInputs, out: RunOutput, schedule: Schedule | None) -> list[WorkUnit]:
    """The units not done yet; of a scheduled run, those of the judges it may still call (its
    state read from the records, never from a past session's memory)."""
    pending = [unit for unit in inputs.units if unit.key not in out.done]
    if schedule is None:
        return pending
    schedule.begin(read_records(out.judgments) if out.judgments.exists() else ())
    still = set(schedule.judges())
    return [unit for unit in pending if unit.judge in still]


async def _execute_locked(
    inputs: RunInputs,
    out: RunOutput,
    options: RunOptions,
    *,
    console: Console | LazyConsole | None,
    runtime: Runtime,
    signals: StopSignals,
    schedule: Schedule | None,
) -> RunSummary:
    pending = _pending(inputs, out, schedule)
    # A batch run stays one when resumed without --batch: its open batches are polled, not
    # paid for again.
    batch = options.batch or inputs.config.pipeline.batch or bool(out.manifest.get("batch"))
    options = replace(options, batch=batch)
    out.manifest.update(batch=options.batch, options=options.recorded())
    session = _Session(inputs, runtime, schedule)
    judges: list[_Judge] = []
    status = "interrupted"
    try:
        # Written before anything slow (an SDK's import, Ray's start) and before any request:
        # a kill from here on leaves a run that resumes as it was started (--batch included).
        _write_manifest(out, "running", session)
        # Providers only for judges with work left: a finished run resumed builds none.
        for name in dict.fromkeys(unit.judge for unit in pending):
            judges.append(_make_judge(inputs, name, out, runtime, batch=options.batch))
        if runtime.engine is not None and judges:
            await runtime.engine.start(inputs, out.run_id, [judge.name for judge in judges])
            signals.reinstall()  # Ray's start puts handlers of its own on SIGTERM
        # On a signal: no new work at once, calls in flight cancelled after the grace period.
        await signals.run(_judge_all(session, out, judges, pending, console), session.stop)
        if session.units_run == len(pending) or session.rounds_done:
            status = "complete"  # a signal that came after the last unit changes nothing
    except Exception:
        status = "failed"  # KeyboardInterrupt / cancellation leave "interrupted"
        raise
    finally:
        if runtime.engine is not None:
            await runtime.engine.close()
        for judge in judges:
            if judge.name not in runtime.providers:  # injected providers belong to the caller
                await judge.provider.aclose()
        try:
            file_totals = _write_manifest(out, status, session)
        except OSError:
            if status == "complete":
                raise
            # The run is already failing (often the same full disk): report its error, not this.
    summary = _summary(
        inputs,
        out,
        session,
        file_totals,
        skipped=len(inputs.units) - len(pending),
        resume=resume_command(options),
    )
    if status == "interrupted" and signals.received is not None:
        raise RunInterrupted(signals.received, out.directory, summary)
    return summary


def _summary(
    inputs: RunInputs,
    out: RunOutput,
    session: _Session,
    file_totals: dict[str, Any],
    *,
    skipped: int,
    resume: str,
) -> RunSummary:
    from jurybox.pipeline.summary import RunSummary  # noqa: PLC0415 - start-up: at the end

    return RunSummary.from_totals(
        file_totals,
        run_id=out.run_id,
        output_dir=out.directory,
        judgments_path=out.judgments,
        manifest_path=out.manifest_path,
        units_total=len(inputs.units),
        units_skipped=skipped,
        units_run=session.units_run,
        provider_calls=session.provider_calls,
        elapsed_s=time.monotonic() - session.started,
        units_per_judge=units_per_judge(inputs.units),
        failures=out.failures.judges(),
        batch_saved_usd=sum(s.get("batch_saved_usd", 0.0) for s in out.manifest["sessions"]),
        resume_command=resume,
        schedule=session.schedule.recorded() if session.schedule is not None else None,
    )


async def run_async(
    config: RunConfig,
    *,
    output_dir: str | Path,
    resume: bool = False,
    limit: int | None = None,
    console: Console | LazyConsole | None = None,
    runtime: Runtime | None = None,
    force: bool = False,
    options: RunOptions | None = None,
) -> RunSummary:
    """Judge the config's dataset into ``output_dir`` (judgments.jsonl + manifest.json).

    Args:
        config: the validated run config.
        output_dir: the run directory; created if missing.
        resume: continue the run already in ``output_dir``: done keys are skipped,
            ``provider_error`` records are redone, the run_id is kept.
        limit: judge only the first ``limit`` items.
        console: where the progress bar goes (drawn only on a terminal).
        runtime: injected providers / clock / sleep (tests, embedding).
        force: resume a folder that has no manifest.json (refused otherwise).
        options: what the run was started with, for its manifest and resume command
            (``pipeline.options``; default: ``limit`` and the config's paths). ``limit`` is
            used as given: ``jurybox.run`` / ``jurybox run`` read a resumed run's own.

    Returns:
        RunSummary with counts over the whole judgments file.

    Raises ConfigError / DatasetError on bad input before any provider call.
    """
    inputs = load_inputs(config, limit)
    return await execute(
        inputs,
        Path(output_dir),
        resume=resume,
        console=console,
        runtime=runtime or Runtime(),
        force=force,
        options=options or RunOptions(limit=limit),
    )
