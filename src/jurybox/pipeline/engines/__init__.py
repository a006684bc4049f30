"""Where a run's provider calls are made: ``local`` (this process) or ``ray`` (Ray workers).

Either way the run itself stays in this process: work-unit planning, cache look-ups, the one
writer of ``judgments.jsonl``, the manifest and ``--resume``. An engine only makes the calls
(providers, retries, parsing into records) and hands the records back. See docs/engines.md.
"""

from __future__ import annotations

from jurybox.errors import ConfigError, MissingDependencyError
from jurybox.pipeline.runner import Engine

ENGINES = ("local", "ray")


def open_engine(
    name: str, *, address: str | None = None, workers: int | None = None
) -> Engine | None:
    """The engine called ``name``; ``None`` for ``local`` (the runner's own event loop).

    ``address`` is a Ray cluster address (``ray://head:10001``, ``head:6379`` or ``auto``);
    without one a local Ray starts on demand. ``workers``: Ray worker actors (default: one per
    CPU of the cluster). Raises ConfigError on a bad combination, MissingDependencyError when
    the ``ray`` extra is not installed.
    """
    if name not in ENGINES:
        raise ConfigError(f"unknown engine '{name}' (allowed: {', '.join(ENGINES)})")
    if name == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --engine ray", field="--ray-address")
        return None
    try:
        # Only here: Ray is an optional extra and takes seconds to import.
        from jurybox.pipeline.engines.ray import RayEngine  # noqa: PLC0415
    except ImportError as exc:
        raise MissingDependencyError(
            f"--engine ray needs Ray ({exc}); install it with: pip install 'jurybox[ray]'"
        ) from None
    return RayEngine(address=address, workers=workers)
