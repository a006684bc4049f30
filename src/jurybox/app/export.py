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
from jurybox.io.table import (
    Row,
    columns_of,
    is_export,
    judgment_rows,
    table_format,
    write_table,
)
from jurybox.io.targets import check_target
from jurybox.io.verdicts import companion_items_path
from jurybox.pipeline.manifest import MANIFEST_FILE

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
    _check_out(run, out, dataset=dataset, human=human)
    rows, sources = judgment_table(run, dataset=dataset, human=human)
    write_table(rows, out, chosen)
    console = console or Console(stderr=True)
    say_sources(sources, console)
    console.print(f"wrote {len(rows):,} judgments to {out} ({chosen})", markup=False)
    return Export(out, chosen, len(rows), sources)


def _check_out(
    run: str | Path, out: Path, *, dataset: str | Path | None, human: str | Path | None
) -> None:
    """Refuse (exit 2) an ``out`` that is a file the export reads (the judgments, the run's
    manifest, the dataset, the labels, an import's items) or an existing file that is not a
    jurybox export: nothing is read or written first."""
    path = judgments_path(run)
    sources = run_sources(
        path,
        dataset=Path(dataset) if dataset is not None else None,
        human=Path(human) if human is not None else None,
    )
    reads = (sources.dataset.path, sources.human.path, companion_items_path(path))
    check_target(
        out,
        inputs=(path, path.parent / MANIFEST_FILE, *reads),
        ours=is_export,
        what="a jurybox export",
    )


def load(
    run: str | Path, *, dataset: str | Path | None = None, human: str | Path | None = None
) -> pd.DataFrame:
    """``run``'s judgments as a pandas DataFrame: the table ``jurybox export`` writes."""
    import pandas as pd  # noqa: PLC0415  (pandas only when a frame is asked for)

    rows, _ = judgment_table(run, dataset=dataset, human=human)
    return pd.DataFrame(rows, columns=columns_of(rows))
