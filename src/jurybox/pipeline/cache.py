"""SQLite response cache: a re-run never pays twice for the same answer.

The key is a sha256 of everything that decides the output: the provider and the model it serves,
the judge's answer-changing settings (``jurybox.config.answer_identity``, the one list shared with
the resume check and the development loop) and the request (parameters, prompt); the value is the
``Completion`` only, never a key or a header. Only successful completions are stored. WAL mode
lets several runs share one cache file (``pipeline.cache_path``).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from jurybox.config import JudgeConfig, answer_identity
from jurybox.errors import ConfigError
from jurybox.io.text import clean_value
from jurybox.records import Completion, CompletionRequest
from jurybox.redaction import holds_known, redact_value

if TYPE_CHECKING:
    import sqlite3

# Start-up (issue #19): sqlite3 is imported when a cache is opened, so a run with the cache off
# does not load it.

CACHE_FILE = "cache.sqlite"
# A response's rate-limit headers describe that moment, not the answer: never stored.
_COMPLETION_FIELDS = frozenset(
    field.name for field in dataclasses.fields(Completion) if field.name != "rate_limits"
)


def cache_key(vendor: str, model: str, judge: JudgeConfig, request: CompletionRequest) -> str:
    """Hash of what changes a judge's answer; scheduling settings (concurrency, rpm) are not."""
    payload = {
        "vendor": vendor,
        "model": model,  # as the provider resolved it (a local judge's model file name)
        "judge": answer_identity(judge),
        # The request's own values: the judge's defaults merged with the pipeline's.
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
        "schema": request.response_schema,
        "schema_name": request.schema_name,
        "system": request.system,
        "user": request.user,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Completion by key in one SQLite file. All calls come from the event loop's thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        import sqlite3  # noqa: PLC0415 - start-up: see the imports

        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a crash may lose the last commits, never corrupt the file;
            # a lost cache entry only costs a repeat call.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                "key TEXT PRIMARY KEY, completion TEXT NOT NULL, created_at TEXT NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"not a usable SQLite cache ({exc})", path=str(path)) from None

    def get(self, key: str) -> Completion | None:
        import sqlite3  # noqa: PLC0415 - loaded already by __init__: a look-up in sys.modules

        try:
            row = self._db.execute(
                "SELECT completion FROM responses WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.OperationalError as exc:
            raise self._os_error(exc) from None
        if row is None:
            return None
        data = json.loads(row[0])
        return Completion(**{k: v for k, v in data.items() if k in _COMPLETION_FIELDS})

    def put(self, key: str, completion: Completion) -> None:
        # A lone surrogate in an answer cannot be stored as UTF-8 text: replaced, never fatal.
        data, _ = clean_value(dataclasses.asdict(completion))
        data.pop("rate_limits", None)
        value = json.dumps(data, ensure_ascii=False)
        if holds_known(value):  # an answer that echoed a secret is kept as the record keeps it
            value = json.dumps(redact_value(data, shapes=False), ensure_ascii=False)
        import sqlite3  # noqa: PLC0415 - loaded already by __init__

        try:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, completion, created_at) VALUES (?, ?, ?)",
                (key, value, datetime.now(UTC).isoformat()),
            )
        except sqlite3.OperationalError as exc:
            raise self._os_error(exc) from None

    def _os_error(self, exc: sqlite3.OperationalError) -> OSError:
        """sqlite's "database or disk is full" as an OSError naming the cache file, like every
        other write error of a run (the CLI prints it as one line: what, and where)."""
        full = "full" in str(exc).lower()
        return OSError(errno.ENOSPC if full else errno.EIO, f"cache: {exc}", str(self.path))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
