"""A run judged in rounds: which units next, decided from the records so far.

A plain run judges every planned unit at once. A *scheduled* run asks its ``Schedule`` for a
round of units, judges them, and asks again: ``jurybox run --until`` (``pipeline.until``: blocks
of items in a seeded order, each judge stopped once its confidence sequence has decided) and the
fresh-run cascade of ``jurybox cascade CONFIG`` (``app.cascade_run``: the next judge only on the
items the earlier ones were unsure of). The runner keeps the cache, the one writer and the
manifest as ever; it shows the schedule every record it writes and writes the schedule's own
entry into the manifest after every round.

A schedule's state is a function of the run's records (those in the judgments file when the
session starts, given to ``begin``, and each one written since, given to ``observe``) and of its
settings, never of what an earlier session held in memory: a run killed at any point and resumed
reaches the same rounds and the same stop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from jurybox.records import JudgeRecord, WorkUnit


class Schedule(Protocol):
    """What the runner needs of a run judged in rounds."""

    manifest_key: str  # the manifest entry ``recorded()`` fills

    def begin(self, records: Iterable[JudgeRecord]) -> None:
        """The records already in the judgments file (a resume's; none for a new run)."""

    def judges(self) -> list[str]:
        """The judges that may still be given work."""

    def next_round(self) -> list[WorkUnit]:
        """The units to judge next, none already recorded; empty when the run is done (or
        can go no further in this session: a unit that failed with a provider error is left
        to the next ``--resume``, as in a plain run)."""

    def observe(self, record: JudgeRecord) -> None:
        """A record the session has just written."""

    def recorded(self) -> dict[str, Any]:
        """The manifest entry: where the schedule stands (JSON-ready)."""
