"""An optimize's own folder: ``state.json`` (what it decided so far) and where its runs live.

```
OUT/state.json                 the config it started from, the split, candidates, plan, stage
OUT/candidates/<id>.yaml       each candidate as a run config on dev (runnable with jurybox run)
OUT/candidates/<id>.instructions.md
OUT/runs/<id>/                 the candidate's run on dev (grown rung by rung with --limit)
OUT/test/                      the winner's one run on test, and its report in test/report/
OUT/cache.sqlite               one response cache for every run and the proposer
OUT/optimize_report.{json,md}, OUT/winner.yaml
```

The state is rewritten whole (atomically) at each stage; the search itself is never stored as
a decision but recomputed from the runs' records, so a resume reaches the same rungs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurybox.errors import ConfigError
from jurybox.io.atomic import write_text_atomic

STATE_FILE = "state.json"
FORMAT = "jurybox-optimize/1"


@dataclass(frozen=True)
class Layout:
    """Where an optimize keeps each thing."""

    root: Path

    @property
    def state(self) -> Path:
        return self.root / STATE_FILE

    @property
    def cache(self) -> Path:
        return self.root / "cache.sqlite"

    def candidate_config(self, cid: str) -> Path:
        return self.root / "candidates" / f"{cid}.yaml"

    def instructions(self, cid: str) -> Path:
        return self.root / "candidates" / f"{cid}.instructions.md"

    def dev_run(self, cid: str) -> Path:
        return self.root / "runs" / cid

    @property
    def test_run(self) -> Path:
        return self.root / "test"

    @property
    def test_config(self) -> Path:
        return self.root / "test.yaml"

    @property
    def test_report(self) -> Path:
        return self.test_run / "report"


def write_state(layout: Layout, state: Mapping[str, Any]) -> None:
    text = json.dumps({"format": FORMAT, **state}, indent=2, ensure_ascii=False) + "\n"
    write_text_atomic(layout.state, text)


def read_state(layout: Layout) -> dict[str, Any]:
    """The folder's state; ConfigError when it is not an optimize's folder."""
    try:
        data = json.loads(layout.state.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            "no optimize to resume here (no state.json): start one with `jurybox optimize CONFIG`",
            path=str(layout.root),
            field="--resume",
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"not valid JSON ({exc.msg})", path=str(layout.state), line=exc.lineno
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"not a {FORMAT} state file", path=str(layout.state))
    return data
