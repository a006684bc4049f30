"""What the optimize use case's modules share: its options, its session, one judged run."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from jurybox.config import load_config
from jurybox.devloop.split import SplitName
from jurybox.errors import JuryboxError
from jurybox.io.judgments import read_records
from jurybox.optimize.candidates import Candidate
from jurybox.optimize.config import Optimize
from jurybox.optimize.split import OptimizeSplit
from jurybox.optimize.state import Layout, write_state
from jurybox.pipeline.manifest import MANIFEST_FILE
from jurybox.pipeline.runner import Runtime, run_async
from jurybox.providers.base import Provider
from jurybox.records import JudgeRecord, Status

Echo = Callable[[str], None]


class OptimizeStopped(JuryboxError):
    """The search cannot go on this session (a judge's calls failed): resume it later."""

    def __init__(self, message: str, resume: str) -> None:
        self.resume = resume
        super().__init__(message)


@dataclass(frozen=True)
class OptimizeOptions:
    """What the command line gives: where, the budget, a new split; tests inject providers
    (by judge name; ``proposer`` for the proposer)."""

    output_dir: Path | None = None
    budget_calls: int | None = None
    budget_usd: float | None = None
    new_split: bool = False
    console: Console | None = None
    echo: Echo = print
    providers: Mapping[str, Provider] = field(default_factory=dict)


@dataclass
class Session:
    opt: Optimize
    layout: Layout
    state: dict[str, Any]
    options: OptimizeOptions
    split: OptimizeSplit | None = None
    candidates: list[Candidate] = field(default_factory=list)

    @property
    def mode(self) -> str:
        return self.opt.base.task.mode

    def save(self, **changes: Any) -> None:
        self.state.update(changes)
        write_state(self.layout, self.state)

    @property
    def resume_command(self) -> str:
        return f"jurybox optimize --resume {shlex.quote(str(self.layout.root))}"


def split_gold(split: OptimizeSplit, name: SplitName, mode: str) -> dict[str, Any]:
    """Item id -> its gold label as the split files hold it (``optimize.scoring`` reads it)."""
    key = "verdict" if mode == "criterion" else "preferred_arm"
    return {item.id: item.human[key] for item in split.items(name)}


def judge_run(session: Session, config: Path, out: Path, limit: int | None) -> list[JudgeRecord]:
    """One ordinary run of ``config`` into ``out`` (resumed when it exists): its records."""
    run_config = load_config(config)
    resume = (out / MANIFEST_FILE).exists()
    providers = {k: v for k, v in session.options.providers.items() if k == session.opt.judge}
    asyncio.run(
        run_async(
            run_config,
            output_dir=out,
            resume=resume,
            limit=limit,
            console=session.options.console,
            runtime=Runtime(providers=providers),
        )
    )
    records = list(read_records(out))
    failed = [r for r in records if r.status == Status.PROVIDER_ERROR]
    if failed:
        raise OptimizeStopped(
            f"{len(failed)} calls of {out} failed ({failed[0].error}); nothing is lost: "
            f"carry on with `{session.resume_command}`",
            session.resume_command,
        )
    return records
