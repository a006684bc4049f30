"""``jurybox`` whose ``openai`` judges take until the process is killed to be built: a run held
after its session began and before any provider (so any request) exists, for SIGKILL tests.

Run as ``python -c "from batch.stalled_cli import main; main()" run CONFIG ...`` with ``tests/``
on the path; the file named by ``JURYBOX_TEST_STALL_MARK`` appears when the hold begins.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NoReturn

from jurybox.cli import main as cli_main
from jurybox.config import JudgeConfig
from jurybox.providers.registry import register_provider

MARK_ENV = "JURYBOX_TEST_STALL_MARK"
HOLD_S = 120.0


def _stalled(judge_name: str, judge: JudgeConfig) -> NoReturn:
    Path(os.environ[MARK_ENV]).touch()
    time.sleep(HOLD_S)  # the test kills the process long before
    raise RuntimeError(f"judge {judge_name} was held {HOLD_S:g} s and never killed")


def main() -> None:
    register_provider("openai", _stalled)
    cli_main()
