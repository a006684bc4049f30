"""A run's own options beyond its config: what ``jurybox run`` was given (the config file, the
run folder, ``--limit``, ``--engine``, ``--ray-address``, ``--batch``, ``--batch-fallback``,
``--until``), or the fresh-run cascade of ``jurybox cascade CONFIG`` (its flags).

They are kept in ``manifest.json`` from a session's first moment, so that

* every resume command jurybox prints (on a stop signal, under provider errors, in an error
  message) is built by one function, ``resume_command``, from the run's own record, and
* ``--resume DIR`` carries a run on as it was started (``resumed_options``): a ``--limit 10``
  run resumes with its 10 items, a Ray run on Ray, a batch run as batches, whatever the
  resuming command line leaves out.

What a resuming command line may change: ``--limit`` may grow (the run then covers more
items) but not shrink or be dropped; the engine, the Ray address, ``--batch`` (a synchronous
run's remaining work may go as batches; a batch run stays one) and ``--batch-fallback`` only
schedule the work and may change. ``--until`` and a cascade decide which units are judged at
all: a resume carries them on as recorded and refuses another (or none where one was
recorded, or one where none was).
Anything else is the config's, checked by ``manifest.check_resumable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from jurybox.errors import ConfigError

# Where a config was built in Python rather than read from a file: no path to name.
_NO_FILE = ("<config>", "")


@dataclass(frozen=True)
class RunOptions:
    """What a session of a run was started with (the manifest's ``options``)."""

    config_path: str | None = None  # as the session was given it (relative to its cwd)
    output_dir: str | None = None
    limit: int | None = None  # None: every item
    engine: str = "local"
    ray_address: str | None = None
    batch: bool = False  # a batch run (``--batch`` or ``pipeline.batch``)
    batch_fallback: str | None = None  # given on the command line; None: the config's
    until: str | None = None  # ``--until`` as canonically spelled (``pipeline.until``)
    # A fresh-run cascade: ``jurybox cascade CONFIG``'s flags, by long option name (``--judges``
    # -> "judges"), the output folder included; None for a plain run.
    cascade: Mapping[str, Any] | None = None

    def recorded(self) -> dict[str, Any]:
        """The manifest's ``options`` entry (``until`` and ``cascade`` only where set)."""
        entry: dict[str, Any] = {
            "config_path": self.config_path,
            "output_dir": self.output_dir,
            "limit": self.limit,
            "engine": self.engine,
            "ray_address": self.ray_address,
            "batch": self.batch,
            "batch_fallback": self.batch_fallback,
        }
        if self.until is not None:
            entry["until"] = self.until
        if self.cascade is not None:
            entry["cascade"] = dict(self.cascade)
        return entry


def recorded_options(manifest: Mapping[str, Any] | None) -> RunOptions | None:
    """The options a run's manifest records; None where it records none (no manifest, or
    one written before options were: the resume then takes the command line's, as it did)."""
    entry = manifest.get("options") if manifest is not None else None
    if not isinstance(entry, Mapping):
        return None
    limit = entry.get("limit")
    return RunOptions(
        config_path=_text(entry.get("config_path")),
        output_dir=_text(entry.get("output_dir")),
        limit=limit if isinstance(limit, int) and limit > 0 else None,
        engine=_text(entry.get("engine")) or "local",
        ray_address=_text(entry.get("ray_address")),
        batch=entry.get("batch") is True,
        batch_fallback=_text(entry.get("batch_fallback")),
        until=_text(entry.get("until")),
        cascade=cascade if isinstance(cascade := entry.get("cascade"), Mapping) else None,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def resumed_options(
    recorded: RunOptions | None, given: RunOptions, *, engine_given: bool
) -> RunOptions:
    """The options a resume runs with: the run's recorded ones, with what the command line may
    change applied (module docstring). ``engine_given``: ``--engine`` was on the command line.

    Raises ConfigError naming both values for a ``--limit`` that would shrink the run.
    """
    if recorded is None:  # nothing recorded: the command line is all there is
        return given
    limit = recorded.limit
    if given.limit is not None and given.limit != recorded.limit:
        if recorded.limit is None or given.limit < recorded.limit:
            covered = "every item" if recorded.limit is None else f"--limit {recorded.limit}"
            raise ConfigError(
                f"--limit {given.limit} contradicts the run's recorded {covered} "
                "(manifest.json): a resume may extend a run, never shrink it; leave --limit "
                "out to carry the run on as it was started",
                field="--limit",
            )
        limit = given.limit
    _check_plan(recorded, given)
    engine, address = given.engine if engine_given else recorded.engine, given.ray_address
    if address is None and engine == recorded.engine:
        address = recorded.ray_address  # the same engine: on the same cluster
    return RunOptions(
        config_path=given.config_path,
        output_dir=given.output_dir,
        limit=limit,
        engine=engine,
        ray_address=address,
        batch=recorded.batch or given.batch,
        batch_fallback=given.batch_fallback or recorded.batch_fallback,
        until=recorded.until,
        cascade={**(recorded.cascade or {}), **given.cascade}
        if given.cascade
        else recorded.cascade,
    )


def _check_plan(recorded: RunOptions, given: RunOptions) -> None:
    """``--until`` and a cascade choose the units: a resume keeps the recorded ones (left out
    on the command line, they carry on) and refuses any other."""
    if given.until is not None and given.until != recorded.until:
        was = f"--until {recorded.until}" if recorded.until else "no --until"
        raise ConfigError(
            f"--until {given.until} contradicts the run's recorded {was} (manifest.json): which "
            "items are judged follows from it, so a resume keeps it; leave --until out",
            field="--until",
        )
    if (given.cascade is None) == (recorded.cascade is None):
        changed = _cascade_changes(recorded.cascade or {}, given.cascade or {})
        if not changed:
            return
        what = f"the cascade's {', '.join(changed)} differ from the run's recorded ones"
    elif recorded.cascade is None:
        what = "this run was not started as a cascade"
    else:
        what = "this run is a fresh-run cascade (`jurybox run` would judge every item)"
    command = resume_command(replace(recorded, config_path=given.config_path))
    raise ConfigError(f"{what} (manifest.json); resume it with {command}", field="--resume")


# The cascade's flags that decide which items each judge sees (``--out`` only says where the
# report goes, and may change).
_CASCADE_DECIDING = (
    "judges",
    "target",
    "delta",
    "calibration_share",
    "seed",
    "confidence",
    "human",
)


def _cascade_changes(recorded: Mapping[str, Any], given: Mapping[str, Any]) -> list[str]:
    return [
        "--" + name.replace("_", "-")
        for name in _CASCADE_DECIDING
        if recorded.get(name) != given.get(name)
    ]


def resume_command(options: RunOptions) -> str:
    """The command that carries the run on, exactly as it was started: the one way every
    resume command jurybox prints is built."""
    import shlex  # noqa: PLC0415 - start-up: only when a command is printed

    config = options.config_path
    command = "cascade" if options.cascade is not None else "run"
    words = ["jurybox", command]
    words.append(shlex.quote(config) if config not in (None, *_NO_FILE) else "CONFIG")
    words += ["--resume", shlex.quote(options.output_dir or "DIR")]
    if options.until is not None:
        words += ["--until", shlex.quote(options.until)]
    for name, value in (options.cascade or {}).items():
        for one in value if isinstance(value, list) else [value]:  # a list: a repeated flag
            if one is not None:
                words += ["--" + name.replace("_", "-"), shlex.quote(str(one))]
    if options.limit is not None:
        words += ["--limit", str(options.limit)]
    if options.batch:
        words.append("--batch")
    if options.batch_fallback is not None:
        words += ["--batch-fallback", shlex.quote(options.batch_fallback)]
    if options.engine != "local":
        words += ["--engine", shlex.quote(options.engine)]
    if options.ray_address is not None:
        words += ["--ray-address", shlex.quote(options.ray_address)]
    return " ".join(words)
