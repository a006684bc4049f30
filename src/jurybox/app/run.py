"""Synchronous entry points for the CLI: ``run_from_config`` (run, resume, dry run).

Start-up (issue #19): what only a dry run or a batch run needs (the estimates, the batch plan
and its rich tables) is imported when one is asked for, and the summary (``pipeline.summary``)
when the run ends, not on the way to a run's first request.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jurybox.config import JudgeConfig, RunConfig, load_config
from jurybox.errors import ConfigError
from jurybox.io.judgments import JUDGMENTS_FILE
from jurybox.pipeline.engines import open_engine
from jurybox.pipeline.manifest import MANIFEST_FILE
from jurybox.pipeline.options import (
    RunOptions,
    recorded_options,
    resume_command,
    resumed_options,
)
from jurybox.pipeline.progress import LazyConsole
from jurybox.pipeline.run_dir import read_run_manifest, units_per_judge
from jurybox.pipeline.runner import RunInputs, Runtime, execute, load_inputs
from jurybox.pipeline.signals import RunInterrupted

if TYPE_CHECKING:
    from rich.console import Console

    from jurybox.pipeline.schedule import Schedule
    from jurybox.pipeline.summary import RunSummary


def _target_dir(default: Path, output_dir: str | Path | None, resume: str | Path | None) -> Path:
    if resume is None:
        return Path(output_dir) if output_dir is not None else default
    if output_dir is not None and Path(output_dir).resolve() != Path(resume).resolve():
        raise ConfigError(
            f"--resume {resume} and --output-dir {output_dir} name different directories; "
            "give only --resume",
            field="--output-dir",
        )
    if not Path(resume).is_dir():
        # Never fall back to a fresh (paid) run: the folder named is the one meant.
        raise ConfigError(
            f"--resume {resume}: no such run folder (a relative path is taken from the current "
            "directory, not from the config file's)",
            field="--resume",
        )
    return Path(resume)


# The variable a vendor adapter reads when the config leaves ``api_key_env`` out and talks to the
# vendor's own endpoint (``providers._common.resolve_api_key``); the adapters hold the same names.
_VENDOR_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google": "GEMINI_API_KEY",
}


def key_env_of(judge: JudgeConfig) -> str | None:
    """The environment variable the judge's adapter will read its key from, if any."""
    if judge.api_key_env is not None:
        return judge.api_key_env
    implicit = "api_key_env" not in judge.model_fields_set
    if implicit and judge.base_url is None:
        return _VENDOR_KEY_ENV.get(judge.provider)
    return None  # an explicit `api_key_env: null`: a server that needs no key


def check_api_keys(
    config: RunConfig, judges: Iterable[str], env: Mapping[str, str] | None = None
) -> None:
    """Refuse the run before any call when a judge's key variable is unset or empty.

    Without this, every call of that judge fails with ``provider_error`` and the run goes on.
    Raises ConfigError (exit 2) naming each judge and its variable.
    """
    env = os.environ if env is None else env
    missing = []
    for name in dict.fromkeys(judges):
        variable = key_env_of(config.judges[name])
        if variable is not None and not env.get(variable):
            missing.append(f"judge '{name}' needs environment variable {variable}, which is unset")
    if missing:
        raise ConfigError(
            "; ".join(missing) + " (set it, or set `api_key_env: null` for a server that needs "
            "no key); no call was made",
            path=config.source_path,
        )


def dry_run_summary(
    inputs: RunInputs,
    directory: Path,
    console: Console,
    schedule: Schedule | None = None,
) -> RunSummary:
    """Print units per judge and the token / cost estimate; no provider is created. A batch
    run also prints its batch plan, and prices its batch judges at the batch rate; an
    ``--until`` run its worst case and expected saving (``pipeline.until_forecast``)."""
    # A dry run's own modules: not on the way to a real run's first request.
    from jurybox.app.batches import batched_judges, plan_estimates, print_plan  # noqa: PLC0415
    from jurybox.pipeline.dryrun import estimate_run, print_estimates  # noqa: PLC0415
    from jurybox.pipeline.summary import RunSummary  # noqa: PLC0415

    estimates = estimate_run(inputs)
    if inputs.config.pipeline.batch:
        estimates, plans = plan_estimates(inputs, estimates)
        batched = batched_judges(inputs.config)
        print_plan(console, plans, [name for name in inputs.config.judges if name not in batched])
    print_estimates(console, estimates, inputs.config.task.mode)
    if schedule is not None and schedule.manifest_key == "until":
        from jurybox.pipeline.until import UntilSchedule  # noqa: PLC0415 - --until runs only
        from jurybox.pipeline.until_forecast import print_forecast  # noqa: PLC0415

        assert isinstance(schedule, UntilSchedule)

        seed = inputs.config.pipeline.random_seed
        print_forecast(console, schedule, list(schedule.states), seed=seed)
    return RunSummary(
        run_id=None,
        output_dir=directory,
        judgments_path=directory / JUDGMENTS_FILE,
        manifest_path=directory / MANIFEST_FILE,
        units_total=len(inputs.units),
        units_skipped=0,
        units_run=0,
        provider_calls=0,
        dry_run=True,
        units_per_judge=units_per_judge(inputs.units),
        estimates=tuple(estimates),
    )


def run_from_config(
    config_path: str | Path,
    *,
    output_dir: str | Path | None = None,
    resume: str | Path | None = None,
    dry_run: bool = False,
    limit: int | None = None,
    console: Console | None = None,
    force: bool = False,
    batch: bool = False,
    batch_fallback: str | None = None,
    engine: str | None = None,
    ray_address: str | None = None,
    until: str | None = None,
) -> RunSummary:
    """Load CONFIG and its dataset, then run, resume (``resume=DIR``) or dry-run it.

    ``batch`` / ``batch_fallback`` set ``pipeline.batch`` / ``pipeline.batch_fallback``
    (``--batch``, ``--batch-fallback``). ``engine`` says where the calls are made: ``local``
    (this process, the default) or ``ray`` (Ray workers; on the cluster at ``ray_address``,
    else a local Ray started on demand; docs/engines.md). ``until`` (``decided`` or
    ``win_rate±H``) judges the items in a seeded order, in blocks, and stops each judge once
    an anytime-valid interval has answered (``pipeline.until``).

    A resume carries the run on with the options its manifest records (``limit``, engine, Ray
    address, batch, batch fallback, ``until``: ``pipeline.options``); what is given here
    changes them only where a resume may (a larger ``limit``, another engine), and a ``limit``
    that would shrink the run is refused.

    ``output_dir`` overrides ``paths.output_dir`` (itself relative to the config file). Bad
    config or dataset raises ConfigError / DatasetError before any provider call, a dry run
    included; a judge whose key variable is unset too, except in a dry run (which reads no key:
    keys are read at call time). The summary's ``failed_judges`` lists judges whose every call
    failed: the CLI exits 1 on them.
    """
    given = RunOptions(
        limit=limit,
        engine=engine or "local",
        ray_address=ray_address,
        batch=batch,
        batch_fallback=batch_fallback,
        until=_canonical_until(until),
    )
    prepared = prepare_run(
        config_path,
        given,
        output_dir=output_dir,
        resume=resume,
        console=console,
        engine_given=engine is not None,
        dry_run=dry_run,
        force=force,
    )
    if dry_run:
        return dry_run_summary(
            prepared.inputs, prepared.directory, prepared.screen.get(), prepared.schedule
        )
    return execute_prepared(prepared)


@dataclass(frozen=True)
class PreparedRun:
    """A run checked and planned, not started: its inputs, folder, options and schedule."""

    screen: LazyConsole
    directory: Path
    options: RunOptions
    inputs: RunInputs
    schedule: Schedule | None
    runtime: Runtime | None  # None: a dry run, which calls nothing
    resume: bool
    force: bool = False  # resume a folder that has no manifest.json (``--force``)


def prepare_run(
    config_path: str | Path,
    given: RunOptions,
    *,
    output_dir: str | Path | None = None,
    resume: str | Path | None = None,
    console: Console | None = None,
    engine_given: bool = False,
    dry_run: bool = False,
    force: bool = False,
) -> PreparedRun:
    """Load and check CONFIG, its dataset and keys, and plan the run with the session's options
    (``given``, or for a resume the recorded ones with what ``given`` may change: its engine
    only where ``engine_given``, i.e. ``--engine`` was on the command line); no call.
    ``force`` goes with the plan to the run (a resume into a folder without manifest.json).

    A fresh-run cascade (``given.cascade``) is planned by ``app.cascade_run``: only its judges'
    units, in its rounds.
    """
    # rich's stderr Console when none is given, made when first used: off a terminal, after
    # the run (start-up, issue #19)
    screen = LazyConsole(console)
    config = load_config(config_path)
    directory = _target_dir(config.resolve(config.paths.output_dir), output_dir, resume)
    given = replace(given, config_path=str(config_path), output_dir=str(directory))
    options = _session_options(given, directory, resume, engine_given=engine_given)
    inputs = load_inputs(_batch_config(config, options), options.limit)
    inputs, schedule = _schedule(inputs, options)
    if dry_run:  # calls nothing, so needs no key and no engine
        return PreparedRun(screen, directory, options, inputs, schedule, None, resume is not None)
    check_api_keys(inputs.config, (unit.judge for unit in inputs.units))
    runtime = Runtime(engine=open_engine(options.engine, address=options.ray_address))
    resumed = resume is not None
    return PreparedRun(screen, directory, options, inputs, schedule, runtime, resumed, force)


def execute_prepared(prepared: PreparedRun) -> RunSummary:
    """Run a prepared run to its end (or its interruption), printing its summary."""
    screen, options, schedule = prepared.screen, prepared.options, prepared.schedule
    assert prepared.runtime is not None, "a dry run's preparation is not executed"
    try:
        summary = asyncio.run(
            execute(
                prepared.inputs,
                prepared.directory,
                resume=prepared.resume,
                console=screen,
                runtime=prepared.runtime,
                force=prepared.force,
                options=options,
                schedule=schedule,
            )
        )
    except RunInterrupted as stopped:
        _print_interrupted(screen.get(), stopped, options)
        raise
    from jurybox.pipeline.summary import print_summary  # noqa: PLC0415 - start-up: at the end

    print_summary(screen.get(), summary)
    if options.until is not None and summary.schedule is not None:
        for name, entry in summary.schedule["judges"].items():
            screen.get().print(f"--until: {name} {entry['statement']}", markup=False)
    for line in next_step(summary):
        screen.get().print(line, markup=False, soft_wrap=True)
    return summary


def _canonical_until(until: str | None) -> str | None:
    """``--until`` as recorded (``win_rate+-0.03`` -> ``win_rate±0.03``); ConfigError if bad."""
    if until is None:
        return None
    from jurybox.pipeline.until import parse_until  # noqa: PLC0415 - --until runs only

    return parse_until(until).spec


def _schedule(inputs: RunInputs, options: RunOptions) -> tuple[RunInputs, Schedule | None]:
    """The session's schedule (``pipeline.schedule``): ``--until``'s, a fresh-run cascade's, or
    none; a resume's comes from its manifest's options."""
    if options.cascade is not None:
        from jurybox.app.cascade_run import plan_cascade  # noqa: PLC0415 - cascades only

        return plan_cascade(inputs, options.cascade)
    if options.until is None:
        return inputs, None
    from jurybox.pipeline.until import UntilSchedule, check_until, parse_until  # noqa: PLC0415

    check_until(inputs.config, batch=inputs.config.pipeline.batch)
    return inputs, UntilSchedule.plan(inputs, parse_until(options.until))


def _session_options(
    given: RunOptions, directory: Path, resume: str | Path | None, *, engine_given: bool
) -> RunOptions:
    """The command line's options, or for a resume the run's recorded ones with what the
    command line may change (``pipeline.options``)."""
    if resume is None:
        return given
    recorded = recorded_options(read_run_manifest(directory))
    return resumed_options(recorded, given, engine_given=engine_given)


def _batch_config(config: RunConfig, options: RunOptions) -> RunConfig:
    """The config with the session's ``--batch`` / ``--batch-fallback`` applied."""
    if not options.batch and options.batch_fallback is None:
        return config
    from jurybox.app.batches import with_batch  # noqa: PLC0415 - batch runs only

    return with_batch(config, options.batch, options.batch_fallback)


def _print_interrupted(console: Console, stopped: RunInterrupted, options: RunOptions) -> None:
    """What is done so far and the exact command that carries on (it skips finished units)."""
    from jurybox.pipeline.summary import RunSummary, print_summary  # noqa: PLC0415 - at the end

    command = resume_command(options)
    if isinstance(stopped.summary, RunSummary):
        command = stopped.summary.resume_command or command
        # The command comes once, below, rather than also under the failures.
        print_summary(console, replace(stopped.summary, resume_command=None))
    console.print(f"Interrupted by {stopped.signal_name}. Resume with:", markup=False)
    console.print(f"  {command}", markup=False, soft_wrap=True)


def next_step(summary: RunSummary) -> list[str]:
    """What to do next, ready to paste: after provider errors (every call failed included) the
    command that redoes them, which carries the run on as it was started; else the analysis."""
    redone = summary.status_counts.get("provider_error", 0)
    if redone and summary.resume_command is not None:
        return [
            f"Next: {redone} provider_error records are redone by:",
            f"  {summary.resume_command}",
        ]
    return [analyze_hint(summary)]


def analyze_hint(summary: RunSummary) -> str:
    """The command that analyses this run (it reads the dataset and labels the manifest names,
    and writes the report into the run folder's ``report``)."""
    import shlex  # noqa: PLC0415 - start-up: not before the run's first request

    return f"Next: jurybox analyze {shlex.quote(str(summary.output_dir))}"
