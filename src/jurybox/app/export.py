"""``jurybox export`` and ``jurybox.load``: a run's judgments as one flat table.

One row per judgment (duplicate keys dropped as ``analyze`` drops them) with the item's question,
response texts and labels joined (``jurybox.io.table`` lists the columns). The items and labels
are the ones ``analyze`` would use: given, else named by the run's manifest, else the items an
``import`` wrote beside the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from jurybox.app.sources import RunSources, run_items, run_labels, run_sources, say_sources
from jurybox.io.judgments import judgments_path
from jurybox.io.table import Row, columns_of, judgment_rows, table_format, write_table

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Export:
    """What was written: the file, its format, rows, and the sources joined."""

    out: Path
    format: str
    rows: int
    sources: RunSources


def judgment_table(
    run: str | Path, *, dataset: str | Path | None = None, human: str | Path | None = None
) -> tuple[list[Row], RunSources]:
    """The rows of ``run`` (a run folder or a judgments.jsonl) and the sources joined to them."""
    from jurybox.io.record_table import read_judgments  # noqa: PLC0415  (pyarrow on use)

    path = judgments_path(run)
    records = read_judgments(path).records()
    sources = run_sources(
        path,
        dataset=Path(dataset) if dataset is not None else None,
        human=Path(human) if human is not None else None,
    )
    items = run_items(path, sources) or []
    rows = judgment_rows(records, {item.id: item for item in items}, run_labels(sources))
    return rows, sources


def export_run(
    run: str | Path,
    out: str | Path,
    *,
    fmt: str | None = None,
    dataset: str | Path | None = None,
    human: str | Path | None = None,
    console: Console | None = None,
) -> Export:
    """Write ``run``'s judgments to ``out`` as CSV, Parquet or JSONL (``fmt``, else ``out``'s
    suffix); says which dataset and labels were joined."""
    out = Path(out)
    chosen = table_format(out, fmt)
    rows, sources = judgment_table(run, dataset=dataset, human=human)
    write_table(rows, out, chosen)
    console = console or Console(stderr=True)
    say_sources(sources, console)
    console.print(f"wrote {len(rows):,} judgments to {out} ({chosen})", markup=False)
    return Export(out, chosen, len(rows), sources)


def load(
    run: str | Path, *, dataset: str | Path | None = None, human: str | Path | None = None
) -> pd.DataFrame:
    """``run``'s judgments as a pandas DataFrame: the table ``jurybox export`` writes."""
    import pandas as pd  # noqa: PLC0415  (pandas only when a frame is asked for)

    rows, _ = judgment_table(run, dataset=dataset, human=human)
    return pd.DataFrame(rows, columns=columns_of(rows))
